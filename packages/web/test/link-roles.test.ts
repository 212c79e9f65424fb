import type { TraceRole } from '@rxs/web-api';
import { describe, expect, it } from 'vitest';
import {
  isInternalRelation,
  linkWording,
  roleChoices,
  roleOfLink,
  traceOfChoice,
  traceOfRelation,
} from '../src/link-roles';

const [NEEDS, REQS, TESTS, DESIGN] = ['a', 'b', 'c', 'd'].map((c) => c.repeat(24)) as [
  string,
  string,
  string,
  string,
];

const role = (
  id: string,
  names: [string, string],
  from: string,
  to: string,
  trace_source: 'from' | 'to',
  relation_type: TraceRole['relation_type'],
): TraceRole => ({
  id,
  forward_name: names[0],
  backward_name: names[1],
  from: { topic_history_id: from, topic_name: `topic ${from[0]}` },
  to: { topic_history_id: to, topic_name: `topic ${to[0]}` },
  trace_source,
  relation_type,
});

/** The demo's V: tests verify requirements (stored test → requirement), design implements them (stored requirement → design). */
const MODEL = [
  role('derives', ['derives from', 'refined by'], REQS, NEEDS, 'to', 'contributes_to'),
  role('implements', ['implements', 'implemented by'], DESIGN, REQS, 'to', 'is_related'),
  role('verifies', ['verifies', 'verified by'], TESTS, REQS, 'from', 'is_related'),
];

describe('roleChoices', () => {
  it('offers each role a topic takes part in, named from its end, with the other topic to search', () => {
    const choices = roleChoices(MODEL, REQS);
    expect(choices.map((c) => [c.key, c.name, c.otherTopic.historyId])).toEqual([
      ['derives:from', 'derives from', NEEDS],
      ['implements:to', 'implemented by', DESIGN],
      ['verifies:to', 'verified by', TESTS],
    ]);
    expect(roleChoices(MODEL, TESTS).map((c) => c.name)).toEqual(['verifies']);
    expect(roleChoices(MODEL, 'e'.repeat(24))).toEqual([]);
    expect(roleChoices(MODEL, null)).toEqual([]);
  });

  it('offers both ends of a role between records of one topic', () => {
    const parent = role('parent', ['refines', 'refined into'], REQS, REQS, 'from', 'has_parent');
    expect(roleChoices([parent], REQS).map((c) => c.name)).toEqual(['refines', 'refined into']);
  });
});

describe('traceOfChoice', () => {
  const choice = (topic: string, name: string) => roleChoices(MODEL, topic).find((c) => c.name === name)!;

  it('makes the trace from the role’s from-record to its to-record, whichever page it starts on', () => {
    const fromRequirement = traceOfChoice(choice(REQS, 'verified by'), 'req', 'test');
    const fromTest = traceOfChoice(choice(TESTS, 'verifies'), 'test', 'req');
    const expected = {
      source: { node_id: 'test', node_type: 'Record' },
      target: { node_id: 'req', node_type: 'Record' },
      relation_type: 'is_related',
    };
    expect(fromRequirement).toEqual(expected);
    expect(fromTest).toEqual(expected);
  });

  it('stores the trace the way round trace_source says', () => {
    // implements: from design to requirement, stored requirement → design.
    expect(traceOfChoice(choice(DESIGN, 'implements'), 'design', 'req')).toEqual({
      source: { node_id: 'req', node_type: 'Record' },
      target: { node_id: 'design', node_type: 'Record' },
      relation_type: 'is_related',
    });
    expect(traceOfChoice(choice(REQS, 'implemented by'), 'req', 'design').source.node_id).toBe('req');
  });

  it('a raw relation type goes the way the direction says', () => {
    expect(traceOfRelation('mentions', 'incoming', 'me', 'them')).toEqual({
      source: { node_id: 'them', node_type: 'Record' },
      target: { node_id: 'me', node_type: 'Record' },
      relation_type: 'mentions',
    });
  });
});

describe('roleOfLink and linkWording', () => {
  it('finds a trace’s role again and names it from either end', () => {
    // The stored trace test → requirement, seen from the requirement (incoming) and from the test.
    const onRequirement = {
      direction: 'incoming',
      relationType: 'is_related',
      thisTopic: REQS,
      otherTopic: TESTS,
    } as const;
    const onTest = {
      direction: 'outgoing',
      relationType: 'is_related',
      thisTopic: TESTS,
      otherTopic: REQS,
    } as const;
    expect(roleOfLink(MODEL, onRequirement)).toMatchObject({ role: { id: 'verifies' }, end: 'to' });
    expect(linkWording(MODEL, onRequirement)).toEqual({ before: 'verified by', after: '' });
    expect(linkWording(MODEL, onTest)).toEqual({ before: 'verifies', after: '' });
    // Stored requirement → design: outgoing on the requirement.
    const onDesignSide = {
      direction: 'outgoing',
      relationType: 'is_related',
      thisTopic: REQS,
      otherTopic: DESIGN,
    } as const;
    expect(linkWording(MODEL, onDesignSide).before).toBe('implemented by');
  });

  it('says the relation type plainly when no role matches the topics, the type or the direction', () => {
    const base = { relationType: 'is_related', thisTopic: REQS, otherTopic: REQS } as const;
    expect(roleOfLink(MODEL, { ...base, direction: 'outgoing' })).toBeUndefined();
    expect(linkWording(MODEL, { ...base, direction: 'outgoing' })).toEqual({
      before: 'related to',
      after: '',
    });
    expect(linkWording(MODEL, { ...base, direction: 'incoming' })).toEqual({
      before: 'related to',
      after: '',
    });
    // Test → requirement stored the wrong way round is no "verifies".
    const reversed = {
      direction: 'outgoing',
      relationType: 'is_related',
      thisTopic: REQS,
      otherTopic: TESTS,
    } as const;
    expect(roleOfLink(MODEL, reversed)).toBeUndefined();
    expect(linkWording(MODEL, { ...base, relationType: 'has_parent', direction: 'outgoing' }).before).toBe(
      'child of',
    );
    expect(linkWording([], { ...base, relationType: 'mentions', direction: 'incoming' })).toEqual({
      before: 'mentioned by',
      after: '',
    });
    expect(roleOfLink(MODEL, { ...base, thisTopic: null, direction: 'incoming' })).toBeUndefined();
  });

  it('names internal relation types by their raw name', () => {
    const link = { relationType: 'auto_based_on_template', thisTopic: REQS, otherTopic: null } as const;
    expect(linkWording(MODEL, { ...link, direction: 'outgoing' })).toEqual({
      before: 'linked to',
      after: ' (auto based on template)',
    });
    expect(linkWording(MODEL, { ...link, direction: 'incoming' })).toEqual({
      before: 'linked from',
      after: ' (auto based on template)',
    });
    expect(isInternalRelation('auto_based_on_template')).toBe(true);
    expect(isInternalRelation('is_related')).toBe(false);
  });
});
