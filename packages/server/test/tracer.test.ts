import { TRACE_BATCH_MAX_NODES } from '@rxs/contract';
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

  describe('trace ends (issue 12.2)', () => {
    const trace = (target: { node_id: string; node_type: string }, source = req[2]!) => ({
      source: { node_id: source, node_type: 'Record' },
      target,
      relation_type: 'mentions',
    });

    it("ends that live in RXS must exist in the caller's tenant: another tenant's record or topic is 404", async () => {
      const other = t.demo.otherTenant.topics;
      const topic = Object.values(other)[0]!;
      for (const target of [
        { node_id: topic.recordIds[0]!, node_type: 'Record' },
        { node_id: topic.currentRevisionId, node_type: 'KnowledgeTopic' },
        { node_id: topic.historyId, node_type: 'KnowledgeTopic' },
      ]) {
        const res = await t.api('POST', '/traces/', { body: trace(target) });
        expect(res.status).toBe(404);
        expect(res.body.detail).toBe(
          `The target ${target.node_type} ${target.node_id} was not found in your tenant.`,
        );
      }
    });

    it.each([
      ['a javascript: URL', 'javascript:alert(1)'],
      ['a javascript: URL without markup', 'JavaScript:void0'],
      ['a data: URL', 'data:text-html'],
      ['HTML', '<img src=x onerror=alert(1)>'],
      ['a path', '../../etc/passwd'],
      ['spaces', 'DOC 1'],
      ['a leading dot', '.hidden'],
      ['non-ASCII letters', 'DOCÜ-1'],
      ['129 characters', 'D'.repeat(129)],
    ])('an external end with %s is 422', async (_case, id) => {
      const res = await t.api('POST', '/traces/', { body: trace({ node_id: id, node_type: 'Document' }) });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'target', 'node_id']);
      const batch = await t.api('POST', '/traces/batch/list', { body: { nodes: [node(req[2]!)] } });
      expect(JSON.stringify(batch.body)).not.toContain(JSON.stringify(id).slice(1, -1));
    });

    it('an external end in the documented format is accepted', async () => {
      for (const id of ['DOC-42.v1:section_3', 'urn:isbn:0451450523', 'D'.repeat(128), '7']) {
        const res = await t.api('POST', '/traces/', { body: trace({ node_id: id, node_type: 'Document' }) });
        expect(res.status).toBe(201);
        expect(res.body.target).toEqual({ node_id: id, node_type: 'Document' });
        const listed = await t.api('POST', '/traces/batch/list', {
          body: { nodes: [{ node_id: id, node_type: 'Document' }] },
        });
        expect(listed.body.results[id].edges.map((e: any) => e._id)).toEqual([res.body._id]);
      }
    });

    it("another tenant's record id typed as Document is an opaque Document id, never that record", async () => {
      const foreign = Object.values(t.demo.otherTenant.topics)[0]!.recordIds[0]!;
      const unused = 'fedcba9876543210fedcba98';
      // The answer may not depend on another tenant's data: the same as for an id nobody uses.
      const answers = [];
      for (const id of [foreign, unused]) {
        const res = await t.api('POST', '/traces/', {
          body: trace({ node_id: id, node_type: 'Document' }, req[1]!),
        });
        answers.push({ status: res.status, target: res.body.target, keys: Object.keys(res.body).sort() });
      }
      expect(answers[0]).toEqual({ ...answers[1], target: { node_id: foreign, node_type: 'Document' } });
      expect(answers[0]!.status).toBe(201);

      // In the caller's tenant it is a Document without record facts (no version, no foreign audit).
      const mine = await t.api('POST', '/traces/batch/list', { body: { nodes: [node(req[1]!)] } });
      const documents = mine.body.results[req[1]!].target_node_map.Document;
      const reached = documents.find((c: any) => c.node.node_id === foreign);
      expect(reached.node).toMatchObject({ type: 'Document', version: null, deleted: false });
      // Its audit is the trace's own, not the foreign record's.
      expect(reached.node.audit_info).toEqual(reached.audit_info);
      expect(mine.body.results[req[1]!].target_node_map.Record ?? []).not.toContainEqual(
        expect.objectContaining({ node: expect.objectContaining({ node_id: foreign }) }),
      );

      // The other tenant sees nothing of it.
      const theirs = await t.api('POST', '/traces/batch/list', {
        key: t.demo.otherTenant.users.owner.apiKey,
        body: { nodes: [node(foreign), { node_id: foreign, node_type: 'Document' }], n_hops: 2 },
      });
      expect(theirs.status).toBe(200);
      expect(theirs.body.results[foreign]).toMatchObject({ target_node_map: {}, edges: [] });
    });

    it("a Document sharing one of the caller's record ids is not a link to that record", async () => {
      // REQ_004 typed as a Document, linked from TC-003: REQ_004 the Record gains no trace.
      const created = await t.api('POST', '/traces/', {
        body: trace({ node_id: req[3]!, node_type: 'Document' }, tests[2]!),
      });
      expect(created.status).toBe(201);
      const record = await t.api('POST', '/traces/batch/list', {
        body: { nodes: [node(req[3]!)], n_hops: 2 },
      });
      const edgeIds = record.body.results[req[3]!].edges.map((e: any) => e._id);
      expect(edgeIds).not.toContain(created.body._id);
      const document = await t.api('POST', '/traces/batch/list', {
        body: { nodes: [{ node_id: req[3]!, node_type: 'Document' }] },
      });
      expect(document.body.results[req[3]!].edges.map((e: any) => e._id)).toEqual([created.body._id]);
    });
  });
});
