import { describe, expect, it } from 'vitest';
import {
  roleOfTrace,
  traceCreateOf,
  traceModelChain,
  traceModelChanges,
  traceModelProblems,
  type TraceRole,
} from './trace-model.js';

const [UN, REQ, DO, TC] = ['1', '2', '3', '4'].map((c) => c.repeat(24)) as [string, string, string, string];

const role = (id: string, from: string, to: string, extra: Partial<TraceRole> = {}): TraceRole => ({
  id,
  forward_name: `${id}s`,
  backward_name: `${id}d by`,
  from: { topic_history_id: from },
  to: { topic_history_id: to },
  trace_source: 'from',
  relation_type: 'is_related',
  ...extra,
});

const V = [
  role('derive', REQ, UN, { trace_source: 'to', relation_type: 'contributes_to' }),
  role('implement', DO, REQ, { trace_source: 'to' }),
  role('verify', TC, REQ),
];

/** The trace model's one module: roles to relation types and back, the V's order, changes, problems. */
describe('the trace model', () => {
  it('finds the role of a trace by its topics and relation type, in the contract direction', () => {
    expect(roleOfTrace(V, UN, REQ, 'contributes_to')?.id).toBe('derive');
    expect(roleOfTrace(V, REQ, UN, 'contributes_to')).toBeUndefined();
    expect(roleOfTrace(V, REQ, DO, 'is_related')?.id).toBe('implement');
    expect(roleOfTrace(V, TC, REQ, 'is_related')?.id).toBe('verify');
    expect(roleOfTrace(V, TC, REQ, 'mentions')).toBeUndefined();
  });

  it('makes the trace a role reads as "from <forward_name> to"', () => {
    expect(traceCreateOf(V[0]!, 'req', 'need')).toEqual({
      source: { node_id: 'need', node_type: 'Record' },
      target: { node_id: 'req', node_type: 'Record' },
      relation_type: 'contributes_to',
    });
    expect(traceCreateOf(V[2]!, 'test', 'req').source.node_id).toBe('test');
  });

  it('orders the topics as the V: each role’s `to`, then its `from`, each once', () => {
    expect(traceModelChain(V)).toEqual([UN, REQ, DO, TC]);
    expect(traceModelChain([])).toEqual([]);
  });

  it('says what changed by role id; names shown beside topics are no change', () => {
    const named = V.map((r) => ({
      ...r,
      from: { ...r.from, topic_name: 'shown', current_revision_id: null },
    }));
    expect(traceModelChanges(V, named)).toEqual({ added: [], removed: [], changed: [], reordered: false });
    expect(
      traceModelChanges(V, [role('validate', TC, UN), V[2]!, { ...V[0]!, forward_name: 'refines' }]),
    ).toEqual({ added: ['validate'], removed: ['implement'], changed: ['derive'], reordered: true });
  });

  it('has no problem with the V; names each problem at its place', () => {
    expect(traceModelProblems(V)).toEqual([]);
    const problems = traceModelProblems([
      ...V,
      role('verify', UN, DO),
      role('check', TC, REQ, { forward_name: 'VERIFYs ', relation_type: 'mentions' }),
      role('loop', UN, UN, { forward_name: 'refines', backward_name: 'Refines' }),
      role('again', REQ, TC, { trace_source: 'to', forward_name: 'a', backward_name: 'b' }),
    ]);
    expect(problems.map((p) => `${p.loc.join('.')}: ${p.msg}`)).toEqual([
      expect.stringMatching(/^body\.roles\.3\.id: Role id "verify" is already the id of roles\[2\]/),
      expect.stringMatching(/^body\.roles\.4\.forward_name: "VERIFYs" already names roles\[2\] \(verify\)/),
      expect.stringMatching(/^body\.roles\.5\.backward_name: Role "loop" reads "Refines" both ways/),
      expect.stringMatching(/^body\.roles\.6\.relation_type: roles\[2\] \(verify\) already names the traces/),
    ]);
  });
});
