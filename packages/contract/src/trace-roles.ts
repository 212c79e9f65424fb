import type { TraceCreate } from './trace.js';
import type { TraceRole } from './trace-model.js';

/**
 * A trace model's roles read as traces, without the schema library (plain.ts): the server, the
 * exporter and the browser name and make links with these same functions.
 */

/** The topics of a trace's two ends under a role: its contract source and target. */
export function traceTopicsOf(role: TraceRole): { source: string; target: string } {
  const [from, to] = [role.from.topic_history_id, role.to.topic_history_id];
  return role.trace_source === 'from' ? { source: from, target: to } : { source: to, target: from };
}

/** The trace that says "`fromNode` <forward_name> `toNode`" under a role, as `POST /traces/` takes it. */
export function traceCreateOf(role: TraceRole, fromNodeId: string, toNodeId: string): TraceCreate {
  const [from, to] = [
    { node_id: fromNodeId, node_type: 'Record' as const },
    { node_id: toNodeId, node_type: 'Record' as const },
  ];
  return role.trace_source === 'from'
    ? { source: from, target: to, relation_type: role.relation_type }
    : { source: to, target: from, relation_type: role.relation_type };
}

/**
 * The role a trace names, from the topics (history ids) of its source and target records and its
 * relation type; undefined when none does. Unambiguous for a model without traceModelProblems.
 */
export function roleOfTrace(
  model: readonly TraceRole[],
  sourceTopic: string,
  targetTopic: string,
  relationType: string,
): TraceRole | undefined {
  return model.find((role) => {
    const ends = traceTopicsOf(role);
    return ends.source === sourceTopic && ends.target === targetTopic && role.relation_type === relationType;
  });
}
