import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from './client.js';
import { RecordDeletedSinceError, ResponseFormatError, ServerError, ValidationError } from './errors.js';
import { sendJson, TestServers, type TestHandler } from './test-server.js';

const servers = new TestServers();
const serve = (handler: TestHandler) => servers.serve(handler);
afterEach(() => servers.closeAll());

const records = (url: string) =>
  createClient({
    techdocUrl: 'http://127.0.0.1:9/techdoc',
    recordsUrl: url,
    tracerUrl: 'http://127.0.0.1:9/tracer',
    apiKey: 'rxs_test_key_0123456789abcdef',
    retries: 2,
    retryBaseMs: 1,
    retryCapMs: 5,
  }).records;

const items = [
  { name: 'a', form: {}, context: { knowledge_unit_topic_id: 'c'.repeat(24) } },
  { _id: 'd'.repeat(24), version: '1.0', name: 'b', idempotency_key: 'row-2' },
];
const answer = {
  records: [
    { _id: 'e'.repeat(24), version: '1.0', created: true, replayed: false },
    { _id: 'd'.repeat(24), version: '2.0', created: false, replayed: true },
  ],
};

describe('records.bulkWrite', () => {
  it('posts the items to /records/bulk with the key, and answers the results in order', async () => {
    const server = await serve((_request, response) => sendJson(response, 200, answer));
    expect(await records(`${server.url}/api/`).bulkWrite(items, { idempotencyKey: 'batch-1' })).toEqual(
      answer,
    );
    const [sent] = server.requests;
    expect(`${sent!.method} ${sent!.url}`).toBe('POST /api/records/bulk');
    expect(JSON.parse(sent!.body)).toEqual({ records: items });
    expect(sent!.headers['idempotency-key']).toBe('batch-1');
  });

  it('is retried only with a key, as the other writes', async () => {
    // The first attempt of each call fails.
    const server = await serve((_request, response, { index }) =>
      index < 2 ? sendJson(response, 503, { detail: 'busy' }) : sendJson(response, 200, answer),
    );
    await expect(records(server.url).bulkWrite(items)).rejects.toBeInstanceOf(ServerError);
    expect(await records(server.url).bulkWrite(items, { idempotencyKey: 'batch-1' })).toEqual(answer);
    expect(server.requests).toHaveLength(3);
  });

  it('a refused item is a ValidationError naming it; a repeat whose records were deleted, RecordDeletedSinceError', async () => {
    const problem = { loc: ['body', 'records', 1], msg: 'Record d… is read-only.', type: 'conflict' };
    let calls = 0;
    const server = await serve((_request, response) =>
      calls++ === 0
        ? sendJson(response, 422, { detail: [problem] })
        : calls === 2
          ? sendJson(response, 410, { detail: 'Record d… (item 1) … was deleted since' })
          : sendJson(response, 200, { results: [] }),
    );
    const refused = await records(server.url)
      .bulkWrite(items)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).items).toEqual([problem]);
    const gone = await records(server.url)
      .bulkWrite(items, { idempotencyKey: 'batch-1' })
      .catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(RecordDeletedSinceError);
    expect((gone as RecordDeletedSinceError).idempotencyKey).toBe('batch-1');
    await expect(records(server.url).bulkWrite(items)).rejects.toBeInstanceOf(ResponseFormatError);
  });
});
