import { Type, type Static } from '@sinclair/typebox';
import type { Permission } from './auth.js';
import { Nullable } from './common.js';
import type { ValidationErrorItem } from './errors.js';
import { ChangeAuthor, ChangeReason } from './history.js';
import { OBJECT_ID_PATTERN } from './plain.js';
import type { RelationType } from './trace.js';
import { storedRole, traceTopicsOf } from './trace-roles.js';

/**
 * RXS: the trace model of a tenant (`GET`/`PUT /trace-model`): the roles that say what a trace
 * between two knowledge topics means ("Verification Tests verify System Requirements"). A role names
 * traces, it never changes them: a trace keeps its contract `relation_type`, and the role is found
 * again from the topics of the trace's two ends and that relation type. This module is the one place
 * that turns roles into relation types and back; the server, the CLI and the reports ask it.
 */

/**
 * The relation types a role may stand on: those people make. The `auto_*` relation types are made by
 * the reference service itself (a mention in a text editor, a template a document is based on, ...),
 * never by a person linking two records, so no role of a model means one of them.
 */
export const TRACE_MODEL_RELATION_TYPES = [
  'is_related',
  'mentions',
  'is_mentioned_by',
  'is_parent',
  'has_parent',
  'contributes_to',
  'connected_within_use_case',
] as const satisfies readonly RelationType[];
export type TraceModelRelationType = (typeof TRACE_MODEL_RELATION_TYPES)[number];

/** Most roles one model holds: a V-model has about ten; this bounds a model's every read and write. */
export const MAX_TRACE_ROLES = 100;
/** Longest role name ("verified by"). */
export const MAX_TRACE_ROLE_NAME = 100;
/** A role id: a lower-case letter, then lower-case letters, digits, `_` or `-` (also a Sphinx-Needs link name). */
export const TRACE_ROLE_ID_PATTERN = '^[a-z][a-z0-9_-]{0,63}$';

/**
 * Who may replace the model: owners and admins, those who approve topics. The model says what the
 * links between approved topics mean, so it is governed as the topics are.
 */
export const TRACE_MODEL_WRITE_PERMISSION: Permission = 'kt:approve';

/** Which end of a role is the trace's `source` in the contract. */
export const TRACE_SOURCE_ENDS = ['from', 'to'] as const;
export type TraceSourceEnd = (typeof TRACE_SOURCE_ENDS)[number];

/** One end of a role: a knowledge topic by its history id, so a re-approval never breaks the role. */
export const TraceModelTopic = Type.Object(
  {
    topic_history_id: Type.String({
      pattern: OBJECT_ID_PATTERN,
      minLength: 24,
      maxLength: 24,
      description: "The topic's history id (`knowledge_topic_history_id`), not a revision id",
    }),
    topic_name: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 500,
          description: "The topic's current name, shown beside the id in answers; ignored when sent",
        }),
      ),
    ),
    current_revision_id: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 64,
          description:
            "The topic's current revision id (the one its records live under), in answers; ignored when sent",
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type TraceModelTopic = Static<typeof TraceModelTopic>;

const roleName = (example: string, end: string) =>
  Type.String({
    minLength: 1,
    maxLength: MAX_TRACE_ROLE_NAME,
    description: `How the role reads from its \`${end}\` topic, e.g. "${example}"`,
  });

export const TraceRole = Type.Object(
  {
    id: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: TRACE_ROLE_ID_PATTERN,
      description: 'Unique in the model, e.g. "verifies": a lower-case letter, then a-z 0-9 _ -',
    }),
    forward_name: roleName('verifies', 'from'),
    backward_name: roleName('verified by', 'to'),
    from: TraceModelTopic,
    to: TraceModelTopic,
    trace_source: Type.Union(
      TRACE_SOURCE_ENDS.map((end) => Type.Literal(end)),
      {
        description:
          "Which end is the trace's `source` in the contract: `from` (a trace from a record of `from` to one of `to`) or `to`",
      },
    ),
    relation_type: Type.Unsafe<TraceModelRelationType>(
      Type.Union(
        TRACE_MODEL_RELATION_TYPES.map((t) => Type.Literal(t)),
        { description: "The traces' `relation_type` in the contract (stays what it is; the role names it)" },
      ),
    ),
  },
  { additionalProperties: false },
);
export type TraceRole = Static<typeof TraceRole>;

const roles = Type.Array(TraceRole, {
  maxItems: MAX_TRACE_ROLES,
  description:
    'In the order of the V: the topics of the roles, each `to` before its `from`, are the default chain of `rxs trace-report`',
});

/** `GET /trace-model`: the model as it is; version 0 and no roles before the first `PUT`. */
export const TraceModel = Type.Object({
  version: Type.Integer({
    minimum: 0,
    description: 'Raised by every change; send it back with `PUT` (0 before the first)',
  }),
  roles,
  updated_at: Nullable(Type.String({ description: 'When the model last changed (ISO 8601 UTC)' })),
  updated_by: Nullable(Type.String({ description: 'Who changed it last (user id)' })),
});
export type TraceModel = Static<typeof TraceModel>;

/** `PUT /trace-model`: the whole model, replacing the one at `version`. */
export const TraceModelPut = Type.Object(
  {
    version: Type.Integer({
      minimum: 0,
      description:
        'The version the change is based on (from `GET /trace-model`); when the model has moved on since, 409',
    }),
    roles,
    change_reason: Type.Optional(Nullable(ChangeReason)),
    updated_at: Type.Optional(Nullable(Type.String({ maxLength: 40, description: 'Ignored when sent' }))),
    updated_by: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'Ignored when sent' }))),
  },
  { additionalProperties: false },
);
export type TraceModelPut = Static<typeof TraceModelPut>;

/** What one change did, by role id: roles added, removed and changed, and whether their order moved. */
export const TraceModelChanges = Type.Object({
  added: Type.Array(Type.String()),
  removed: Type.Array(Type.String()),
  changed: Type.Array(Type.String()),
  reordered: Type.Boolean(),
});
export type TraceModelChanges = Static<typeof TraceModelChanges>;

/** `GET /trace-model/history`: one version of the model, who made it, when, why, and what changed. */
export const TraceModelVersion = Type.Composite([
  Type.Object({
    version: Type.Integer({ minimum: 1 }),
    changes: TraceModelChanges,
    /** The roles as this version left them (topics by history id). */
    roles: Type.Array(TraceRole),
  }),
  ChangeAuthor,
]);
export type TraceModelVersion = Static<typeof TraceModelVersion>;

export {
  linkReading,
  readingText,
  relationLabel,
  relationReading,
  roleOfTrace,
  storedRole,
  traceCreateOf,
  traceTopicsOf,
  type LinkReading,
  type TraceRoleShape,
} from './trace-roles.js';

const traceKey = (source: string, target: string, relationType: string) =>
  `${source}\u0000${target}\u0000${relationType}`;

/**
 * The model's topics in the order of the V (history ids): per role in order, its `to` topic (what is
 * verified, implemented, derived from), then its `from` topic; each topic once, where first met.
 */
export function traceModelChain(model: readonly TraceRole[]): string[] {
  const chain = new Set<string>();
  for (const role of model) chain.add(role.to.topic_history_id).add(role.from.topic_history_id);
  return [...chain];
}

/**
 * The current revisions of the roles' topics in the order of the V (traceModelChain), as a report
 * over the model takes them; or the first topic that has no approved revision yet.
 */
export function traceChainRevisions(
  roles: readonly TraceRole[],
): { revisionIds: string[] } | { unapproved: { historyId: string; name: string | null } } {
  const topics = new Map(roles.flatMap((role) => [role.from, role.to]).map((t) => [t.topic_history_id, t]));
  const revisionIds: string[] = [];
  for (const historyId of traceModelChain(roles)) {
    const topic = topics.get(historyId)!;
    if (!topic.current_revision_id) return { unapproved: { historyId, name: topic.topic_name ?? null } };
    revisionIds.push(topic.current_revision_id);
  }
  return { revisionIds };
}

/** What changed from one model to the next, by role id (names shown beside topics do not count). */
export function traceModelChanges(
  before: readonly TraceRole[],
  after: readonly TraceRole[],
): TraceModelChanges {
  const old = new Map(before.map((role) => [role.id, JSON.stringify(storedRole(role))]));
  const now = new Set(after.map((role) => role.id));
  const kept = (ids: string[]) => ids.filter((id) => old.has(id) && now.has(id));
  return {
    added: after.filter((role) => !old.has(role.id)).map((role) => role.id),
    removed: before.filter((role) => !now.has(role.id)).map((role) => role.id),
    changed: after
      .filter((role) => old.has(role.id) && old.get(role.id) !== JSON.stringify(storedRole(role)))
      .map((role) => role.id),
    reordered:
      kept(before.map((role) => role.id)).join('\u0000') !==
      kept(after.map((role) => role.id)).join('\u0000'),
  };
}

/** Whether a change did anything. */
export function isNoChange(changes: TraceModelChanges): boolean {
  return (
    changes.added.length === 0 &&
    changes.removed.length === 0 &&
    changes.changed.length === 0 &&
    !changes.reordered
  );
}

const normalName = (name: string) => name.trim().replace(/\s+/g, ' ').toLowerCase();

/**
 * What is wrong with a model's roles on their own (not whether their topics exist: that takes the
 * tenant), as 422 items under `at`, one per problem: ids used twice; blank names; a name that does
 * not tell the roles of a topic pair apart (every forward and backward name of the roles joining the
 * same two topics differs, case and spacing aside); two roles that would name the same traces (same
 * source topic, target topic and relation type), so that every trace names one role at most.
 */
export function traceModelProblems(
  model: readonly TraceRole[],
  at: (string | number)[] = ['body', 'roles'],
): ValidationErrorItem[] {
  const problems: ValidationErrorItem[] = [];
  const problem = (index: number, field: string, msg: string) =>
    problems.push({ loc: [...at, index, field], msg, type: 'value_error' });
  const ids = new Map<string, number>();
  const names = new Map<string, { index: number; field: string }>();
  const traces = new Map<string, number>();
  model.forEach((role, index) => {
    const first = ids.get(role.id);
    if (first === undefined) ids.set(role.id, index);
    else
      problem(
        index,
        'id',
        `Role id "${role.id}" is already the id of roles[${first}]; give each role its own id.`,
      );

    const pair = [role.from.topic_history_id, role.to.topic_history_id].sort().join('\u0000');
    for (const field of ['forward_name', 'backward_name'] as const) {
      const name = normalName(role[field]);
      if (name === '') {
        problem(
          index,
          field,
          `The ${field} of role "${role.id}" is blank; say how the role reads, e.g. "verifies".`,
        );
        continue;
      }
      const key = `${pair}\u0000${name}`;
      const taken = names.get(key);
      if (taken === undefined) names.set(key, { index, field });
      else if (taken.index === index)
        problem(
          index,
          field,
          `Role "${role.id}" reads "${role[field].trim()}" both ways; its forward_name and backward_name must differ.`,
        );
      else
        problem(
          index,
          field,
          `"${role[field].trim()}" already names roles[${taken.index}] (${model[taken.index]!.id}) between the same two topics; each name must tell the roles of a topic pair apart.`,
        );
    }

    const ends = traceTopicsOf(role);
    const key = traceKey(ends.source, ends.target, role.relation_type);
    const same = traces.get(key);
    if (same === undefined) traces.set(key, index);
    else
      problem(
        index,
        'relation_type',
        `roles[${same}] (${model[same]!.id}) already names the traces of relation type "${role.relation_type}" from the same source topic to the same target topic; give role "${role.id}" another relation type, so that a trace names one role.`,
      );
  });
  return problems;
}
