import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type ClientOptions } from './client.js';
import {
  ConflictError,
  errorForStatus,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RecordDeletedSinceError,
  RecordsStreamInterrupted,
  keyedWriteError,
  ResponseFormatError,
  RxsApiError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
  UnexpectedStatusError,
  ValidationError,
} from './errors.js';
import type { RetryEvent } from './retry.js';
import type { FetchFunction } from './http.js';
import { HTTP_CLIENTS, sendJson, type TestHandler, TestServers } from './test-server.js';

const API_KEY = 'rxs_SECRET_key_4f9c2a7e81b3d6';
const servers = new TestServers();
const serve = (handler: TestHandler) => servers.serve(handler);
afterEach(() => servers.closeAll());

/** The fetch function of the implementation under test (undefined: Node's http). */
let fetchUnderTest: FetchFunction | undefined;

function clientAt(url: string, options: Partial<ClientOptions> = {}) {
  return createClient({
    fetch: fetchUnderTest,
    techdocUrl: `${url}/techdoc`,
    recordsUrl: `${url}/records-service`,
    tracerUrl: `${url}/tracer`,
    apiKey: API_KEY,
    retries: 1,
    retryBaseMs: 1,
    retryCapMs: 2,
    timeoutMs: 1000,
    ...options,
  });
}

/** The rejection of `promise`. */
async function rejection(promise: Promise<unknown>): Promise<RxsApiError> {
  try {
    await promise;
  } catch (error) {
    return error as RxsApiError;
  }
  throw new Error('expected a rejection');
}

/** Everything an error could show: message, stack, fields, JSON. */
function everythingShown(error: Error): string {
  return [
    String(error),
    error.stack ?? '',
    JSON.stringify(error),
    JSON.stringify({ ...error }),
    String(error.cause ?? ''),
  ].join('\n');
}

const revisionId = '69b989b54252b7481003b10a';

describe.each(HTTP_CLIENTS)('over $name', ({ fetch }) => {
  beforeEach(() => {
    fetchUnderTest = fetch;
  });

  describe('error statuses become typed errors that say what to do', () => {
    it('401: UnauthorizedError with the regeneration advice', async () => {
      const server = await serve((_request, response) =>
        sendJson(response, 401, { detail: 'Invalid or expired API key.' }),
      );
      const error = await rejection(clientAt(server.url).techdoc.getTopic(revisionId));
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toBeInstanceOf(RxsApiError);
      expect(error.message).toContain(
        'The API key was refused (missing, invalid, expired or revoked). Check the X-API-Key header; in Settings → API keys, regenerate an expired key, or create a new one for a revoked key.',
      );
      expect(error.message).toContain('Invalid or expired API key.');
      expect(error).toMatchObject({
        status: 401,
        method: 'GET',
        service: 'techdoc',
        url: `${server.url}/techdoc/kt/${revisionId}`,
        detail: 'Invalid or expired API key.',
      });
      expect(server.requests).toHaveLength(1);
    });

    it("403: ForbiddenError pointing at the user's role and permissions", async () => {
      const server = await serve((_request, response) =>
        sendJson(response, 403, { detail: 'Your role "viewer" lacks the permission records:write.' }),
      );
      const error = await rejection(
        clientAt(server.url).records.createRecord({ name: 'x', form: {}, context: {} }),
      );
      expect(error).toBeInstanceOf(ForbiddenError);
      expect(error.message).toMatch(/role and permissions/);
      expect(error.message).toContain('records:write');
      expect(error).toMatchObject({ status: 403, method: 'POST', service: 'records' });
    });

    it('404: NotFoundError naming the history/revision mix-up and the server detail', async () => {
      const detail = `${revisionId} is the history id of a knowledge topic, not a revision id. Use its current revision id 69b989b54252b7481003b10b.`;
      const server = await serve((_request, response) => sendJson(response, 404, { detail }));
      const error = await rejection(clientAt(server.url).techdoc.getTopic(revisionId));
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error.message).toMatch(
        /history id may have been used where a revision id is expected, or the reverse/,
      );
      expect(error.message).toContain('69b989b54252b7481003b10b');
      expect(error.detail).toBe(detail);
    });

    it('422: ValidationError with its items, one readable line each', async () => {
      const detail = [
        { loc: ['body', 'data', 'priority'], msg: 'Field required', type: 'missing' },
        { loc: ['body', 'data', 'items', 2, 'qty'], msg: 'Must be at most 10', type: 'less_than_equal' },
      ];
      const server = await serve((_request, response) => sendJson(response, 422, { detail }));
      const error = await rejection(
        clientAt(server.url).records.createRecord({ name: 'x', form: {}, context: {} }),
      );
      expect(error).toBeInstanceOf(ValidationError);
      const validation = error as ValidationError;
      expect(validation.items).toEqual(detail);
      expect(validation.message).toContain('\n  - body.data.priority: Field required (missing)');
      expect(validation.message).toContain(
        '\n  - body.data.items.2.qty: Must be at most 10 (less_than_equal)',
      );
    });

    it('422 with a sentence still reads as one item', async () => {
      const server = await serve((_request, response) =>
        sendJson(response, 422, { detail: 'Batch too large' }),
      );
      const error = (await rejection(
        clientAt(server.url).tracer.batchList({ nodes: [] }),
      )) as ValidationError;
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.items).toEqual([{ loc: [], msg: 'Batch too large', type: 'invalid' }]);
    });

    it.each([
      [409, ConflictError, /current state/],
      [413, PayloadTooLargeError, /Send less per request/],
      [400, UnexpectedStatusError, /refused the request \(400\)/],
    ] as const)('%i: %o', async (status, type, advice) => {
      const server = await serve((_request, response) =>
        sendJson(response, status, { detail: 'Server says no.' }),
      );
      const error = await rejection(
        clientAt(server.url).techdoc.updateTopic(revisionId, { knowledge_topic_name: 'x' }),
      );
      expect(error).toBeInstanceOf(type);
      expect(error.message).toMatch(advice);
      expect(error.message).toContain('Server says no.');
      expect(error.status).toBe(status);
    });

    it('5xx after the retries: ServerError; 429: RateLimitedError with the asked wait', async () => {
      const failing = await serve((_request, response) => sendJson(response, 500, { detail: 'boom' }));
      const error = await rejection(clientAt(failing.url).records.getRecord(revisionId));
      expect(error).toBeInstanceOf(ServerError);
      expect(failing.requests).toHaveLength(2);
      const limited = await serve((_request, response) =>
        sendJson(response, 429, { detail: 'slow down' }, { 'retry-after': '120' }),
      );
      const rate = await rejection(clientAt(limited.url).records.getRecord(revisionId));
      expect(rate).toBeInstanceOf(RateLimitedError);
      expect(rate.retryAfterMs).toBe(120_000);
      expect(rate.message).toContain('120 s');
      // A longer wait than maxRetryAfterMs is not waited for.
      expect(limited.requests).toHaveLength(1);
    });

    it('an error body that is not JSON still gives the status and an excerpt', async () => {
      const server = await serve((_request, response) => {
        response.writeHead(502, { 'content-type': 'text/html' });
        response.end('<html>\n<body>Bad   gateway</body></html>');
      });
      const error = await rejection(clientAt(server.url, { retries: 0 }).records.getRecord(revisionId));
      expect(error).toBeInstanceOf(ServerError);
      expect(error.detail).toBe('<html> <body>Bad gateway</body></html>');
    });

    it('a success whose body is not JSON is a ResponseFormatError', async () => {
      const server = await serve((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end('<!DOCTYPE html><html>login page</html>');
      });
      const error = await rejection(clientAt(server.url).techdoc.getTopic(revisionId));
      expect(error).toBeInstanceOf(ResponseFormatError);
      expect(error.message).toMatch(/is not JSON/);
      expect(error.message).toMatch(/base URL points at the RXS service/);
      expect(server.requests).toHaveLength(1);
    });

    it('a success of the wrong shape is a ResponseFormatError', async () => {
      const server = await serve((_request, response) => sendJson(response, 200, [{ not: 'a topic' }]));
      const error = await rejection(clientAt(server.url).techdoc.getTopic(revisionId));
      expect(error).toBeInstanceOf(ResponseFormatError);
      expect(error.message).toMatch(/not a knowledge topic revision/);
    });

    it('connection refused: NetworkError naming the unreachable address and what to check', async () => {
      const closed = await serve(() => undefined);
      const url = closed.url;
      await closed.close();
      const retries: RetryEvent[] = [];
      const error = await rejection(
        clientAt(url, { retries: 2, onRetry: (event) => retries.push(event) }).records.getRecord(revisionId),
      );
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.code).toBe('RXS_ERR_NETWORK');
      expect((error as NetworkError).systemCode).toBe('ECONNREFUSED');
      expect(error.status).toBeUndefined();
      expect(error.message).toContain(`Could not reach the records service at ${url}`);
      expect(error.message).toMatch(/connection refused/);
      expect(error.message).toMatch(/Check the records URL and that the service is running/);
      expect(retries).toHaveLength(2);
    });

    it('DNS failure: NetworkError', async () => {
      const error = await rejection(
        clientAt('http://rxs-host-that-does-not-exist.invalid', { retries: 0 }).tracer.getTrace(revisionId),
      );
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.message).toContain('rxs-host-that-does-not-exist.invalid');
    });

    it('no answer in time: TimeoutError, retried for reads', async () => {
      const server = await serve(() => undefined);
      const error = await rejection(
        clientAt(server.url, { timeoutMs: 100, retries: 1 }).techdoc.getTopic(revisionId),
      );
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.code).toBe('RXS_ERR_TIMEOUT');
      expect(error.message).toContain(`No answer from the techdoc service at ${server.url} within 0.1 s`);
      expect(server.requests).toHaveLength(2);
    });
  });

  describe('the API key never appears in errors', () => {
    const echo: TestHandler = (request, response) => {
      const key = String(request.headers['x-api-key']);
      const path = request.url ?? '';
      if (path.includes('/kt/')) return sendJson(response, 401, { detail: `The key ${key} is unknown.` });
      if (path.includes('/records/')) {
        return sendJson(response, 422, {
          detail: [{ loc: ['header', key], msg: `bad key ${key}`, type: key }],
        });
      }
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(`key=${encodeURIComponent(key)} crashed ${key}`);
    };

    it('not even when the server echoes it back', async () => {
      const server = await serve(echo);
      const retries: RetryEvent[] = [];
      const client = clientAt(server.url, { onRetry: (event) => retries.push(event) });
      const errors = await Promise.all([
        rejection(client.techdoc.getTopic(revisionId)),
        rejection(client.records.createRecord({ name: 'x', form: {}, context: {} })),
        rejection(client.tracer.getTrace(revisionId)),
      ]);
      expect(errors.map((e) => e.constructor)).toEqual([UnauthorizedError, ValidationError, ServerError]);
      expect(retries.length).toBeGreaterThan(0);
      for (const error of errors) {
        expect(everythingShown(error)).not.toContain(API_KEY);
        expect(JSON.stringify(error.detail)).not.toContain(API_KEY);
      }
      expect(JSON.stringify(retries)).not.toContain(API_KEY);
      expect(errors[0]!.message).toContain('The key [redacted] is unknown.');
    });

    it('nor in network errors, timeouts or streamed listings', async () => {
      const stalled = await serve(() => undefined);
      const closed = await serve(() => undefined);
      const closedUrl = closed.url;
      await closed.close();
      const cut = await serve((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(`[\n{"_id":"0001","name":"${API_KEY}"},\n{"name":"${API_KEY}`);
      });
      const trailing = await serve((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(`[\n{"_id":"0001"}\n]\n${API_KEY}\n`);
      });
      const errors = await Promise.all([
        rejection(clientAt(stalled.url, { timeoutMs: 50 }).records.getRecord(revisionId)),
        rejection(clientAt(closedUrl).records.getRecord(revisionId)),
        rejection(clientAt(cut.url).records.listAllRecords()),
        rejection(clientAt(trailing.url).records.listAllRecords()),
      ]);
      for (const error of errors) {
        expect(error).toBeInstanceOf(RxsApiError);
        expect(everythingShown(error)).not.toContain(API_KEY);
      }
    });

    it('a key that cannot be sent is refused without being repeated', () => {
      const bad = `${API_KEY}\nX-Other: 1`;
      let caught: Error | undefined;
      try {
        createClient({ techdocUrl: 'http://a', recordsUrl: 'http://b', tracerUrl: 'http://c', apiKey: bad });
      } catch (error) {
        caught = error as Error;
      }
      expect(caught).toBeInstanceOf(TypeError);
      expect(caught!.message).not.toContain(API_KEY);
    });
  });
});

describe('error codes', () => {
  const request = { service: 'records', method: 'PUT', url: 'https://rxs.example/records/r1' } as const;

  it.each([
    [401, UnauthorizedError, 'RXS_ERR_UNAUTHORIZED'],
    [403, ForbiddenError, 'RXS_ERR_FORBIDDEN'],
    [404, NotFoundError, 'RXS_ERR_NOT_FOUND'],
    [409, ConflictError, 'RXS_ERR_CONFLICT'],
    [413, PayloadTooLargeError, 'RXS_ERR_PAYLOAD_TOO_LARGE'],
    [422, ValidationError, 'RXS_ERR_VALIDATION'],
    [429, RateLimitedError, 'RXS_ERR_RATE_LIMITED'],
    [500, ServerError, 'RXS_ERR_SERVER'],
    [503, ServerError, 'RXS_ERR_SERVER'],
    [400, UnexpectedStatusError, 'RXS_ERR_UNEXPECTED_STATUS'],
    [410, UnexpectedStatusError, 'RXS_ERR_UNEXPECTED_STATUS'],
  ] as const)('%i: %o with code %s', (status, type, code) => {
    const error = errorForStatus(request, { status, detail: 'Server says no.' });
    expect(error).toBeInstanceOf(type);
    expect(error).toBeInstanceOf(RxsApiError);
    expect(error.code).toBe(code);
    expect(error.name).toBe(type.name);
    expect(error.status).toBe(status);
  });

  it('an error built directly has its status message and code, as one built from an answer', () => {
    const direct = new ServerError(request, { status: 503, detail: 'down' });
    expect(direct.message).toBe(errorForStatus(request, { status: 503, detail: 'down' }).message);
    expect(direct.message).toBe(
      "The records service failed to handle the request (503). Try again later; if it persists, the operator can find the cause in the server's logs. Server: down (records service: PUT https://rxs.example/records/r1 → 503)",
    );
    expect(direct.code).toBe('RXS_ERR_SERVER');
  });

  it('the errors not made from a status have their own codes', () => {
    const answer = errorForStatus(request, { status: 410, detail: 'deleted' });
    const deleted = keyedWriteError(answer, 'key-1') as RecordDeletedSinceError;
    expect(deleted).toBeInstanceOf(RecordDeletedSinceError);
    expect(deleted.code).toBe('RXS_ERR_RECORD_DELETED_SINCE');
    expect(new ResponseFormatError('is not JSON', request, 200, false).code).toBe('RXS_ERR_RESPONSE_FORMAT');
    expect(new RecordsStreamInterrupted(answer, 3, 'r3').code).toBe('RXS_ERR_RECORDS_STREAM_INTERRUPTED');
    expect(new NetworkError('refused', request, 'ECONNREFUSED').code).toBe('RXS_ERR_NETWORK');
    expect(new TimeoutError('no answer', request, 100)).toMatchObject({
      code: 'RXS_ERR_TIMEOUT',
      systemCode: 'ETIMEDOUT',
    });
    expect(new RxsApiError('redirected', request).code).toBe('RXS_ERR_API');
  });
});
