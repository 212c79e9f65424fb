import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type ClientOptions } from './client.js';
import { NetworkError, RxsApiError, ServerError } from './errors.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, parseRetryAfter, retryDelay, type RetryEvent } from './retry.js';
import type { FetchFunction } from './http.js';
import { HTTP_CLIENTS, sendJson, type TestHandler, TestServers } from './test-server.js';

const API_KEY = 'rxs_transport_test_key_12345';
const servers = new TestServers();
const serve = (handler: TestHandler) => servers.serve(handler);
afterEach(() => servers.closeAll());

/** The fetch function of the implementation under test (undefined: Node's http). */
let fetchUnderTest: FetchFunction | undefined;

function clientAt(url: string, options: Partial<ClientOptions> = {}) {
  return createClient({
    fetch: fetchUnderTest,
    techdocUrl: url,
    recordsUrl: url,
    tracerUrl: url,
    apiKey: API_KEY,
    retries: 5,
    retryBaseMs: 1,
    retryCapMs: 4,
    timeoutMs: 1000,
    ...options,
  });
}

const topic = { _id: '69b989b54252b7481003b10a', knowledge_topic_schema: { components: [] } };
const batch = { results: {} };
const node = { node_id: '69b989b54252b7481003b10a', node_type: 'Record' as const };

/** Answers with the given failures first, then `success`. */
function failThenSucceed(
  failures: ((response: Parameters<TestHandler>[1]) => void)[],
  success: (response: Parameters<TestHandler>[1]) => void,
): TestHandler {
  return (_request, response, { index }) => (failures[index] ?? success)(response);
}

const status =
  (code: number, headers: Record<string, string> = {}) =>
  (response: Parameters<TestHandler>[1]) =>
    sendJson(response, code, { detail: `failure ${code}` }, headers);
const reset = (response: Parameters<TestHandler>[1]) => void response.socket?.destroy();

describe.each(HTTP_CLIENTS)('over $name', ({ fetch }) => {
  beforeEach(() => {
    fetchUnderTest = fetch;
  });

  describe('retries', () => {
    it('a GET survives 500, 502, 503, 504, 429 and a reset, reporting each retry', async () => {
      const server = await serve(
        failThenSucceed(
          [
            status(500),
            status(502),
            status(503, { 'retry-after': '0' }),
            status(504),
            status(429, { 'retry-after': '0' }),
          ],
          (response) => sendJson(response, 200, topic),
        ),
      );
      const events: RetryEvent[] = [];
      const client = clientAt(server.url, { onRetry: (event) => events.push(event) });
      expect(await client.techdoc.getTopic(topic._id)).toEqual(topic);
      expect(server.requests).toHaveLength(6);
      expect(events.map((e) => [e.attempt, e.status])).toEqual([
        [1, 500],
        [2, 502],
        [3, 503],
        [4, 504],
        [5, 429],
      ]);
      expect(events[0]).toMatchObject({
        service: 'techdoc',
        method: 'GET',
        retries: 5,
        url: `${server.url}/kt/${topic._id}`,
      });
      expect(events[0]!.reason).toMatch(/failed to handle the request \(500\)/);
      expect(events[2]!.delayMs).toBe(0);

      const resetting = await serve(
        failThenSucceed([reset, reset], (response) => sendJson(response, 200, topic)),
      );
      expect(await clientAt(resetting.url).techdoc.getTopic(topic._id)).toEqual(topic);
      expect(resetting.requests).toHaveLength(3);
    });

    it('honours Retry-After', async () => {
      const server = await serve(
        failThenSucceed([status(503, { 'retry-after': '0.3' })], (r) => sendJson(r, 200, topic)),
      );
      const events: RetryEvent[] = [];
      const started = Date.now();
      await clientAt(server.url, { onRetry: (event) => events.push(event) }).techdoc.getTopic(topic._id);
      expect(events[0]!.delayMs).toBe(300);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    });

    it('a 429 is retried after its Retry-After, as seconds or an HTTP date, even for a write', async () => {
      const created = { ...topic, name: 'n' };
      // HTTP dates have whole seconds: this one is 1 to 2 s away.
      const date = new Date(Math.floor(Date.now() / 1000) * 1000 + 2000).toUTCString();
      const server = await serve(
        failThenSucceed([status(429, { 'retry-after': '0.2' }), status(429, { 'retry-after': date })], (r) =>
          sendJson(r, 201, created),
        ),
      );
      const events: RetryEvent[] = [];
      const started = Date.now();
      const client = clientAt(server.url, { onRetry: (event) => events.push(event) });
      await client.records.createRecord({ name: 'n', form: {}, context: {} });
      expect(server.requests.map((r) => r.method)).toEqual(['POST', 'POST', 'POST']);
      expect(events.map((e) => e.status)).toEqual([429, 429]);
      expect(events[0]!.delayMs).toBe(200);
      expect(events[1]!.delayMs).toBeGreaterThan(500);
      expect(events[1]!.delayMs).toBeLessThanOrEqual(2000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(200 + events[1]!.delayMs - 20);
    });

    it('a Retry-After beyond the cap is not waited for: the 429 is thrown with the wait it asked', async () => {
      const server = await serve((_request, response) => status(429, { 'retry-after': '120' })(response));
      const started = Date.now();
      const error = await clientAt(server.url, { maxRetryAfterMs: 60_000 })
        .techdoc.getTopic(topic._id)
        .catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(server.requests).toHaveLength(1);
      expect((error as RxsApiError).status).toBe(429);
      expect((error as RxsApiError).message).toMatch(/asked to wait 120 s/);
    });

    it('gives up after `retries` and throws the last error', async () => {
      const server = await serve((_request, response) => status(503)(response));
      const error = await clientAt(server.url, { retries: 3 })
        .techdoc.getTopic(topic._id)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServerError);
      expect((error as ServerError).status).toBe(503);
      expect(server.requests).toHaveLength(4);
    });

    it('does not retry statuses that will not change (400, 401, 403, 404, 409, 413, 422)', async () => {
      for (const code of [400, 401, 403, 404, 409, 413, 422]) {
        const server = await serve((_request, response) => status(code)(response));
        await expect(clientAt(server.url).records.getRecord(topic._id)).rejects.toBeInstanceOf(RxsApiError);
        expect(server.requests).toHaveLength(1);
      }
    });

    it('retries DELETE and the batch listing (a read), never POST or PATCH that change data', async () => {
      const calls: [string, (client: ReturnType<typeof clientAt>) => Promise<unknown>, number][] = [
        ['POST /records/', (c) => c.records.createRecord({ name: 'n', form: {}, context: {} }), 1],
        ['PATCH /records/{id}', (c) => c.records.updateRecord(topic._id, { name: 'n' }), 1],
        [
          'POST /kt/',
          (c) =>
            c.techdoc.createTopic({
              knowledge_topic_name: 'n',
              type: 'multi_record',
              knowledge_topic_schema: { components: [] },
            }),
          1,
        ],
        ['PATCH /kt/{id}', (c) => c.techdoc.updateTopic(topic._id, { knowledge_topic_name: 'n' }), 1],
        ['POST /kt/{id}/draft', (c) => c.techdoc.openDraft(topic._id), 1],
        ['POST /kt/{id}/approve', (c) => c.techdoc.approve(topic._id), 1],
        [
          'POST /traces/',
          (c) => c.tracer.createTrace({ source: node, target: node, relation_type: 'is_related' }),
          1,
        ],
        ['DELETE /records/{id}', (c) => c.records.deleteRecord(topic._id), 2],
        ['DELETE /traces/{id}', (c) => c.tracer.deleteTrace(topic._id), 2],
        ['POST /traces/batch/list', (c) => c.tracer.batchList({ nodes: [node] }), 2],
      ];
      for (const [name, run, expected] of calls) {
        for (const failure of [status(503), reset]) {
          const server = await serve(
            failThenSucceed([failure], (response) => {
              if (name.startsWith('DELETE')) return void response.writeHead(204).end();
              sendJson(response, 200, name.includes('batch') ? batch : topic);
            }),
          );
          const outcome = await run(clientAt(server.url)).then(
            () => 'ok',
            (error: unknown) => error,
          );
          expect(server.requests, name).toHaveLength(expected);
          if (expected === 1) expect(outcome, name).toBeInstanceOf(RxsApiError);
          else expect(outcome, name).toBe('ok');
        }
      }
    });

    it('an abort by the caller stops the retries at once', async () => {
      const server = await serve((_request, response) => status(503, { 'retry-after': '5' })(response));
      const controller = new AbortController();
      const reason = new Error('user cancelled');
      setTimeout(() => controller.abort(reason), 100);
      const started = Date.now();
      await expect(
        clientAt(server.url, { maxRetryAfterMs: 10_000 }).records.getRecord(topic._id, {
          signal: controller.signal,
        }),
      ).rejects.toBe(reason);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('requests', () => {
    it('joins paths under each base URL prefix and sends the key, JSON headers and user agent', async () => {
      const server = await serve((request, response) =>
        sendJson(response, 200, request.url!.includes('batch') ? batch : topic),
      );
      const client = createClient({
        techdocUrl: `${server.url}/a/techdoc/`,
        recordsUrl: `${server.url}/b`,
        tracerUrl: `${server.url}/c/tracer//`,
        apiKey: ` ${API_KEY}\n`,
        userAgent: 'rxs-cli/1.0',
      });
      await client.techdoc.getTopic('a/b c');
      await client.tracer.batchList({ nodes: [node], n_hops: 2 });
      expect(server.requests.map((r) => r.url)).toEqual([
        '/a/techdoc/kt/a%2Fb%20c',
        '/c/tracer/traces/batch/list',
      ]);
      for (const request of server.requests) {
        expect(request.headers['x-api-key']).toBe(API_KEY);
        expect(request.headers.accept).toBe('application/json');
        expect(request.headers['user-agent']).toBe('rxs-cli/1.0');
      }
      expect(JSON.parse(server.requests[1]!.body)).toEqual({ nodes: [node], n_hops: 2 });
      expect(client.servers).toEqual({
        techdoc: `${server.url}/a/techdoc`,
        records: `${server.url}/b`,
        tracer: `${server.url}/c/tracer`,
      });
    });

    it('follows a redirect on the same origin, refuses one to another origin (the key stays home)', async () => {
      const other = await serve((_request, response) => sendJson(response, 200, topic));
      const server = await serve((request, response) => {
        if (request.url === '/old/kt/x') return void response.writeHead(308, { location: '/new/kt/x' }).end();
        if (request.url === '/new/kt/x') return sendJson(response, 200, topic);
        response.writeHead(307, { location: `${other.url}/kt/x` }).end();
      });
      expect(await clientAt(`${server.url}/old`).techdoc.getTopic('x')).toEqual(topic);
      const error = await clientAt(`${server.url}/elsewhere`)
        .techdoc.getTopic('x')
        .catch((e: unknown) => e as RxsApiError);
      expect(error).toBeInstanceOf(RxsApiError);
      expect((error as RxsApiError).message).toMatch(/redirected to another origin/);
      expect(other.requests).toHaveLength(0);
    });

    it('refuses unusable options early, with messages that do not repeat the key', () => {
      const base = { techdocUrl: 'http://a', recordsUrl: 'http://b', tracerUrl: 'http://c', apiKey: API_KEY };
      expect(() => createClient({ ...base, apiKey: '' })).toThrow(/apiKey is required/);
      expect(() => createClient({ ...base, recordsUrl: 'ftp://b' })).toThrow(/recordsUrl/);
      expect(() => createClient({ ...base, tracerUrl: 'http://u:p@c' })).toThrow(/user name or password/);
      expect(() => createClient({ ...base, techdocUrl: 'not a url' })).toThrow(/techdocUrl/);
      expect(() => createClient({ ...base, traceConcurrency: Infinity })).toThrow(/never unbounded/);
      expect(() => createClient({ ...base, timeoutMs: 0 })).toThrow(/timeoutMs/);
      expect(() => createClient({ ...base, retries: -1 })).toThrow(/retries/);
    });

    it('a failing onRetry hook does not fail the call', async () => {
      const server = await serve(
        failThenSucceed([status(502)], (response) => sendJson(response, 200, topic)),
      );
      const client = clientAt(server.url, {
        onRetry: () => {
          throw new Error('logger broke');
        },
      });
      expect(await client.techdoc.getTopic(topic._id)).toEqual(topic);
    });

    it('network errors carry the code', async () => {
      const server = await serve((_request, response) => reset(response));
      const error = (await clientAt(server.url, { retries: 0 })
        .records.getRecord(topic._id)
        .catch((e: unknown) => e)) as NetworkError;
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.message).toContain(server.url);
    });
  });
});

describe('backoff', () => {
  it('full jitter: between 0 and min(cap, base * 2^n)', () => {
    const policy = { ...DEFAULT_RETRY_POLICY };
    expect([0, 1, 2, 3, 6, 10].map((n) => backoffDelay(n, policy, () => 0.999999))).toEqual([
      199, 399, 799, 1599, 9999, 9999,
    ]);
    expect(backoffDelay(5, policy, () => 0)).toBe(0);
  });

  it('Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('retries only idempotent calls, transient errors, within the budget', () => {
    const transient = new ServerError({ service: 'records', method: 'GET', url: 'u' }, { status: 503 });
    const policy = { ...DEFAULT_RETRY_POLICY, retries: 2 };
    expect(retryDelay(transient, 0, true, policy, () => 0.5)).toBe(100);
    expect(retryDelay(transient, 0, false, policy)).toBeUndefined();
    expect(retryDelay(transient, 2, true, policy)).toBeUndefined();
    expect(retryDelay(new Error('not ours'), 0, true, policy)).toBeUndefined();
  });
});
