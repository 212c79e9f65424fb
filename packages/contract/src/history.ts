import { Type, type Static } from '@sinclair/typebox';
import { Nullable, ObjectId } from './common.js';
import { ServiceRecord } from './record.js';

/**
 * Record history, approvals and baselines: RXS's own extension of the interface (the document
 * keeps no history). Every change of a record appends an immutable version; `as_of` reads the
 * state at a moment; a baseline names a moment over some topics.
 */

/** Longest `change_reason` a change may carry. */
export const MAX_CHANGE_REASON = 2000;
export const ChangeReason = Type.String({
  maxLength: MAX_CHANGE_REASON,
  description: 'Why the change was made; kept in the record history',
});

/** `as_of`: an ISO 8601 date-time (UTC when no zone) not in the future. */
const AS_OF_DESCRIPTION =
  'Read the state at this moment (ISO 8601 date-time, e.g. 2026-11-01T12:00:00Z): what was there then, exactly as it was';
export const AsOf = Type.String({ maxLength: 40, description: AS_OF_DESCRIPTION });

export const RECORD_VERSION_ACTIONS = ['created', 'updated', 'deleted', 'moved', 'restored'] as const;
export type RecordVersionAction = (typeof RECORD_VERSION_ACTIONS)[number];

/** How a change reached the service. */
export const CHANGE_CHANNELS = ['api-key', 'session', 'local', 'upgrade'] as const;
export type ChangeChannel = (typeof CHANGE_CHANNELS)[number];

/** Who made a change, when and how. */
export const ChangeAuthor = Type.Object({
  at: Type.String({ description: 'When (ISO 8601 UTC)' }),
  user_id: Type.String(),
  /** The user's e-mail, when the user still exists. */
  user_email: Nullable(Type.String()),
  /** The API key's public id, when the change came with one. */
  key_id: Nullable(Type.String()),
  via: Type.Union(CHANGE_CHANNELS.map((c) => Type.Literal(c))),
  reason: Nullable(Type.String()),
});
export type ChangeAuthor = Static<typeof ChangeAuthor>;

/** `GET /records/{id}/versions/{n}`: one version of a record, the record as the change left it. */
export const RecordVersion = Type.Composite([
  Type.Object({
    record_id: ObjectId,
    n: Type.Integer({ minimum: 1, description: '1 for the creation, then one more per change' }),
    action: Type.Union(RECORD_VERSION_ACTIONS.map((a) => Type.Literal(a))),
  }),
  ChangeAuthor,
  Type.Object({ record: ServiceRecord }),
]);
export type RecordVersion = Static<typeof RecordVersion>;

export const APPROVAL_MEANINGS = ['approved', 'reviewed'] as const;
export type ApprovalMeaning = (typeof APPROVAL_MEANINGS)[number];

/** `GET /kt/{id}/approval`: who approved a revision, when, what it means and how it was signed. */
export const Approval = Type.Object({
  revision_id: ObjectId,
  approved_by: Type.String(),
  approved_by_email: Nullable(Type.String()),
  approved_at: Type.String(),
  meaning: Type.Union(APPROVAL_MEANINGS.map((m) => Type.Literal(m))),
  reason: Nullable(Type.String()),
  /** `password`: re-entered in the web app; `api-key`: the key of the call; `none`: before signatures existed. */
  signature: Type.Union([Type.Literal('password'), Type.Literal('api-key'), Type.Literal('none')]),
});
export type Approval = Static<typeof Approval>;

export const MAX_BASELINE_NAME = 200;
export const MAX_BASELINE_REVISIONS = 100;

/** `POST /baselines/` body. */
export const BaselineCreate = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: MAX_BASELINE_NAME,
      description: 'Unique in the tenant, e.g. v1.0',
    }),
    description: Type.Optional(Type.String({ maxLength: MAX_CHANGE_REASON })),
    knowledge_topic_revision_ids: Type.Array(ObjectId, { minItems: 1, maxItems: MAX_BASELINE_REVISIONS }),
    at: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'The moment the baseline names (default: now); not in the future',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BaselineCreate = Static<typeof BaselineCreate>;

/** A named, immutable point in time over one or more topics. */
export const Baseline = Type.Object({
  _id: ObjectId,
  name: Type.String(),
  description: Type.String(),
  at: Type.String(),
  knowledge_topic_revision_ids: Type.Array(ObjectId),
  created_by: Type.String(),
  created_at: Type.String(),
});
export type Baseline = Static<typeof Baseline>;
