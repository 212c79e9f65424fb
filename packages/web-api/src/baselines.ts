import { Type, type Static } from '@sinclair/typebox';
import { BASELINE_STATUSES, Nullable, ObjectId } from '@rxs/contract';
import { ApprovalMeaningSchema, KeysetPage, OneOf, RoleSchema } from './common.js';
import { RecordChanges } from './history.js';

/** `GET /api/baselines`: a page of baselines, after the id `after`. */
export const BaselineListQuery = Type.Object({ after: Type.Optional(ObjectId) });
export type BaselineListQuery = Static<typeof BaselineListQuery>;

/** `GET /api/baselines/compare`: a baseline against another, or against now. */
export const BaselineCompareQuery = Type.Object({
  from: ObjectId,
  to: Type.Union([ObjectId, Type.Literal('now')], { default: 'now' }),
  /** The number of differences to skip: the `next` of the page before. */
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
export type BaselineCompareQuery = Static<typeof BaselineCompareQuery>;

/** A topic a baseline includes: its revision id then, and the topic it belongs to. */
export const BaselineTopic = Type.Object({
  revisionId: Type.String(),
  historyId: Nullable(Type.String()),
  name: Type.String(),
  version: Nullable(Type.String()),
});
export type BaselineTopic = Static<typeof BaselineTopic>;

/**
 * A required signer and where they stand: `signed` (with the meaning asked, `at` and an optional
 * reason), `refused` (with its reason, which ended the proposal) or `waiting`.
 */
export const BaselineSignerView = Type.Object({
  userId: Type.String(),
  /** The e-mail the user had when the baseline was proposed. */
  email: Type.String(),
  meaning: ApprovalMeaningSchema,
  state: OneOf(['signed', 'refused', 'waiting'] as const),
  at: Nullable(Type.String()),
  reason: Nullable(Type.String()),
});
export type BaselineSignerView = Static<typeof BaselineSignerView>;

export const BaselineView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  /** The moment the baseline names. */
  at: Type.String(),
  createdAt: Type.String(),
  /** E-mail of the creator, else their user id. */
  createdBy: Type.String(),
  topics: Type.Array(BaselineTopic),
  /** proposed until every signer has signed, then released; one refusal makes it refused. */
  status: OneOf(BASELINE_STATUSES),
  releasedAt: Nullable(Type.String()),
  /** The earlier baseline this one replaces (its name as it is now). */
  supersedes: Nullable(Type.Object({ id: Type.String(), name: Type.String() })),
  /** Empty for a baseline made without signers. */
  signers: Type.Array(BaselineSignerView),
});
export type BaselineView = Static<typeof BaselineView>;

/** `GET /api/baselines`. */
export const BaselineList = KeysetPage(BaselineView);
export type BaselineList = Static<typeof BaselineList>;

/**
 * `GET /api/baselines/signers`: the tenant's users a proposal may ask to sign; `mayApprove` users
 * may be asked for `approved`, every one for `reviewed`.
 */
export const BaselineSignerChoices = Type.Object({
  users: Type.Array(
    Type.Object({
      id: Type.String(),
      email: Type.String(),
      name: Type.String(),
      role: RoleSchema,
      mayApprove: Type.Boolean(),
    }),
  ),
});
export type BaselineSignerChoices = Static<typeof BaselineSignerChoices>;

/** A record that differs between the two sides of a comparison. */
export const RecordDifference = Type.Object({
  id: Type.String(),
  name: Type.String(),
  kind: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('changed')]),
  changes: Nullable(RecordChanges),
});
export type RecordDifference = Static<typeof RecordDifference>;

/** One topic of a comparison of two baselines (or a baseline and now). */
export const TopicComparison = Type.Object({
  historyId: Type.String(),
  name: Type.String(),
  /** added: only in the second; removed: only in the first; present: in both. */
  status: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('present')]),
  fromRevisionId: Nullable(Type.String()),
  toRevisionId: Nullable(Type.String()),
  counts: Type.Object({
    added: Type.Integer(),
    removed: Type.Integer(),
    changed: Type.Integer(),
    unchanged: Type.Integer(),
  }),
  /**
   * This page's differences, in record id order (values cut to 1,000 characters); `omitted` more
   * were counted but not listed (on pages before or after this one).
   */
  differences: Type.Array(RecordDifference),
  omitted: Type.Integer(),
});
export type TopicComparison = Static<typeof TopicComparison>;

/** `GET /api/baselines/compare?from=ID&to=ID|now`. */
export const BaselineComparison = Type.Object({
  from: Type.Object({ id: Type.String(), name: Type.String(), at: Type.String() }),
  /** `id` null: now. */
  to: Type.Object({ id: Nullable(Type.String()), name: Type.String(), at: Type.String() }),
  topics: Type.Array(TopicComparison),
  /** Differences listed at most, over all topics (fewer when they pass the answer's size limit). */
  limit: Type.Integer(),
  /** Differences skipped before this page (the `offset` asked for). */
  offset: Type.Integer(),
  /** The `offset` that lists the differences after this page; null when this page lists the last. */
  next: Nullable(Type.Integer()),
});
export type BaselineComparison = Static<typeof BaselineComparison>;
