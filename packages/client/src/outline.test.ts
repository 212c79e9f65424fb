import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from './client.js';
import { NotFoundError, ResponseFormatError, ValidationError } from './errors.js';
import { sendJson, TestServers } from './test-server.js';

const servers = new TestServers();
afterEach(() => servers.closeAll());

const TOPIC = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const ENTRIES = [
  { record_id: '0123456789abcdef01234567', level: 1 },
  { record_id: '0123456789abcdef01234568', level: 2 },
];
const OUTLINE = { knowledge_topic_history_id: TOPIC, entries: ENTRIES, updated_at: null, updated_by: null };

function recordsAt(url: string) {
  return createClient({
    techdocUrl: `${url}/td`,
    recordsUrl: `${url}/rec`,
    tracerUrl: `${url}/tr`,
    apiKey: 'rxs_outline_key_1234',
    retries: 2,
    retryBaseMs: 1,
    retryCapMs: 2,
  }).records;
}

/** The records client's outline methods: where they go, what they send, what they make of the answer. */
describe('a topic outline through the records client', () => {
  it('reads and puts the outline at the records base, by the topic history id', async () => {
    const server = await servers.serve((_request, response) => sendJson(response, 200, OUTLINE));
    const records = recordsAt(server.url);
    expect(await records.getOutline(TOPIC)).toEqual(OUTLINE);
    expect(await records.putOutline(TOPIC, ENTRIES)).toEqual(OUTLINE);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET /rec/records/outline/${TOPIC}`,
      `PUT /rec/records/outline/${TOPIC}`,
    ]);
    expect(JSON.parse(server.requests[1]!.body)).toEqual({ entries: ENTRIES });
  });

  it('retries a put the server failed: the same outline again changes nothing', async () => {
    const server = await servers.serve((_request, response, { index }) =>
      index === 0 ? sendJson(response, 503, { detail: 'busy' }) : sendJson(response, 200, OUTLINE),
    );
    expect(await recordsAt(server.url).putOutline(TOPIC, ENTRIES)).toEqual(OUTLINE);
    expect(server.requests.map((r) => r.method)).toEqual(['PUT', 'PUT']);
  });

  it('answers the service’s refusals as typed errors, and refuses an answer that is no outline', async () => {
    const problems = [
      { loc: ['body', 'entries', 1, 'level'], msg: 'Level 3 follows level 1', type: 'value_error' },
    ];
    const server = await servers.serve((request, response) =>
      request.method === 'PUT'
        ? sendJson(response, 422, { detail: problems })
        : request.url!.endsWith(TOPIC)
          ? sendJson(response, 200, { entries: {} })
          : sendJson(response, 404, { detail: 'Not Found' }),
    );
    const records = recordsAt(server.url);
    const refused = await records.putOutline(TOPIC, ENTRIES).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).detail).toEqual(problems);
    await expect(records.getOutline('bbbbbbbbbbbbbbbbbbbbbbbb')).rejects.toBeInstanceOf(NotFoundError);
    await expect(records.getOutline(TOPIC)).rejects.toBeInstanceOf(ResponseFormatError);
    await expect(records.getOutline('..')).rejects.toThrow(TypeError);
  });
});
