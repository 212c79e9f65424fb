import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { RxsApiError } from '../../client/src/errors.js';
import type { Trace } from '../../contract/src/trace.js';
import { applyTraceChanges, edgeOfTrace, feedUnavailable, type TracePlan } from './feed-traces.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-feed-traces-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;

const audit = {
  user_id_created: 'u',
  timestamp_created: '2026-01-01T00:00:00Z',
  user_id_last_updated: null,
  timestamp_last_updated: null,
  last_action: 'created',
};
function trace(id: number, source: [string, string], target: [string, string]): Trace {
  return {
    _id: id.toString(16).padStart(24, '0'),
    source: { node_id: source[1], node_type: source[0] },
    target: { node_id: target[1], node_type: target[0] },
    relation_type: 'mentions',
    tenant_metadata: { tenant_id: 't' },
    audit_info: audit,
  } as unknown as Trace;
}
const touches = (t: Trace, nodes: Set<string>) =>
  (t.source.node_type === 'Record' && nodes.has(t.source.node_id)) ||
  (t.target.node_type === 'Record' && nodes.has(t.target.node_id));

/**
 * The kept traces with the feed's changes applied are what `POST /traces/batch/list` answers now,
 * as long as the cursor was taken before the records were read: traces that touch a record exported
 * now but not then were created after the cursor, and a deleted record's traces were deleted.
 */
describe('applyTraceChanges', () => {
  it('property: equals the traces that touch the exported records now, after random links, unlinks, record deletions and new records', async () => {
    const node = fc.tuple(
      fc.constantFrom('Record', 'Record', 'Document'),
      fc.constantFrom('a', 'b', 'c', 'd', 'e'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(node, node), { maxLength: 12 }),
        fc.array(fc.tuple(node, node), { maxLength: 8 }),
        fc.subarray(['a', 'b', 'c', 'd', 'e']),
        fc.subarray(['a', 'b', 'c', 'd', 'e']),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (before, after, exportedThen, deletedNodes, unlinked) => {
          let id = 0;
          // Traces before the cursor never touch records created after it: those are 'n…' ids.
          const old = before.map(([s, t]) => trace(++id, s, t));
          const nodesThen = new Set(exportedThen);
          const kept = old.filter((t) => touches(t, nodesThen)).map(edgeOfTrace);
          const keptFile = join(root, `kept-${++files}.jsonl`);
          writeFileSync(keptFile, kept.map((e) => `${JSON.stringify(e)}\n`).join(''));
          // After the cursor: some records deleted (their traces with them), new records, links, unlinks.
          const deleted = new Set(deletedNodes.filter((n) => nodesThen.has(n)));
          const nodesNow = new Set([...nodesThen].filter((n) => !deleted.has(n)).concat(['n1', 'n2']));
          const created = after
            .map(([s, t]) => [s, [t[0], `n${(t[1].charCodeAt(0) % 2) + 1}`]] as const)
            .map(([s, t]) => trace(++id, s as [string, string], t as [string, string]));
          const alive = new Map([...old, ...created].map((t) => [t._id, t]));
          const plan: TracePlan = {
            created: new Map(created.map((t) => [t._id, t])),
            removed: new Set(),
            cursor: 'c',
          };
          const remove = (t: Trace) => {
            alive.delete(t._id);
            plan.created.delete(t._id);
            plan.removed.add(t._id);
          };
          const goneRecord = (t: Trace) =>
            [t.source, t.target].some((end) => end.node_type === 'Record' && deleted.has(end.node_id));
          for (const t of [...alive.values()]) if (goneRecord(t)) remove(t);
          for (const pick of unlinked) {
            const all = [...alive.values()];
            if (all.length) remove(all[pick % all.length]!);
          }
          const nodes = [...nodesNow].map((n) => ({ node_id: n, node_type: 'Record' as const }));
          const got = (await applyTraceChanges(keptFile, plan, nodes)).map((e) => e._id).sort();
          const expected = [...alive.values()]
            .filter((t) => touches(t, nodesNow))
            .map((t) => t._id)
            .sort();
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('shows a trace as the batch listing does', () => {
    const edge = edgeOfTrace(trace(1, ['Record', 'a'], ['Document', 'b']));
    expect(edge).toMatchObject({
      source: 'a',
      target: 'b',
      relation_type: ['mentions'],
      source_node: { node_id: 'a', type: 'Record' },
      target_node: { node_id: 'b', type: 'Document' },
      depth: 1,
    });
  });

  it('reads "no such feed" from the answers a service without it gives, and nothing else', () => {
    const answer = (status?: number) =>
      new RxsApiError(
        'x',
        { service: 'tracer', method: 'GET', url: '/traces/changes' } as never,
        status === undefined ? undefined : ({ status } as never),
      );
    expect(feedUnavailable(answer(404))).toBe(true);
    expect(feedUnavailable(answer(422))).toBe(true);
    expect(feedUnavailable(answer(500))).toBe(false);
    expect(feedUnavailable(answer(401))).toBe(false);
    expect(feedUnavailable(new Error('socket hang up'))).toBe(false);
  });
});
