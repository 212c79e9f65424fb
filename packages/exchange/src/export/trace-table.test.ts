import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RelationType, TraceEdge } from '../../../contract/src/trace.js';
import type { ExportedTrace, LinkType } from './model.js';
import { RecordEnds } from './record-ends.js';
import { TraceTable } from './trace-table.js';

/**
 * The export's traces from the table equal those computed directly from the edges (the oracle):
 * the batches merged in order, each trace's first listing kept, then sorted by id; the
 * link types in the order first met, each the last one met under its name.
 */
function oracle(
  batches: readonly (readonly TraceEdge[])[],
  ends: Map<string, { readableId: string; topic: number }>,
  linkTypeOf: (source: number, target: number) => LinkType | undefined,
): { traces: ExportedTrace[]; linkTypes: LinkType[] } {
  const seen = new Set<string>();
  const traces: ExportedTrace[] = [];
  const linkTypes = new Map<string, LinkType>();
  for (const edge of batches.flat()) {
    if (seen.has(edge._id)) continue;
    seen.add(edge._id);
    const sourceType = edge.source_node?.type ?? 'Record';
    const targetType = edge.target_node?.type ?? 'Record';
    const sourceEnd = sourceType === 'Record' ? ends.get(edge.source) : undefined;
    const targetEnd = targetType === 'Record' ? ends.get(edge.target) : undefined;
    const linkType = sourceEnd && targetEnd ? linkTypeOf(sourceEnd.topic, targetEnd.topic) : undefined;
    if (linkType) linkTypes.set(linkType.name, linkType);
    traces.push({
      id: edge._id,
      source: { id: edge.source, type: sourceType, ...(sourceEnd && { readableId: sourceEnd.readableId }) },
      target: { id: edge.target, type: targetType, ...(targetEnd && { readableId: targetEnd.readableId }) },
      relationTypes: [...edge.relation_type],
      ...(linkType && { linkType: linkType.name }),
      suspect: edge.outdated === true,
    });
  }
  traces.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { traces, linkTypes: [...linkTypes.values()] };
}

const RELATIONS: RelationType[] = ['is_related', 'mentions', 'is_parent'];

describe('TraceTable', () => {
  it('property: the same traces and link types as merging the edges, whatever order the batches arrive in', () => {
    const edge = fc.record({
      id: fc.nat(12),
      source: fc.nat(9),
      target: fc.nat(9),
      sourceType: fc.constantFrom('Record', 'SOP', undefined),
      targetType: fc.constantFrom('Record', 'Form', undefined),
      relations: fc.subarray(RELATIONS, { minLength: 1 }),
      outdated: fc.boolean(),
    });
    const scenario = fc.record({
      // Records 0-6 are exported (6 listed twice, the second listing counts), 7-9 are not.
      topics: fc.array(fc.nat(2), { minLength: 7, maxLength: 7 }),
      batches: fc.array(fc.array(edge, { maxLength: 6 }), { maxLength: 6 }),
      arrival: fc.array(fc.nat(), { maxLength: 6 }),
      // Per pair of topics (3 x 3) a link type name or none; names repeat across pairs.
      names: fc.array(fc.constantFrom(undefined, 'verifies', 'refines'), { minLength: 9, maxLength: 9 }),
    });
    fc.assert(
      fc.property(scenario, ({ topics, batches, arrival, names }) => {
        const recordId = (n: number) => `r${n}`;
        const ends = new RecordEnds();
        const byId = new Map<string, { readableId: string; topic: number }>();
        const list = (n: number, readableId: string, topic: number) => {
          ends.add(recordId(n), readableId, topic);
          byId.set(recordId(n), { readableId, topic });
        };
        topics.forEach((topic, n) => list(n, `REQ-${n % 4}`, topic));
        list(6, 'REQ-6b', 0);
        const types = names.map((name, pair) =>
          name === undefined
            ? undefined
            : { name, incoming: `${name} ${pair}`, sourceTopicHistoryId: 'h', targetTopicHistoryId: 'h' },
        );
        const linkTypeOf = (source: number, target: number) => types[source * 3 + target];
        const edges = batches.map((batch) =>
          batch.map(
            (e): TraceEdge =>
              ({
                _id: `t${e.id}`,
                source: recordId(e.source),
                target: recordId(e.target),
                relation_type: e.relations,
                ...(e.sourceType && { source_node: { node_id: recordId(e.source), type: e.sourceType } }),
                ...(e.targetType && { target_node: { node_id: recordId(e.target), type: e.targetType } }),
                outdated: e.outdated,
              }) as TraceEdge,
          ),
        );
        const table = new TraceTable(ends);
        // Batches arrive in any order (bounded concurrency); each halves in order, under one place.
        const order = edges.map((_, i) => i).sort((a, b) => (arrival[a] ?? 0) - (arrival[b] ?? 0) || a - b);
        for (const i of order) {
          const half = Math.ceil(edges[i]!.length / 2);
          table.add(edges[i]!.slice(0, half), i);
          table.add(edges[i]!.slice(half), i);
        }
        // As JSON: the same values with their keys in the same order, as the writers write them.
        expect(JSON.stringify(table.traces(linkTypeOf))).toBe(
          JSON.stringify(oracle(edges, byId, linkTypeOf)),
        );
      }),
      { numRuns: 500 },
    );
  });
});
