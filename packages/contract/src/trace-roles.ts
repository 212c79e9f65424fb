/**
 * A trace model's roles read as traces, and links read as words, without the schema library
 * (plain.ts): the server, the exporter and the browser name and make links with these same
 * functions. Types here are structural so that this module imports nothing of the contract: the
 * trace model's schema (trace-model.ts) builds on it, not the other way round.
 */

/** What of a trace model's role (trace-model.ts `TraceRole`) reading and making traces needs. */
export interface TraceRoleShape {
  from: { topic_history_id: string };
  to: { topic_history_id: string };
  /** Which end of the role is the stored trace's source. */
  trace_source: 'from' | 'to';
  relation_type: string;
  forward_name: string;
  backward_name: string;
}

/** One end of a trace between two records, as `POST /traces/` takes it. */
export interface RecordTraceEnd {
  node_id: string;
  node_type: 'Record';
}

/** A trace between two records, as `POST /traces/` takes it. */
export interface RecordTraceCreate<Relation extends string = string> {
  source: RecordTraceEnd;
  target: RecordTraceEnd;
  relation_type: Relation;
}

/**
 * A role as the model stores it: without the topic names and revisions an answer shows beside
 * (trace-model.ts). Its other fields are optional, so the result is still a `Role`.
 */
export function storedRole<Role extends TraceRoleShape & { id: string }>(role: Role): Role {
  return {
    id: role.id,
    forward_name: role.forward_name,
    backward_name: role.backward_name,
    from: { topic_history_id: role.from.topic_history_id },
    to: { topic_history_id: role.to.topic_history_id },
    trace_source: role.trace_source,
    relation_type: role.relation_type,
  } as Role;
}

/** The topics of a trace's two ends under a role: its contract source and target. */
export function traceTopicsOf(role: TraceRoleShape): { source: string; target: string } {
  const [from, to] = [role.from.topic_history_id, role.to.topic_history_id];
  return role.trace_source === 'from' ? { source: from, target: to } : { source: to, target: from };
}

/** The trace that says "`fromNode` <forward_name> `toNode`" under a role, as `POST /traces/` takes it. */
export function traceCreateOf<Role extends TraceRoleShape>(
  role: Role,
  fromNodeId: string,
  toNodeId: string,
): RecordTraceCreate<Role['relation_type']> {
  const from: RecordTraceEnd = { node_id: fromNodeId, node_type: 'Record' };
  const to: RecordTraceEnd = { node_id: toNodeId, node_type: 'Record' };
  return role.trace_source === 'from'
    ? { source: from, target: to, relation_type: role.relation_type }
    : { source: to, target: from, relation_type: role.relation_type };
}

/**
 * The role a trace names, from the topics (history ids) of its source and target records and its
 * relation type; undefined when none does. Unambiguous for a model without traceModelProblems.
 */
export function roleOfTrace<Role extends TraceRoleShape>(
  model: readonly Role[],
  sourceTopic: string,
  targetTopic: string,
  relationType: string,
): Role | undefined {
  return model.find((role) => {
    const ends = traceTopicsOf(role);
    return ends.source === sourceTopic && ends.target === targetTopic && role.relation_type === relationType;
  });
}

/**
 * How a link reads from one of its records: `name` goes before the other record ("verified by"
 * TC-004), `qualifier` after it (empty, or the raw relation type of a link no wording covers).
 */
export interface LinkReading {
  name: string;
  qualifier: string;
}

/** How each relation type people make reads from its source record and from its target record. */
const RELATION_READINGS: Readonly<Record<string, { outgoing: string; incoming: string }>> = {
  is_related: { outgoing: 'related to', incoming: 'related to' },
  mentions: { outgoing: 'mentions', incoming: 'mentioned by' },
  is_mentioned_by: { outgoing: 'mentioned by', incoming: 'mentions' },
  is_parent: { outgoing: 'parent of', incoming: 'child of' },
  has_parent: { outgoing: 'child of', incoming: 'parent of' },
  contributes_to: { outgoing: 'contributes to', incoming: 'contributed to by' },
  connected_within_use_case: {
    outgoing: 'connected within a use case to',
    incoming: 'connected within a use case to',
  },
};

/** A reading as one phrase: "mentioned by", "linked to (auto based on template)". */
export const readingText = (reading: LinkReading) =>
  reading.qualifier ? `${reading.name} ${reading.qualifier}` : reading.name;

/** A relation type as the raw list names it: "is related", "auto based on template". */
export const relationLabel = (relationType: string) => relationType.replace(/_/g, ' ');

/**
 * How a link no role names reads from one of its records: its source (`outgoing`) or its target.
 * Relation types without a wording of their own (the service's internal `auto_*` ones) read
 * "linked to" / "linked from" with the type after the other record.
 */
export function relationReading(relationType: string, outgoing: boolean): LinkReading {
  const readings = Object.hasOwn(RELATION_READINGS, relationType)
    ? RELATION_READINGS[relationType]
    : undefined;
  if (readings) return { name: outgoing ? readings.outgoing : readings.incoming, qualifier: '' };
  return { name: outgoing ? 'linked to' : 'linked from', qualifier: `(${relationLabel(relationType)})` };
}

/**
 * How a trace reads from one of its records, named by the model's role where one matches (its
 * forward name at the role's `from` end, its backward name at the `to` end), else by its relation
 * type. `outgoing` when the record is the trace's source; the topics are the history ids of the
 * trace's source and target records (null when unknown: then no role matches).
 */
export function linkReading<Role extends TraceRoleShape>(
  model: readonly Role[],
  trace: { sourceTopic: string | null; targetTopic: string | null; relationType: string },
  outgoing: boolean,
): LinkReading & { role?: Role } {
  const role =
    trace.sourceTopic && trace.targetTopic
      ? roleOfTrace(model, trace.sourceTopic, trace.targetTopic, trace.relationType)
      : undefined;
  if (!role) return relationReading(trace.relationType, outgoing);
  // The record stands at the role's `from` end when it is the end the trace starts from.
  const atFrom = (role.trace_source === 'from') === outgoing;
  return { name: atFrom ? role.forward_name : role.backward_name, qualifier: '', role };
}
