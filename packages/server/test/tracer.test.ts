import { TRACE_BATCH_MAX_NODES } from '@rxs/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

describe('tracer: traces and the batch listing', () => {
  let t: TestServer;
  let req: string[];
  let tests: string[];
  beforeAll(async () => {
    t = await startTestServer();
    req = t.demo.tenant.topics.systemRequirements!.recordIds;
    tests = t.demo.tenant.topics.verificationTests!.recordIds;
  });
  afterAll(() => t.close());
  const node = (id: string) => ({ node_id: id, node_type: 'Record', version: '1.0' });

  it('1 hop: each node with its directly linked nodes and edges', async () => {
    const res = await t.api('POST', '/traces/batch/list', {
      body: { nodes: [node(req[0]!), node(tests[3]!)] },
    });
    expect(res.status).toBe(200);
    const first = res.body.results[req[0]!];
    // REQ_001 is linked to TC-001 (is_related) and REQ_002 (has_parent, REQ_002 -> REQ_001).
    const linked = first.target_node_map.Record.map((c: any) => c.node.node_id).sort();
    expect(linked).toEqual([tests[0], req[1]].sort());
    expect(first.edges).toHaveLength(2);
    for (const edge of first.edges) {
      expect(edge).toMatchObject({ _id: expect.any(String), relation_type: [expect.any(String)], depth: 1 });
      expect(edge.source_node).toEqual({ node_id: edge.source, type: 'Record' });
      expect(edge.target_node).toEqual({ node_id: edge.target, type: 'Record' });
    }
    expect(first.source_node).toMatchObject({ node_id: req[0], type: 'Record', deleted: false });
    // TC-004 has no traces.
    expect(res.body.results[tests[3]!]).toMatchObject({ target_node_map: {}, edges: [] });
  });

  it('2 hops reach the neighbours of neighbours, with their depth', async () => {
    const res = await t.api('POST', '/traces/batch/list', { body: { nodes: [node(tests[1]!)], n_hops: 2 } });
    const result = res.body.results[tests[1]!];
    // TC-002 -> REQ_002 (1 hop) -> REQ_001 (2 hops).
    const depth = Object.fromEntries(
      result.target_node_map.Record.map((c: any) => [c.node.node_id, c.hopsAwayFromSource]),
    );
    expect(depth).toEqual({ [req[1]!]: 1, [req[0]!]: 2 });
    expect(result.edges.map((e: any) => e.depth).sort()).toEqual([1, 2]);
    const one = await t.api('POST', '/traces/batch/list', { body: { nodes: [node(tests[1]!)], n_hops: 1 } });
    expect(one.body.results[tests[1]!].edges).toHaveLength(1);
  });

  it('creates and deletes traces; refuses self links, duplicates and unknown records', async () => {
    const body = {
      source: { node_id: tests[3]!, node_type: 'Record' },
      target: { node_id: req[3]!, node_type: 'Record' },
      relation_type: 'is_related',
    };
    const created = await t.api('POST', '/traces/', { body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      source: body.source,
      target: body.target,
      relation_type: 'is_related',
    });
    expect((await t.api('POST', '/traces/', { body })).status).toBe(409);
    expect((await t.api('POST', '/traces/', { body: { ...body, target: body.source } })).status).toBe(422);
    expect(
      (
        await t.api('POST', '/traces/', {
          body: { ...body, target: { node_id: '0123456789abcdef01234567', node_type: 'Record' } },
        })
      ).status,
    ).toBe(404);
    expect((await t.api('POST', '/traces/', { body: { ...body, relation_type: 'loves' } })).status).toBe(422);
    expect((await t.api('DELETE', `/traces/${created.body._id}`)).status).toBe(204);
    expect((await t.api('DELETE', `/traces/${created.body._id}`)).status).toBe(404);
  });

  it(`a batch has a published maximum of ${TRACE_BATCH_MAX_NODES} nodes; beyond it, 422`, async () => {
    const nodes = Array.from({ length: TRACE_BATCH_MAX_NODES + 1 }, (_, i) =>
      node(i.toString(16).padStart(24, '0')),
    );
    const res = await t.api('POST', '/traces/batch/list', { body: { nodes } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'nodes'], type: 'too_long' });
    const atLimit = await t.api('POST', '/traces/batch/list', {
      body: { nodes: nodes.slice(0, TRACE_BATCH_MAX_NODES) },
    });
    expect(atLimit.status).toBe(200);
    expect((await t.api('POST', '/traces/batch/list', { body: { nodes: [], n_hops: 0 } })).status).toBe(422);
  });
});
