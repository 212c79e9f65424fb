import type { RelationType, TraceRole } from '@rxs/contract';
import { describe, expect, it } from 'vitest';
import type { ExportPart } from '../export/model.js';
import { CoverageCollector } from './coverage.js';

const HISTORY = { needs: 'a'.repeat(24), reqs: 'b'.repeat(24), tests: 'c'.repeat(24), other: 'd'.repeat(24) };
type Topic = keyof typeof HISTORY;
const NAMES: Record<Topic, string> = { needs: 'Needs', reqs: 'Requirements', tests: 'Tests', other: 'Other' };

const topicPart = (topic: Topic): ExportPart => ({
  kind: 'topic',
  topic: { revisionId: `rev-${topic}`, historyId: HISTORY[topic], name: NAMES[topic] } as never,
});
const recordPart = (topic: Topic, id: string): ExportPart => ({
  kind: 'record',
  record: { id, readableId: id.toUpperCase(), topicRevisionId: `rev-${topic}` } as never,
});
const trace = (source: string, target: string, relationType: RelationType, suspect = false) => ({
  id: `${source}-${target}-${relationType}`,
  source: { id: source, type: 'Record' as const },
  target: { id: target, type: 'Record' as const },
  relationTypes: [relationType],
  suspect,
});

/** Needs refined by requirements (traces from the need), requirements verified by tests (from the test). */
const MODEL: TraceRole[] = [
  {
    id: 'derives',
    forward_name: 'derives from',
    backward_name: 'refined by',
    from: { topic_history_id: HISTORY.reqs },
    to: { topic_history_id: HISTORY.needs },
    trace_source: 'to',
    relation_type: 'contributes_to',
  },
  {
    id: 'verifies',
    forward_name: 'verifies',
    backward_name: 'verified by',
    from: { topic_history_id: HISTORY.tests },
    to: { topic_history_id: HISTORY.reqs },
    trace_source: 'from',
    relation_type: 'is_related',
  },
];

async function report(topics: Topic[], consecutive: boolean) {
  const collector = new CoverageCollector({ model: MODEL, consecutive });
  const records: Record<Topic, string[]> = {
    needs: ['n1', 'n2'],
    reqs: ['r1', 'r2', 'r3'],
    tests: ['t1', 't2'],
    other: ['o1'],
  };
  await collector.writeParts([
    ...topics.flatMap((topic) => [topicPart(topic), ...records[topic].map((id) => recordPart(topic, id))]),
    {
      kind: 'traces',
      traces: [
        trace('n1', 'r1', 'contributes_to'),
        trace('r2', 'n2', 'contributes_to'), // the wrong way round for "derives": counts for nothing
        trace('t1', 'r1', 'is_related', true),
        trace('t2', 'r2', 'mentions'), // not the relation type "verifies" names
        trace('r3', 'o1', 'is_related'),
      ],
      linkTypes: [],
    },
  ]);
  return collector.report().rules.map((r) => ({
    rule: `${r.rule.source.name} → ${r.rule.target.name}${r.rule.linkType ? ` (${r.rule.linkType})` : ''}`,
    links: r.links.map(([s, t]) => `${s}>${t}`),
    uncovered: r.uncovered,
    orphans: r.orphans,
    suspect: r.suspect.length,
  }));
}

/** A traceability report whose rules are the tenant's trace model: each role, from its `to` topic. */
describe('coverage by the trace model', () => {
  it('counts each trace for the role its topics and relation type name, from the role’s `to` topic', async () => {
    expect(await report(['needs', 'reqs', 'tests'], false)).toEqual([
      {
        rule: 'Needs → Requirements (refined by)',
        links: ['N1>R1'],
        uncovered: ['N2'],
        orphans: ['R2', 'R3'],
        suspect: 0,
      },
      {
        rule: 'Requirements → Tests (verified by)',
        links: ['R1>T1'],
        uncovered: ['R2', 'R3'],
        orphans: ['T2'],
        suspect: 1,
      },
    ]);
  });

  it('given topics (--kt): the roles among them, and any trace between neighbours no role joins', async () => {
    expect(await report(['reqs', 'tests', 'other'], true)).toEqual([
      {
        rule: 'Requirements → Tests (verified by)',
        links: ['R1>T1'],
        uncovered: ['R2', 'R3'],
        orphans: ['T2'],
        suspect: 1,
      },
      { rule: 'Tests → Other', links: [], uncovered: ['T1', 'T2'], orphans: ['O1'], suspect: 0 },
    ]);
    // The model's own chain: its roles only, though Tests and Other are neighbours.
    expect((await report(['reqs', 'tests', 'other'], false)).map((r) => r.rule)).toEqual([
      'Requirements → Tests (verified by)',
    ]);
  });
});
