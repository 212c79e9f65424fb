import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceRecord } from '../../contract/src/record.js';
import { createClient, type ClientOptions } from './client.js';
import {
  NetworkError,
  RecordsStreamInterrupted,
  ResponseFormatError,
  ServerError,
  TimeoutError,
} from './errors.js';
import type { JsonArrayMode } from './json-array-stream.js';
import type { RetryEvent } from './retry.js';
import {
  layouts,
  sendJson,
  testRecord,
  trickyRecords,
  write,
  type TestHandler,
  TestServers,
} from './test-server.js';

const API_KEY = 'rxs_test_key_0123456789abcdef';
const servers = new TestServers();
const serve = (handler: TestHandler) => servers.serve(handler);
afterEach(() => servers.closeAll());

/** A client whose records service is `recordsUrl`; fast retries for tests. */
function clientFor(recordsUrl: string, options: Partial<ClientOptions> = {}) {
  return createClient({
    techdocUrl: 'http://127.0.0.1:9/techdoc',
    recordsUrl,
    tracerUrl: 'http://127.0.0.1:9/tracer',
    apiKey: API_KEY,
    retries: 2,
    retryBaseMs: 1,
    retryCapMs: 5,
    timeoutMs: 2000,
    ...options,
  }).records;
}

async function collect(iterable: AsyncIterable<ServiceRecord>) {
  const items: ServiceRecord[] = [];
  try {
    for await (const item of iterable) items.push(item);
  } catch (error) {
    return { items, error: error as Error };
  }
  return { items, error: undefined };
}

const jsonHead = (response: ServerResponse) =>
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });

describe('listRecords parses every layout alike', () => {
  for (const [name, layout] of Object.entries(layouts)) {
    it(`${name}: tricky records arrive intact`, async () => {
      const server = await serve((_request, response) => {
        jsonHead(response);
        // Split the body at odd places, multi-byte characters included.
        const body = Buffer.from(layout(trickyRecords));
        for (let start = 0; start < body.length; start += 13)
          response.write(body.subarray(start, start + 13));
        response.end();
      });
      const modes: JsonArrayMode[] = [];
      const records = await clientFor(`${server.url}/rxs/records-api/`).listAllRecords(
        { context__knowledge_unit_topic_id: 'a'.repeat(24), audit_info__include_updated: true },
        { onParseMode: (mode) => modes.push(mode) },
      );
      expect(records).toEqual(trickyRecords);
      expect(modes[0]).toBe(name === 'oneLine' ? 'general' : 'lines');
      const seen = server.requests[0]!;
      expect(seen.method).toBe('GET');
      expect(seen.url).toBe(
        `/rxs/records-api/records/?context__knowledge_unit_topic_id=${'a'.repeat(24)}&audit_info__include_updated=true`,
      );
      expect(seen.headers['x-api-key']).toBe(API_KEY);
    });
  }

  it('an empty array is an empty listing, not an error', async () => {
    const server = await serve((_request, response) => sendJson(response, 200, []));
    expect(await clientFor(server.url).listAllRecords({})).toEqual([]);
  });
});

describe('listRecords with pageSize follows Link rel="next"', () => {
  const all = Array.from({ length: 7 }, (_, i) => testRecord(i));

  /** Pages by limit/after with query-only next links, as our services send them. */
  const pager: TestHandler = (request, response) => {
    const url = new URL(request.url!, 'http://x');
    const limit = Number(url.searchParams.get('limit'));
    const after = url.searchParams.get('after');
    const start = after ? all.findIndex((r) => r._id === after) + 1 : 0;
    const page = all.slice(start, start + limit);
    const headers: Record<string, string> = {};
    if (start + limit < all.length) {
      url.searchParams.set('after', String(page[page.length - 1]!._id));
      headers.link = `<?${url.searchParams.toString()}>; rel="next"`;
    }
    response.writeHead(200, { 'content-type': 'application/json', ...headers });
    response.end(layouts.lines(page));
  };

  it('reads every page, keeping the base path prefix and the filters', async () => {
    const server = await serve(pager);
    const records = await clientFor(`${server.url}/prefix`).listAllRecords(
      { context__knowledge_unit_topic_id: 'b'.repeat(24) },
      { pageSize: 3 },
    );
    expect(records).toEqual(all);
    expect(server.requests.map((r) => r.url)).toEqual([
      `/prefix/records/?context__knowledge_unit_topic_id=${'b'.repeat(24)}&limit=3`,
      `/prefix/records/?context__knowledge_unit_topic_id=${'b'.repeat(24)}&limit=3&after=${all[2]!._id}`,
      `/prefix/records/?context__knowledge_unit_topic_id=${'b'.repeat(24)}&limit=3&after=${all[5]!._id}`,
    ]);
    expect(server.requests.every((r) => r.headers['x-api-key'] === API_KEY)).toBe(true);
  });

  it('without pageSize a limit reads one page only', async () => {
    const server = await serve(pager);
    expect(await clientFor(server.url).listAllRecords({ limit: 2 })).toEqual(all.slice(0, 2));
    expect(server.requests).toHaveLength(1);
  });

  it('retries a failed page request that had not yielded anything, without repeating records', async () => {
    const server = await serve((request, response, { index }) => {
      if (index === 1) return sendJson(response, 503, { detail: 'busy' });
      return pager(request, response, { body: '', index });
    });
    expect(await clientFor(server.url).listAllRecords({}, { pageSize: 3 })).toEqual(all);
    expect(server.requests).toHaveLength(4);
  });

  it('never follows a next link to another origin (the key would go there)', async () => {
    const elsewhere = await serve((_request, response) => sendJson(response, 200, []));
    const server = await serve((_request, response) => {
      response.writeHead(200, {
        'content-type': 'application/json',
        link: `<${elsewhere.url}/records/?after=x>; rel="next"`,
      });
      response.end(layouts.lines(all.slice(0, 1)));
    });
    const { error } = await collect(clientFor(server.url).listRecords({}, { pageSize: 1 }));
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error!.message).toMatch(/another origin/);
    expect(elsewhere.requests).toHaveLength(0);
  });
});

describe('listRecords fails loudly on broken bodies', () => {
  const three = Array.from({ length: 3 }, (_, i) => testRecord(i));
  const linesOf = (items: unknown[]) => items.map((item) => JSON.stringify(item));

  it('a body without its closing ] after records: RecordsStreamInterrupted, not restarted', async () => {
    const server = await serve((_request, response) => {
      jsonHead(response);
      response.end(`[\n${linesOf(three).join(',\n')},\n`);
    });
    const retries: RetryEvent[] = [];
    const { items, error } = await collect(
      clientFor(server.url, { onRetry: (e) => retries.push(e) }).listRecords(),
    );
    expect(items).toEqual(three);
    expect(error).toBeInstanceOf(RecordsStreamInterrupted);
    const interrupted = error as RecordsStreamInterrupted;
    expect(interrupted.recordsReceived).toBe(3);
    expect(interrupted.lastId).toBe(three[2]!._id);
    expect(interrupted.cause).toBeInstanceOf(ResponseFormatError);
    expect((interrupted.cause as ResponseFormatError).truncated).toBe(true);
    expect(interrupted.message).toMatch(/only before its first record/);
    expect(interrupted.message).toContain(`after=${three[2]!._id}`);
    expect(server.requests).toHaveLength(1);
    expect(retries).toHaveLength(0);
  });

  it('a body cut before any record is retried, then reported as truncated', async () => {
    const server = await serve((_request, response) => {
      jsonHead(response);
      response.end('[\n');
    });
    const { items, error } = await collect(clientFor(server.url).listRecords());
    expect(items).toEqual([]);
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect((error as ResponseFormatError).truncated).toBe(true);
    expect(server.requests).toHaveLength(3);
  });

  it('a connection reset mid-body after records: RecordsStreamInterrupted with the network error', async () => {
    const server = await serve(async (_request, response) => {
      jsonHead(response);
      await write(response, `[\n${linesOf(three).join(',\n')},\n{"_id":"00`);
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const { items, error } = await collect(clientFor(server.url).listRecords());
    expect(items).toEqual(three);
    expect(error).toBeInstanceOf(RecordsStreamInterrupted);
    expect((error as RecordsStreamInterrupted).cause).toBeInstanceOf(NetworkError);
    expect(server.requests).toHaveLength(1);
  });

  it('a reset before the answer is retried and the listing completes', async () => {
    const server = await serve((_request, response, { index }) => {
      if (index === 0) return void response.socket?.destroy();
      jsonHead(response);
      response.end(layouts.lines(three));
    });
    const retries: RetryEvent[] = [];
    const records = await clientFor(server.url, { onRetry: (e) => retries.push(e) }).listAllRecords();
    expect(records).toEqual(three);
    expect(server.requests).toHaveLength(2);
    expect(retries).toMatchObject([{ service: 'records', method: 'GET', attempt: 1 }]);
  });

  it('corrupted JSON before any record is an error and is not retried', async () => {
    const server = await serve((_request, response) => {
      jsonHead(response);
      response.end('[\n{"_id": "x", "name": oops}\n]\n');
    });
    const { error } = await collect(clientFor(server.url).listRecords());
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect((error as ResponseFormatError).truncated).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('corrupted JSON after records: RecordsStreamInterrupted', async () => {
    const server = await serve((_request, response) => {
      jsonHead(response);
      response.end(`[\n${linesOf(three).join(',\n')},\n{"_id": ]]\n]\n`);
    });
    const { items, error } = await collect(clientFor(server.url).listRecords());
    expect(items).toEqual(three);
    expect(error).toBeInstanceOf(RecordsStreamInterrupted);
    expect(((error as RecordsStreamInterrupted).cause as ResponseFormatError).truncated).toBe(false);
  });

  it('an answer that is not an array of records is a format error', async () => {
    for (const body of ['{"detail":"oops"}', '[\n1,\n2\n]\n', '<html>proxy</html>']) {
      const server = await serve((_request, response) => {
        jsonHead(response);
        response.end(body);
      });
      const { error } = await collect(clientFor(server.url).listRecords());
      expect(error).toBeInstanceOf(ResponseFormatError);
    }
  });

  it('a server that stalls mid-body hits the idle timeout', async () => {
    const server = await serve(async (_request, response) => {
      jsonHead(response);
      await write(response, `[\n${linesOf(three).join(',\n')},\n`);
      // ...and nothing more.
    });
    const started = Date.now();
    const { items, error } = await collect(clientFor(server.url, { timeoutMs: 150 }).listRecords());
    expect(items).toEqual(three);
    expect(error).toBeInstanceOf(RecordsStreamInterrupted);
    expect((error as RecordsStreamInterrupted).cause).toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('a slow consumer is not a stalled server: the idle timeout counts only waits for data', async () => {
    const server = await serve((_request, response) => {
      jsonHead(response);
      response.end(layouts.lines(three));
    });
    const records: ServiceRecord[] = [];
    for await (const item of clientFor(server.url, { timeoutMs: 100 }).listRecords()) {
      records.push(item);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(records).toEqual(three);
  });

  it('the caller can abort; the abort is not retried nor wrapped', async () => {
    const server = await serve(async (_request, response) => {
      jsonHead(response);
      await write(response, `[\n${linesOf(three).join(',\n')},\n`);
    });
    const controller = new AbortController();
    const reason = new Error('stop');
    const { items, error } = await collect(
      (async function* () {
        for await (const item of clientFor(server.url).listRecords({}, { signal: controller.signal })) {
          yield item;
          if (item._id === three[2]!._id) setTimeout(() => controller.abort(reason), 10);
        }
      })(),
    );
    expect(items).toEqual(three);
    expect(error).toBe(reason);
    expect(server.requests).toHaveLength(1);
  });

  it('stopping early closes the connection', async () => {
    let closed = false;
    const server = await serve(async (request, response) => {
      request.socket.on('close', () => (closed = true));
      jsonHead(response);
      await write(response, '[\n');
      for (let i = 0; !closed; i++) {
        await write(response, `${i ? ',\n' : ''}${JSON.stringify(testRecord(i))}`).catch(() => undefined);
        // Let the client run between records.
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    let taken = 0;
    for await (const _ of clientFor(server.url).listRecords()) if (++taken === 100) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(true);
  });
});

describe('listRecords streams any number of records in flat memory', () => {
  it('200 000 records: the client holds about one network chunk, never the listing', async () => {
    const total = 200_000;
    const line = (i: number) => `{"_id":"${i.toString(16).padStart(24, '0')}","data":{"n":${i}}}`;
    let generated = 0;
    const server = await serve(async (_request, response) => {
      jsonHead(response);
      let chunk = '[\n';
      for (let i = 0; i < total; i++) {
        chunk += `${i ? ',\n' : ''}${line(i)}`;
        generated++;
        if (chunk.length > 16 * 1024) {
          await write(response, chunk);
          chunk = '';
        }
      }
      response.end(`${chunk}\n]\n`);
    });
    // Counts the body bytes handed to the client, to compare with the records it handed out.
    let delivered = 0;
    const countingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const counter = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          delivered += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
      return new Response(response.body!.pipeThrough(counter), response);
    };
    let consumed = 0;
    let consumedBytes = 2;
    let clientAhead = 0;
    let outOfOrder = 0;
    let generatedAtFirst = -1;
    for await (const item of clientFor(server.url, { fetch: countingFetch }).listRecords()) {
      if (consumed === 0) generatedAtFirst = generated;
      if ((item.data as { n: number }).n !== consumed) outOfOrder++;
      consumedBytes += line(consumed).length + 2;
      consumed++;
      clientAhead = Math.max(clientAhead, delivered - consumedBytes);
      // The consumer takes its time now and then; the server has to wait for it.
      if (consumed % 20_000 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(consumed).toBe(total);
    expect(outOfOrder).toBe(0);
    // The first record was handed out before the server had generated them all (socket buffers
    // hold a few MB; the client itself does not collect the body)...
    expect(generatedAtFirst).toBeLessThan(total);
    // ...and the client read at most about one network chunk beyond the record it handed out.
    expect(clientAhead).toBeLessThan(256 * 1024);
  });
});

describe('record calls', () => {
  const one = testRecord(1);

  it('get, create (201), update and delete (204) address the records service with the key', async () => {
    const server = await serve((request, response) => {
      if (request.method === 'DELETE') {
        response.writeHead(204);
        return void response.end();
      }
      sendJson(response, request.method === 'POST' ? 201 : 200, one);
    });
    const records = clientFor(`${server.url}/api/`);
    const create = { name: 'r', form: {}, context: { knowledge_unit_topic_id: 'c'.repeat(24) } };
    expect(await records.getRecord(String(one._id))).toEqual(one);
    expect(await records.createRecord(create)).toEqual(one);
    expect(await records.updateRecord(String(one._id), { name: 'new' })).toEqual(one);
    expect(await records.deleteRecord(String(one._id))).toBeUndefined();
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET /api/records/${one._id}`,
      'POST /api/records/',
      `PATCH /api/records/${one._id}`,
      `DELETE /api/records/${one._id}`,
    ]);
    expect(JSON.parse(server.requests[1]!.body)).toEqual(create);
    expect(server.requests[1]!.headers['content-type']).toBe('application/json');
    expect(server.requests.every((r) => r.headers['x-api-key'] === API_KEY)).toBe(true);
  });

  it('never retries POST or PATCH, but retries GET and DELETE', async () => {
    const failedOnce = new Set<string>();
    const server = await serve((request, response) => {
      // The first request of each method fails.
      if (!failedOnce.has(request.method!)) {
        failedOnce.add(request.method!);
        return sendJson(response, 503, { detail: 'Service unavailable' });
      }
      if (request.method === 'DELETE') return void response.writeHead(204).end();
      sendJson(response, 200, one);
    });
    const records = clientFor(server.url);
    await expect(records.createRecord({ name: 'r', form: {}, context: {} })).rejects.toBeInstanceOf(
      ServerError,
    );
    expect(server.requests).toHaveLength(1);
    server.requests.length = 0;
    await expect(records.updateRecord('x', { name: 'n' })).rejects.toBeInstanceOf(ServerError);
    expect(server.requests).toHaveLength(1);
    server.requests.length = 0;
    expect(await records.getRecord('x')).toEqual(one);
    expect(server.requests).toHaveLength(2);
    server.requests.length = 0;
    await records.deleteRecord('x');
    expect(server.requests).toHaveLength(2);
  });

  it('a connection reset on POST is not retried either', async () => {
    const server = await serve((_request, response) => void response.socket?.destroy());
    await expect(
      clientFor(server.url).createRecord({ name: 'r', form: {}, context: {} }),
    ).rejects.toBeInstanceOf(NetworkError);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses ids that would address another resource', async () => {
    const records = clientFor('http://127.0.0.1:9');
    await expect(records.getRecord('')).rejects.toBeInstanceOf(TypeError);
    await expect(records.deleteRecord('..')).rejects.toBeInstanceOf(TypeError);
  });
});

describe('recordChanges', () => {
  it('an answer that is not a page of changes (another API, a proxy page) is a format error, not a page', async () => {
    for (const body of [
      { records: [], removed: [] },
      { cursor: 'c', records: {}, removed: [] },
      { cursor: 'c', records: [] },
      [{ _id: 'x' }],
    ]) {
      const server = await serve((_request, response) => sendJson(response, 200, body));
      const error = await clientFor(server.url)
        .recordChanges('a'.repeat(24), { since: 'c' })
        .catch((e: unknown) => e);
      expect(error, JSON.stringify(body)).toBeInstanceOf(ResponseFormatError);
      expect((error as Error).message).toMatch(/page of record changes.*"cursor", "records" and "removed"/);
    }
  });

  it('sends the revision, the cursor and the page size, and hands the page back as the service wrote it', async () => {
    const page = {
      revision_id: 'r',
      superseded_by: null,
      cursor: 'next',
      more: false,
      complete: false,
      records: [testRecord(1)],
      removed: ['b'.repeat(24)],
    };
    const server = await serve((_request, response) => sendJson(response, 200, page));
    expect(await clientFor(server.url).recordChanges('a'.repeat(24), { since: 'c 1/2', limit: 5 })).toEqual(
      page,
    );
    expect(server.requests[0]!.url).toBe(
      `/records/changes?context__knowledge_unit_topic_id=${'a'.repeat(24)}&since=c+1%2F2&limit=5`,
    );
  });
});
