import { afterEach, describe, expect, it } from 'vitest';
import {
  TRACE_BATCH_MAX_NODES,
  TRACE_BATCH_TOO_LARGE,
  type BatchRetrieveNode,
  type BatchRetrieveRequest,
} from '../../contract/src/trace.js';
import { createClient, type ClientOptions } from './client.js';
import { ValidationError } from './errors.js';
import { sendJson, TestServers } from './test-server.js';
import { chunk } from './tracer.js';

const servers = new TestServers();
afterEach(() => servers.closeAll());

const id = (n: number) => n.toString(16).padStart(24, '0');
const nodes = (count: number): BatchRetrieveNode[] =>
  Array.from({ length: count }, (_, i) => ({ node_id: id(i), node_type: 'Record' }));

/** An edge between node i and i+1: neighbouring nodes share it, across batches too. */
const edge = (i: number) => ({
  _id: `e${i}`,
  source: id(i),
  target: id(i + 1),
  relation_type: ['is_related'],
  source_node: { node_id: id(i), type: 'Record' },
  target_node: { node_id: id(i + 1), type: 'Record' },
  depth: 1,
});

/** A tracer that answers each node with its two edges, after a delay, counting requests in flight. */
async function tracer(options: { delayMs?: number; failOn?: number; maxNodesAnswered?: number } = {}) {
  const stats = { inFlight: 0, maxInFlight: 0, batches: [] as BatchRetrieveRequest[] };
  const server = await servers.serve(async (_request, response, { body, index }) => {
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    const request = JSON.parse(body) as BatchRetrieveRequest;
    stats.batches.push(request);
    await new Promise((resolve) => setTimeout(resolve, options.delayMs ?? 40));
    stats.inFlight--;
    if (options.maxNodesAnswered !== undefined && request.nodes.length > options.maxNodesAnswered) {
      // As the server refuses a batch whose answer would exceed TRACE_BATCH_MAX_EDGES.
      return sendJson(response, 422, {
        detail: [
          {
            loc: ['body', 'nodes'],
            msg: 'The answer would hold more than 10000 edges, the limit per request.',
            type: TRACE_BATCH_TOO_LARGE,
          },
        ],
      });
    }
    if (index === options.failOn) {
      return sendJson(response, 422, {
        detail: [{ loc: ['body', 'nodes'], msg: 'too many', type: 'too_long' }],
      });
    }
    const results = Object.fromEntries(
      request.nodes.map((node) => {
        const i = Number.parseInt(node.node_id, 16);
        return [
          node.node_id,
          { source_node: { node_id: node.node_id }, target_node_map: {}, edges: [edge(i - 1), edge(i)] },
        ];
      }),
    );
    sendJson(response, 200, { results, resolved_results: null });
  });
  return { server, stats };
}

function clientAt(url: string, options: Partial<ClientOptions> = {}) {
  return createClient({
    techdocUrl: url,
    recordsUrl: url,
    tracerUrl: `${url}/tr`,
    apiKey: 'rxs_tracer_key_1234',
    ...options,
  }).tracer;
}

describe('listTracesFor', () => {
  it('chunks into batches of the limit, keeps concurrency bounded, merges and de-duplicates edges', async () => {
    const { server, stats } = await tracer();
    const input = [...nodes(1234), ...nodes(10)]; // duplicates are asked once
    const listing = await clientAt(server.url).listTracesFor(input, {
      nHops: 2,
      batchSize: 100,
      concurrency: 3,
    });
    expect(stats.batches).toHaveLength(13);
    expect(stats.batches.every((b) => b.nodes.length <= 100 && b.n_hops === 2)).toBe(true);
    expect(stats.batches.flatMap((b) => b.nodes.map((n) => n.node_id)).sort()).toEqual(
      nodes(1234).map((n) => n.node_id),
    );
    expect(stats.maxInFlight).toBe(3);
    expect(Object.keys(listing.results)).toHaveLength(1234);
    // Edges e-1 ... e1233, each once although two nodes (often in two batches) report it.
    expect(listing.edges).toHaveLength(1235);
    expect(new Set(listing.edges.map((e) => e._id)).size).toBe(1235);
    expect(server.requests.every((r) => r.url === '/tr/traces/batch/list' && r.method === 'POST')).toBe(true);

    // edgesOnly (what exports use): the same edges in the same order, no per-node results kept.
    const lean = await clientAt(server.url).listTracesFor(input, {
      nHops: 2,
      batchSize: 100,
      concurrency: 3,
      edgesOnly: true,
    });
    expect(lean.results).toEqual({});
    expect(lean.edges.map((e) => e._id)).toEqual(listing.edges.map((e) => e._id));
  });

  it("onEdges: each batch's edges as it arrives, with its place; in batch order, the merged listing", async () => {
    const { server } = await tracer({ delayMs: 5, maxNodesAnswered: 30 });
    const input = [...nodes(250), ...nodes(3)];
    const merged = await clientAt(server.url).listTracesFor(input, { batchSize: 50, concurrency: 3 });
    const handed: { batch: number; ids: string[] }[] = [];
    const listing = await clientAt(server.url).listTracesFor(input, {
      batchSize: 50,
      concurrency: 3,
      onEdges: (edges, batch) => handed.push({ batch, ids: edges.map((e) => e._id) }),
    });
    expect(listing).toEqual({ results: {}, edges: [] });
    // Batches of 50 are refused (more than 30 nodes) and asked in halves of 25: two hand-overs each.
    expect(handed.map((h) => h.batch).sort((a, b) => a - b)).toEqual([0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
    const inOrder = handed
      .map((h, arrival) => ({ ...h, arrival }))
      .sort((a, b) => a.batch - b.batch || a.arrival - b.arrival)
      .flatMap((h) => h.ids);
    expect([...new Set(inOrder)]).toEqual(merged.edges.map((e) => e._id));
  });

  it("defaults: batches of the server's limit, the client's concurrency (4)", async () => {
    const { server, stats } = await tracer({ delayMs: 150 });
    await clientAt(server.url).listTracesFor(nodes(TRACE_BATCH_MAX_NODES * 5 + 1));
    // Sorted: the last two batches start together and may arrive in either order.
    expect(stats.batches.map((b) => b.nodes.length).sort((a, b) => b - a)).toEqual([
      500, 500, 500, 500, 500, 1,
    ]);
    expect(stats.maxInFlight).toBe(4);
    expect(stats.batches[0]).not.toHaveProperty('n_hops');

    const configured = await tracer({ delayMs: 50 });
    await clientAt(configured.server.url, { traceConcurrency: 2, traceBatchSize: 10 }).listTracesFor(
      nodes(95),
    );
    expect(configured.stats.batches).toHaveLength(10);
    expect(configured.stats.maxInFlight).toBe(2);
  });

  it('splits a batch whose answer the server refuses as too large, down to single nodes', async () => {
    const { server, stats } = await tracer({ delayMs: 5, maxNodesAnswered: 3 });
    const listing = await clientAt(server.url).listTracesFor(nodes(40), { batchSize: 20, concurrency: 2 });
    expect(Object.keys(listing.results).sort()).toEqual(nodes(40).map((n) => n.node_id));
    expect(listing.edges).toHaveLength(41);
    const answered = stats.batches.filter((b) => b.nodes.length <= 3);
    expect(answered.flatMap((b) => b.nodes.map((n) => n.node_id)).sort()).toEqual(
      nodes(40).map((n) => n.node_id),
    );
    expect(stats.maxInFlight).toBeLessThanOrEqual(2);

    // A single node whose answer is too large cannot be split: the server's 422 is thrown.
    const never = await tracer({ delayMs: 1, maxNodesAnswered: 0 });
    const failure = clientAt(never.server.url).listTracesFor(nodes(4), { concurrency: 1 });
    await expect(failure).rejects.toBeInstanceOf(ValidationError);
    await expect(failure).rejects.toThrow(/more than 10000 edges/);
    expect(never.stats.batches.map((b) => b.nodes.length)).toEqual([4, 2, 1]);
  });

  it('no nodes, no requests', async () => {
    const { server } = await tracer();
    expect(await clientAt(server.url).listTracesFor([])).toEqual({ results: {}, edges: [] });
    expect(server.requests).toHaveLength(0);
  });

  it('a failing batch stops the rest and is thrown', async () => {
    const { server, stats } = await tracer({ failOn: 1 });
    await expect(
      clientAt(server.url).listTracesFor(nodes(2000), { batchSize: 10, concurrency: 2 }),
    ).rejects.toBeInstanceOf(ValidationError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stats.batches.length).toBeLessThan(6);
  });

  it('refuses unbounded or invalid concurrency and batch sizes', async () => {
    const client = clientAt('http://127.0.0.1:9');
    for (const concurrency of [0, -1, Infinity, 1.5, Number.NaN]) {
      await expect(client.listTracesFor(nodes(3), { concurrency })).rejects.toThrow(/never unbounded/);
    }
    await expect(client.listTracesFor(nodes(3), { batchSize: 0 })).rejects.toThrow(/batchSize/);
  });
});

describe('chunk', () => {
  it('splits into consecutive slices of at most the size', () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunk([], 3)).toEqual([]);
  });
});
