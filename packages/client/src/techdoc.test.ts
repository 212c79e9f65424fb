import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from './client.js';
import { ResponseFormatError } from './errors.js';
import { sendJson, type TestHandler, TestServers } from './test-server.js';

const API_KEY = 'rxs_techdoc_test_key_98765';
const servers = new TestServers();
const serve = (handler: TestHandler) => servers.serve(handler);
afterEach(() => servers.closeAll());

const id = (n: number) => n.toString(16).padStart(24, '0');
const revision = (n: number) => ({
  _id: id(n),
  knowledge_topic_name: `Topic ${n}`,
  knowledge_topic_schema: { components: [] },
});

describe('techdoc', () => {
  it('each call uses its method, path under the prefix, status and body', async () => {
    const server = await serve((request, response) => {
      const created = request.method === 'POST' && !request.url!.endsWith('/approve');
      sendJson(response, created ? 201 : 200, revision(1));
    });
    const techdoc = createClient({
      techdocUrl: `${server.url}/api/techdoc`,
      recordsUrl: 'http://127.0.0.1:9',
      tracerUrl: 'http://127.0.0.1:9',
      apiKey: API_KEY,
    }).techdoc;
    const body = {
      knowledge_topic_name: 'T',
      type: 'multi_record' as const,
      knowledge_topic_schema: { components: [] },
    };
    expect(await techdoc.getTopic(id(1))).toEqual(revision(1));
    expect(await techdoc.createTopic(body)).toEqual(revision(1));
    expect(await techdoc.updateTopic(id(1), { knowledge_topic_name: 'U' })).toEqual(revision(1));
    expect(await techdoc.openDraft(id(1))).toEqual(revision(1));
    expect(await techdoc.approve(id(1))).toEqual(revision(1));
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET /api/techdoc/kt/${id(1)}`,
      'POST /api/techdoc/kt/',
      `PATCH /api/techdoc/kt/${id(1)}`,
      `POST /api/techdoc/kt/${id(1)}/draft`,
      `POST /api/techdoc/kt/${id(1)}/approve`,
    ]);
    expect(JSON.parse(server.requests[1]!.body)).toEqual(body);
    expect(JSON.parse(server.requests[2]!.body)).toEqual({ knowledge_topic_name: 'U' });
    expect(server.requests.every((r) => r.headers['x-api-key'] === API_KEY)).toBe(true);
  });

  it('listTopics reads one page; iterateTopics follows Link rel="next" through all of them', async () => {
    const all = Array.from({ length: 5 }, (_, i) => revision(i + 1));
    const server = await serve((request, response) => {
      const url = new URL(request.url!, 'http://x');
      const limit = Number(url.searchParams.get('limit') ?? 2);
      const after = url.searchParams.get('after');
      const start = after ? all.findIndex((t) => t._id === after) + 1 : 0;
      const page = all.slice(start, start + limit);
      const headers: Record<string, string> = {};
      if (start + limit < all.length) {
        url.searchParams.set('after', page[page.length - 1]!._id);
        // Another relation first, and an unquoted rel: both allowed by RFC 8288.
        headers.link = `<?first>; rel=first, <?${url.searchParams.toString()}>; rel="next"`;
      }
      sendJson(response, 200, page, headers);
    });
    const techdoc = createClient({
      techdocUrl: `${server.url}/td`,
      recordsUrl: 'http://127.0.0.1:9',
      tracerUrl: 'http://127.0.0.1:9',
      apiKey: API_KEY,
    }).techdoc;
    expect(await techdoc.listTopics({ status: 'approved', name: 'Sys req' })).toEqual(all.slice(0, 2));
    expect(server.requests[0]!.url).toBe('/td/kt/?status=approved&name=Sys+req');
    server.requests.length = 0;
    const seen = [];
    for await (const topic of techdoc.iterateTopics({ knowledge_topic_history_id: id(9), limit: 2 }))
      seen.push(topic);
    expect(seen).toEqual(all);
    expect(server.requests.map((r) => r.url)).toEqual([
      `/td/kt/?knowledge_topic_history_id=${id(9)}&limit=2`,
      `/td/kt/?knowledge_topic_history_id=${id(9)}&limit=2&after=${id(2)}`,
      `/td/kt/?knowledge_topic_history_id=${id(9)}&limit=2&after=${id(4)}`,
    ]);
  });

  it('a next link pointing at the same page is refused instead of looping', async () => {
    const server = await serve((request, response) =>
      sendJson(response, 200, [revision(1)], { link: `<${request.url}>; rel="next"` }),
    );
    const techdoc = createClient({
      techdocUrl: server.url,
      recordsUrl: server.url,
      tracerUrl: server.url,
      apiKey: API_KEY,
    }).techdoc;
    const iterate = async () => {
      for await (const _ of techdoc.iterateTopics()) void _;
    };
    await expect(iterate()).rejects.toBeInstanceOf(ResponseFormatError);
  });

  it('the three services are reached at their own addresses', async () => {
    const [techdocServer, recordsServer, tracerServer] = await Promise.all([
      serve((_request, response) => sendJson(response, 200, revision(1))),
      serve((_request, response) => sendJson(response, 200, [])),
      serve((_request, response) => sendJson(response, 200, { results: {} })),
    ]);
    const client = createClient({
      techdocUrl: techdocServer.url,
      recordsUrl: `${recordsServer.url}/r`,
      tracerUrl: `${tracerServer.url}/t`,
      apiKey: API_KEY,
    });
    await client.techdoc.getTopic(id(1));
    await client.records.listAllRecords({ context__knowledge_unit_topic_id: id(1) });
    await client.tracer.batchList({ nodes: [{ node_id: id(2), node_type: 'Record' }] });
    expect(techdocServer.requests.map((r) => r.url)).toEqual([`/kt/${id(1)}`]);
    expect(recordsServer.requests.map((r) => r.url)).toEqual([
      `/r/records/?context__knowledge_unit_topic_id=${id(1)}`,
    ]);
    expect(tracerServer.requests.map((r) => r.url)).toEqual(['/t/traces/batch/list']);
  });

  it('an empty id is refused: it would list topics instead', async () => {
    const techdoc = createClient({
      techdocUrl: 'http://127.0.0.1:9',
      recordsUrl: 'http://127.0.0.1:9',
      tracerUrl: 'http://127.0.0.1:9',
      apiKey: API_KEY,
    }).techdoc;
    await expect(techdoc.getTopic('')).rejects.toThrow(/non-empty id/);
    await expect(techdoc.approve(' ')).rejects.toBeInstanceOf(TypeError);
  });
});
