import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from './client.js';
import { ConflictError, ResponseFormatError } from './errors.js';
import { sendJson, TestServers } from './test-server.js';

const servers = new TestServers();
afterEach(() => servers.closeAll());

const MODEL = { version: 3, roles: [], updated_at: null, updated_by: null };

function tracerAt(url: string) {
  return createClient({
    techdocUrl: url,
    recordsUrl: url,
    tracerUrl: `${url}/tr`,
    apiKey: 'rxs_tracer_key_1234',
    retries: 2,
    retryBaseMs: 1,
    retryCapMs: 2,
  }).tracer;
}

/** The tracer's trace model methods: where they go, what they send, what they make of the answer. */
describe('the trace model through the tracer client', () => {
  it('reads the model and its history at the tracer base', async () => {
    const server = await servers.serve((request, response) =>
      sendJson(response, 200, request.url!.includes('history') ? [] : MODEL),
    );
    const tracer = tracerAt(server.url);
    expect(await tracer.getTraceModel()).toEqual(MODEL);
    expect(await tracer.traceModelHistory({ limit: 5, before: 3 })).toEqual([]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /tr/trace-model',
      'GET /tr/trace-model/history?limit=5&before=3',
    ]);
  });

  it('puts the whole model once, never retried; a stale version is a ConflictError', async () => {
    const server = await servers.serve((_request, response) =>
      sendJson(response, 409, { detail: 'The trace model is at version 4, not 3.' }),
    );
    const put = tracerAt(server.url).putTraceModel({ version: 3, roles: [] });
    await expect(put).rejects.toBeInstanceOf(ConflictError);
    await expect(put).rejects.toThrow('The trace model is at version 4, not 3.');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ method: 'PUT', url: '/tr/trace-model' });
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ version: 3, roles: [] });
  });

  it('refuses an answer that is no trace model', async () => {
    const server = await servers.serve((_request, response) => sendJson(response, 200, { roles: {} }));
    await expect(tracerAt(server.url).getTraceModel()).rejects.toBeInstanceOf(ResponseFormatError);
  });
});
