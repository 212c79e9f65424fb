import { TRACE_BATCH_MAX_EDGES, TRACE_BATCH_TOO_LARGE } from '@rxs/contract';
import { createClient } from '@rxs/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

// One viewer request to the batch listing must not freeze the server for everyone.
describe('tracer: the batch listing is bounded and never blocks the server', () => {
  const HUB_TRACES = 400;
  let t: TestServer;
  let hub: string;
  let documents: string[];
  const document = (i: number) => `DOC-${String(i).padStart(5, '0')}`;
  const asNode = (id: string) => ({ node_id: id, node_type: 'Document', version: '1' });

  beforeAll(async () => {
    t = await startTestServer();
    // TC-004 has no traces of its own in the demo.
    hub = t.demo.tenant.topics.verificationTests!.recordIds[3]!;
    // 400 traces from one record to made-up Document ids: a hub that makes 2-hop answers large.
    documents = Array.from({ length: HUB_TRACES }, (_, i) => document(i));
    for (let i = 0; i < documents.length; i += 10) {
      const created = await Promise.all(
        documents.slice(i, i + 10).map((id) =>
          t.api('POST', '/traces/', {
            body: {
              source: { node_id: hub, node_type: 'Record' },
              target: { node_id: id, node_type: 'Document' },
              relation_type: 'mentions',
            },
          }),
        ),
      );
      expect(created.map((r) => [r.status, r.text])).toEqual(created.map((r) => [201, r.text]));
    }
  }, 60_000);
  afterAll(() => t.close());

  /** The latencies of /healthz asked every 20 ms while `work` runs: what every other client sees. */
  async function healthWhile<T>(work: Promise<T>): Promise<{ result: T; latencies: number[] }> {
    let done = false;
    const latencies: number[] = [];
    const probe = (async () => {
      while (!done) {
        const start = performance.now();
        const res = await fetch(`${t.url}/healthz`);
        await res.text();
        expect(res.status).toBe(200);
        latencies.push(performance.now() - start);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const result = await work.finally(() => (done = true));
    await probe;
    return { result, latencies };
  }

  it('the attack (n_hops 2, 500 Document ids as nodes, three at once) is refused quickly while /healthz answers', async () => {
    const nodes = [...documents, ...Array.from({ length: 100 }, (_, i) => document(HUB_TRACES + i))].map(
      asNode,
    );
    expect(nodes).toHaveLength(500);
    const viewer = t.demo.tenant.users.viewer.apiKey;
    const started = performance.now();
    const { result, latencies } = await healthWhile(
      Promise.all(
        [1, 2, 3].map(() => t.api('POST', '/traces/batch/list', { key: viewer, body: { nodes, n_hops: 2 } })),
      ),
    );
    const elapsed = performance.now() - started;
    for (const res of result) {
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([
        {
          loc: ['body', 'nodes'],
          msg: expect.stringMatching(new RegExp(`more than ${TRACE_BATCH_MAX_EDGES} edges.*fewer nodes`)),
          type: TRACE_BATCH_TOO_LARGE,
        },
      ]);
    }
    expect(elapsed).toBeLessThan(5_000);
    expect(latencies.length).toBeGreaterThan(0);
    expect(Math.max(...latencies)).toBeLessThan(1_000);
  });

  it(`answers up to ${TRACE_BATCH_MAX_EDGES} edges in full, and refuses one result more`, async () => {
    // Each Document reaches the hub (1 hop) and its 399 siblings (2 hops): 400 edges a result.
    const fit = Math.floor(TRACE_BATCH_MAX_EDGES / HUB_TRACES);
    // The answer is read as text while /healthz is probed, and parsed after: the test's own parsing
    // runs on the server's event loop too, and is not what is measured.
    const { result: raw, latencies } = await healthWhile(
      fetch(`${t.url}/traces/batch/list`, {
        method: 'POST',
        headers: { 'x-api-key': t.ownerKey, 'content-type': 'application/json' },
        body: JSON.stringify({ nodes: documents.slice(0, fit).map(asNode), n_hops: 2 }),
      }).then(async (response) => ({ response, text: await response.text() })),
    );
    const res = { status: raw.response.status, headers: raw.response.headers, body: JSON.parse(raw.text) };
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body.results)).toEqual(documents.slice(0, fit));
    expect(res.body.resolved_results).toBeNull();
    for (const id of documents.slice(0, fit)) {
      const result = res.body.results[id];
      expect(result.source_node).toMatchObject({ node_id: id, type: 'Document', deleted: false });
      expect(result.edges).toHaveLength(HUB_TRACES);
      expect(result.edges.filter((e: any) => e.depth === 1)).toEqual([
        expect.objectContaining({ source: hub, target: id, relation_type: ['mentions'] }),
      ]);
      expect(result.target_node_map.Record.map((c: any) => c.node.node_id)).toEqual([hub]);
      expect(result.target_node_map.Document).toHaveLength(HUB_TRACES - 1);
      expect(result.target_node_map.Document.every((c: any) => c.hopsAwayFromSource === 2)).toBe(true);
    }
    expect(Math.max(...latencies)).toBeLessThan(1_000);

    const over = await t.api('POST', '/traces/batch/list', {
      body: { nodes: documents.slice(0, fit + 1).map(asNode), n_hops: 2 },
    });
    expect(over.status).toBe(422);
    expect(over.body.detail[0].type).toBe(TRACE_BATCH_TOO_LARGE);
    // The same nodes with one hop are small, and answered.
    const oneHop = await t.api('POST', '/traces/batch/list', {
      body: { nodes: documents.slice(0, fit + 1).map(asNode), n_hops: 1 },
    });
    expect(oneHop.status).toBe(200);
    expect(Object.values(oneHop.body.results).every((r: any) => r.edges.length === 1)).toBe(true);
  });

  it("the exporter's client splits a batch the server refuses as too large, and gets every trace", async () => {
    const client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
    });
    // 60 Documents with 2 hops would be 24,000 edges in one answer: asked as 4 batches of 15.
    const asked = documents.slice(0, 60).map(asNode);
    const listing = await client.tracer.listTracesFor(asked, { nHops: 2 });
    expect(Object.keys(listing.results).sort()).toEqual(documents.slice(0, 60));
    expect(listing.edges).toHaveLength(HUB_TRACES);
    expect(new Set(listing.edges.map((e) => e.target))).toEqual(new Set(documents));
  });

  it('the OpenAPI document publishes the limits and the 422', async () => {
    const res = await t.api('GET', '/openapi.json', { key: null });
    expect(res.status).toBe(200);
    const operation = res.body.paths['/traces/batch/list'].post;
    expect(operation.description).toContain(`at most ${TRACE_BATCH_MAX_EDGES} edges`);
    expect(operation.description).toContain(TRACE_BATCH_TOO_LARGE);
    expect(operation.responses['422'].description).toContain(TRACE_BATCH_TOO_LARGE);
  });
});
