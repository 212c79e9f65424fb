import {
  relationLabel,
  relationReading,
  roleOfTrace,
  traceCreateOf,
  type RecordTraceCreate,
} from '@rxs/contract/plain';
import type { RelationType, TraceRole } from '@rxs/web-api';

/**
 * Links named by the tenant's trace model. A role ("Verification Tests verify System Requirements")
 * joins a `from` topic to a `to` topic; it reads forward from a record of `from` ("verifies") and
 * backward from a record of `to` ("verified by"). A link is always a trace from the role's
 * `from` record to its `to` record in the role's sense, stored as the contract's relation type in the
 * direction `trace_source` says; the role is found again from the topics of the two ends and that
 * relation type (the contract's trace-roles module, which the server uses too).
 */

/** Which end of a role a record stands at. */
export type RoleEnd = 'from' | 'to';

/** A way to link a record of one topic: a role, read from this record's end. */
export interface RoleChoice {
  /** Unique among a topic's choices: the role id and this record's end ("verifies:to"). */
  key: string;
  role: TraceRole;
  /** This record's end of the role. */
  end: RoleEnd;
  /** The role read from this record: its forward name at `from`, its backward name at `to`. */
  name: string;
  /** The topic the record at the other end belongs to (history id) and its name when known. */
  otherTopic: { historyId: string; name: string | null };
}

/** A trace as `POST /api/traces` takes it, between two records. */
export type RecordTrace = RecordTraceCreate<RelationType>;

const other = (end: RoleEnd): RoleEnd => (end === 'from' ? 'to' : 'from');

/** The name of a role read from one end. */
export const roleName = (role: TraceRole, end: RoleEnd) =>
  end === 'from' ? role.forward_name : role.backward_name;

/**
 * The roles a record of a topic (history id) can take part in, in the model's order: from its `from`
 * end where the topic is the role's `from` topic, from its `to` end where it is the `to` topic (both
 * for a role between records of one topic).
 */
export function roleChoices(roles: readonly TraceRole[], topicHistoryId: string | null): RoleChoice[] {
  if (!topicHistoryId) return [];
  const choices: RoleChoice[] = [];
  for (const role of roles) {
    for (const end of ['from', 'to'] as const) {
      if (role[end].topic_history_id !== topicHistoryId) continue;
      const far = role[other(end)];
      choices.push({
        key: `${role.id}:${end}`,
        role,
        end,
        name: roleName(role, end),
        otherTopic: { historyId: far.topic_history_id, name: far.topic_name ?? null },
      });
    }
  }
  return choices;
}

/**
 * The trace a choice makes between this record and another: from the role's `from` record to its
 * `to` record, whichever of the two this page shows, stored the way round `trace_source` says.
 */
export function traceOfChoice(choice: RoleChoice, thisRecordId: string, otherRecordId: string): RecordTrace {
  const [fromRecord, toRecord] =
    choice.end === 'from' ? [thisRecordId, otherRecordId] : [otherRecordId, thisRecordId];
  return traceCreateOf(choice.role, fromRecord, toRecord);
}

/** A trace made with a raw relation type: `outgoing` when this record is its source. */
export function traceOfRelation(
  relationType: RelationType,
  direction: 'outgoing' | 'incoming',
  thisRecordId: string,
  otherRecordId: string,
): RecordTrace {
  const self = { node_id: thisRecordId, node_type: 'Record' as const };
  const far = { node_id: otherRecordId, node_type: 'Record' as const };
  return direction === 'outgoing'
    ? { source: self, target: far, relation_type: relationType }
    : { source: far, target: self, relation_type: relationType };
}

/** A link of a record as its page sees it. */
export interface LinkEnds {
  direction: 'outgoing' | 'incoming';
  relationType: RelationType;
  /** History ids of this record's topic and of the other record's. */
  thisTopic: string | null;
  otherTopic: string | null;
}

/**
 * The role a link stands for, with this record's end; undefined when its topics and relation type
 * match no role (or a topic is unknown).
 */
export function roleOfLink(
  roles: readonly TraceRole[],
  link: LinkEnds,
): { role: TraceRole; end: RoleEnd } | undefined {
  if (!link.thisTopic || !link.otherTopic) return undefined;
  const [sourceTopic, targetTopic] =
    link.direction === 'outgoing' ? [link.thisTopic, link.otherTopic] : [link.otherTopic, link.thisTopic];
  const role = roleOfTrace(roles, sourceTopic, targetTopic, link.relationType);
  // This record is the trace's source when the link is outgoing.
  const sourceEnd = role?.trace_source;
  return role && sourceEnd && { role, end: link.direction === 'outgoing' ? sourceEnd : other(sourceEnd) };
}

/** Relation types the reference service makes by itself (mentions in editors, templates, ...). */
export const isInternalRelation = (type: string) => type.startsWith('auto_');

export { relationLabel };

/**
 * How a link reads on this record's page, around the other record's label: `before` it, then the
 * label, then `after` it ("verified by" TC-004; "mentioned by" REQ-1; "linked to" REQ-2 "(auto
 * based on template)"). A role is named from this record's end; a link no role names reads by its
 * relation type (the contract's trace-roles module, as the document view and the exports read it).
 */
export function linkWording(roles: readonly TraceRole[], link: LinkEnds): { before: string; after: string } {
  const found = roleOfLink(roles, link);
  if (found) return { before: roleName(found.role, found.end), after: '' };
  const reading = relationReading(link.relationType, link.direction === 'outgoing');
  return { before: reading.name, after: reading.qualifier && ` ${reading.qualifier}` };
}
