import { Type, type Static } from '@sinclair/typebox';
import {
  Approval,
  ChangeReason,
  FormSchema,
  KnowledgeTopicRevision,
  KnowledgeTopicStatus,
  KnowledgeTopicType,
  Nullable,
  ObjectId,
} from '@rxs/contract';
import { ApprovalMeaningSchema, KeysetPage } from './common.js';
import { FieldColumn } from './records.js';
import { Password } from './session.js';

/** `GET /api/topics`: the current revision of each topic, by name, a page at a time. */
export const TopicPageQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 200 })),
  after: Type.Optional(ObjectId),
});
export type TopicPageQuery = Static<typeof TopicPageQuery>;

export const TopicSummary = Type.Object({
  historyId: Type.String(),
  name: Type.String(),
  type: KnowledgeTopicType,
  /** The approved revision records live under; null before the first approval. */
  currentRevisionId: Nullable(Type.String()),
  currentVersion: Nullable(Type.String()),
  /** An open draft, if any. */
  draftRevisionId: Nullable(Type.String()),
  recordCount: Type.Integer(),
  updatedAt: Type.String(),
});
export type TopicSummary = Static<typeof TopicSummary>;

export const TopicList = KeysetPage(TopicSummary);
export type TopicList = Static<typeof TopicList>;

export const RevisionSummary = Type.Object({
  id: Type.String(),
  version: Type.String(),
  status: KnowledgeTopicStatus,
  createdAt: Type.String(),
  createdBy: Nullable(Type.String()),
  approvedAt: Nullable(Type.String()),
  approvedBy: Nullable(Type.String()),
  isCurrent: Type.Boolean(),
  recordCount: Type.Integer(),
});
export type RevisionSummary = Static<typeof RevisionSummary>;

/** `GET /api/topics/{historyId}`. */
export const TopicDetail = Type.Object({
  historyId: Type.String(),
  name: Type.String(),
  type: KnowledgeTopicType,
  currentRevisionId: Nullable(Type.String()),
  draftRevisionId: Nullable(Type.String()),
  /** The current revision (or the only draft, before the first approval), with its schema. */
  revision: KnowledgeTopicRevision,
  fields: Type.Array(FieldColumn),
  /** Newest first. */
  revisions: Type.Array(RevisionSummary),
  recordCount: Type.Integer(),
  /** Who approved the current revision, when, with what meaning and why; null before the first approval. */
  approval: Nullable(Approval),
});
export type TopicDetail = Static<typeof TopicDetail>;

/** `POST /api/revisions/{id}/impact`: the draft's form, or this one instead. */
export const ApprovalImpactBody = Type.Object(
  { knowledge_topic_schema: Type.Optional(FormSchema) },
  { additionalProperties: false },
);
export type ApprovalImpactBody = Static<typeof ApprovalImpactBody>;

/** `POST /api/revisions/{id}/impact`: the topic's records checked against the draft's form. */
export const ApprovalImpact = Type.Object({
  checked: Type.Integer(),
  /** Records that would not validate (could not be saved until fixed) under the new form. */
  failing: Type.Integer(),
  /** The first of them, with the problems a save would answer. */
  examples: Type.Array(
    Type.Object({ id: Type.String(), name: Type.String(), problems: Type.Array(Type.String()) }),
  ),
});
export type ApprovalImpact = Static<typeof ApprovalImpact>;

/** `POST /api/revisions/{id}/approve`. */
export const ApproveBody = Type.Object(
  {
    /** The approver signs by entering their password again (21 CFR Part 11 §11.200). */
    password: Password,
    meaning: ApprovalMeaningSchema,
    reason: Type.Optional(ChangeReason),
  },
  { additionalProperties: false },
);
export type ApproveBody = Static<typeof ApproveBody>;

/** `POST /api/revisions/{id}/approve`: the approved revision and what moved to it. */
export const ApprovalResult = Type.Object({
  revision: KnowledgeTopicRevision,
  /** The revision that was current before, when this was a re-approval. */
  previousRevisionId: Nullable(Type.String()),
  /** Records that moved to the new revision. */
  recordsMoved: Type.Integer(),
});
export type ApprovalResult = Static<typeof ApprovalResult>;
