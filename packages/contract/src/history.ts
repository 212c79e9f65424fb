import { Type, type Static } from '@sinclair/typebox';
import { Nullable, OBJECT_ID_PATTERN, ObjectId } from './common.js';
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

/** Signers a proposal may ask for at most. */
export const MAX_BASELINE_SIGNERS = 20;

const Meaning = Type.Union(APPROVAL_MEANINGS.map((m) => Type.Literal(m)));

/** One required signer of a proposed baseline, as the proposal names them. */
export const BaselineSignerRequest = Type.Object(
  {
    user: Type.String({
      minLength: 1,
      maxLength: 320,
      description: 'A user of your tenant, by e-mail or id',
    }),
    meaning: Type.Optional(
      Type.Union(
        APPROVAL_MEANINGS.map((m) => Type.Literal(m)),
        {
          description:
            'What their signature will mean (default `approved`, which needs a role with kt:approve)',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type BaselineSignerRequest = Static<typeof BaselineSignerRequest>;

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
    signers: Type.Optional(
      Type.Array(BaselineSignerRequest, {
        minItems: 1,
        maxItems: MAX_BASELINE_SIGNERS,
        description:
          'RXS: who must sign before the baseline is released. With signers it is `proposed` until each has signed with the meaning asked of them; without, it is `released` at once',
      }),
    ),
    supersedes: Type.Optional(
      Type.String({
        pattern: OBJECT_ID_PATTERN,
        minLength: 24,
        maxLength: 24,
        description: 'RXS: the id of an earlier baseline this one replaces (it stays as it is)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BaselineCreate = Static<typeof BaselineCreate>;

export const BASELINE_STATUSES = ['proposed', 'released', 'refused'] as const;
export type BaselineStatus = (typeof BASELINE_STATUSES)[number];

/** A required signer: who, and the meaning their signature must carry. */
export const BaselineSigner = Type.Object({
  user_id: Type.String(),
  email: Type.String({ description: 'The e-mail the user had when the baseline was proposed' }),
  meaning: Meaning,
});
export type BaselineSigner = Static<typeof BaselineSigner>;

/** A signature given: who, what it means, when and why; always by re-entering the password. */
export const BaselineSignature = Type.Object({
  user_id: Type.String(),
  email: Type.String(),
  meaning: Meaning,
  reason: Nullable(Type.String()),
  signed_at: Type.String(),
});
export type BaselineSignature = Static<typeof BaselineSignature>;

/** The refusal that ended a proposal. */
export const BaselineRefusal = Type.Object({
  user_id: Type.String(),
  email: Type.String(),
  reason: Type.String(),
  refused_at: Type.String(),
});
export type BaselineRefusal = Static<typeof BaselineRefusal>;

/**
 * A named, immutable point in time over one or more topics. RXS: with required signers it is
 * `proposed` until each has signed with the meaning asked of them, then `released`; one refusal
 * ends it as `refused`. A released or refused baseline never changes; a later one may supersede it.
 */
export const Baseline = Type.Object({
  _id: ObjectId,
  name: Type.String(),
  description: Type.String(),
  at: Type.String(),
  knowledge_topic_revision_ids: Type.Array(ObjectId),
  created_by: Type.String(),
  created_at: Type.String(),
  status: Type.Union(BASELINE_STATUSES.map((s) => Type.Literal(s))),
  released_at: Nullable(Type.String({ description: 'When the last required signature came in' })),
  supersedes: Nullable(ObjectId),
  required_signers: Type.Array(BaselineSigner, { description: 'Empty for a baseline made without signers' }),
  signatures: Type.Array(BaselineSignature, { description: 'In the order they were given' }),
  refusal: Nullable(BaselineRefusal),
});
export type Baseline = Static<typeof Baseline>;

/** `POST /baselines/{id}/signatures` body. */
export const BaselineSignatureCreate = Type.Object(
  {
    meaning: Type.Union(
      APPROVAL_MEANINGS.map((m) => Type.Literal(m)),
      { description: 'The meaning asked of you when the baseline was proposed' },
    ),
    password: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'Your web sign-in password, entered again to sign',
    }),
    reason: Type.Optional(ChangeReason),
  },
  { additionalProperties: false },
);
export type BaselineSignatureCreate = Static<typeof BaselineSignatureCreate>;

/** `POST /baselines/{id}/refusals` body. */
export const BaselineRefusalCreate = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: MAX_CHANGE_REASON,
      description: 'Why you refuse; kept with the baseline',
    }),
    password: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'Your web sign-in password, entered again to refuse',
    }),
  },
  { additionalProperties: false },
);
export type BaselineRefusalCreate = Static<typeof BaselineRefusalCreate>;

export const BASELINE_EVENT_ACTIONS = ['proposed', 'signed', 'refused', 'released'] as const;
export type BaselineEventAction = (typeof BASELINE_EVENT_ACTIONS)[number];

/** `GET /baselines/{id}/history`: one step of a baseline, oldest first. */
export const BaselineEvent = Type.Object({
  n: Type.Integer({ minimum: 1 }),
  action: Type.Union(BASELINE_EVENT_ACTIONS.map((a) => Type.Literal(a))),
  at: Type.String(),
  user_id: Type.String(),
  user_email: Type.String({ description: 'The e-mail the user had at that moment' }),
  key_id: Nullable(Type.String()),
  via: Type.Union(CHANGE_CHANNELS.map((c) => Type.Literal(c))),
  meaning: Nullable(Meaning),
  reason: Nullable(Type.String()),
});
export type BaselineEvent = Static<typeof BaselineEvent>;
