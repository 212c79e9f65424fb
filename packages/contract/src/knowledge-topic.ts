import { Type, type Static } from '@sinclair/typebox';
import { AuditInfo, Nullable, ObjectId, TenantMetadata, Dictionary } from './common.js';
import { FormSchema } from './form.js';

export const KnowledgeTopicType = Type.Union([
  Type.Literal('single_record'),
  Type.Literal('multi_record'),
  Type.Literal('product_data_collection'),
]);
export type KnowledgeTopicType = Static<typeof KnowledgeTopicType>;

export const KnowledgeTopicStatus = Type.Union([Type.Literal('draft'), Type.Literal('approved')]);
export type KnowledgeTopicStatus = Static<typeof KnowledgeTopicStatus>;

export const KtAuditInfo = Type.Intersect([
  AuditInfo,
  Type.Object({
    direct_approval_published_at: Nullable(Type.String({ format: 'date-time' })),
    direct_approval_published_by: Nullable(Type.String()),
  }),
]);
export type KtAuditInfo = Static<typeof KtAuditInfo>;

/** One revision of a knowledge topic, as `GET /kt/{revision_id}` answers it. */
export const KnowledgeTopicRevision = Type.Object({
  _id: ObjectId,
  knowledge_topic_name: Type.String(),
  type: KnowledgeTopicType,
  knowledge_topic_history_id: ObjectId,
  product_history_id: ObjectId,
  product_version: Type.String(),
  knowledge_unit_history_id: ObjectId,
  knowledge_unit_version: Type.String(),
  /** "1.0", "2.0", ...: the approved version this revision is or will become. */
  version: Type.String(),
  status: KnowledgeTopicStatus,
  knowledge_topic_schema: FormSchema,
  source_schema_id: Nullable(ObjectId),
  data: Dictionary(Type.Unknown()),
  product_data_collection_id: Nullable(ObjectId),
  metadata: TenantMetadata,
  audit_info: KtAuditInfo,
  /**
   * The topic's current revision: the newest approved one (the one its records live under), or the
   * newest draft while the topic was never approved. Differs from `_id` after a re-approval.
   */
  latest_revision_id: ObjectId,
  /** The newest revision of any status: an open draft if there is one, else the current revision. */
  latest_or_latest_approved_revision_id: ObjectId,
  use_case_config: Type.Null(),
});
export type KnowledgeTopicRevision = Static<typeof KnowledgeTopicRevision>;

/** `POST /kt/`: a new topic, created as a draft revision. */
export const KnowledgeTopicCreate = Type.Object(
  {
    knowledge_topic_name: Type.String({ minLength: 1, maxLength: 200 }),
    type: KnowledgeTopicType,
    knowledge_topic_schema: FormSchema,
  },
  { additionalProperties: false },
);
export type KnowledgeTopicCreate = Static<typeof KnowledgeTopicCreate>;

/** `PATCH /kt/{id}`: edits a draft revision. */
export const KnowledgeTopicUpdate = Type.Object(
  {
    knowledge_topic_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    knowledge_topic_schema: Type.Optional(FormSchema),
    data: Type.Optional(Dictionary(Type.Unknown())),
  },
  { additionalProperties: false },
);
export type KnowledgeTopicUpdate = Static<typeof KnowledgeTopicUpdate>;
