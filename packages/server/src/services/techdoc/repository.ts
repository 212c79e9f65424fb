import type {
  KnowledgeTopicRevision,
  KnowledgeTopicStatus,
  KnowledgeTopicType,
  FormSchema,
} from '@rxs/contract';
import type { HistoryRow, RevisionRow } from '../../storage/schema.js';
import { jsonValue } from '../../storage/json.js';

/** A stored revision and its topic's history row, as the API shows them. */
export function toKnowledgeTopicRevision(row: RevisionRow, history: HistoryRow): KnowledgeTopicRevision {
  const current = history.current_revision_id ?? history.latest_revision_id;
  return {
    _id: row.id,
    knowledge_topic_name: row.name,
    type: row.type as KnowledgeTopicType,
    knowledge_topic_history_id: row.history_id,
    product_history_id: row.product_history_id,
    product_version: row.product_version,
    knowledge_unit_history_id: row.knowledge_unit_history_id,
    knowledge_unit_version: row.knowledge_unit_version,
    version: row.version,
    status: row.status as KnowledgeTopicStatus,
    knowledge_topic_schema: jsonValue<FormSchema>(row.schema),
    source_schema_id: row.source_schema_id,
    data: jsonValue<Record<string, unknown>>(row.data),
    product_data_collection_id: null,
    metadata: { tenant_id: row.tenant_id },
    audit_info: {
      user_id_created: row.created_by,
      timestamp_created: row.created_at,
      user_id_last_updated: row.updated_by,
      timestamp_last_updated: row.updated_at,
      last_action: row.last_action === 'updated' ? 'updated' : 'created',
      direct_approval_published_at: row.approved_at,
      direct_approval_published_by: row.approved_by,
    },
    latest_revision_id: current,
    latest_or_latest_approved_revision_id: history.latest_revision_id,
    use_case_config: null,
  };
}
