import type { RecordRow } from './schema.js';
import { jsonText } from './json.js';

/**
 * A record as one line of JSON, built from the stored JSON text without parsing it: listings of
 * 100 000 records are mostly this function. The output never contains a raw newline, which is what
 * lets clients read a listing line by line.
 */
export function recordJson(row: RecordRow): string {
  const context = jsonText(row.context);
  const contextJson =
    `{"knowledge_unit_topic_id":${JSON.stringify(row.kt_revision_id)}` +
    (context.length > 2 ? `,${context.slice(1)}` : '}');
  return (
    `{"_id":"${row.id}","name":${JSON.stringify(row.name)},"form":${jsonText(row.form)},` +
    `"version":${JSON.stringify(row.version)},"data":${jsonText(row.data)},"read_only":${row.read_only ? 'true' : 'false'},` +
    `"metadata":{"tenant_id":${JSON.stringify(row.tenant_id)}},"context":${contextJson},` +
    `"audit_info":{"user_id_created":${JSON.stringify(row.created_by)},"timestamp_created":${JSON.stringify(row.created_at)},` +
    `"user_id_last_updated":${JSON.stringify(row.updated_by)},"timestamp_last_updated":${JSON.stringify(row.updated_at)},` +
    `"last_action":${JSON.stringify(row.last_action)}}}`
  );
}

/** The columns of a record's row besides its id: each of its versions holds them too. */
export const RECORD_ROW_COLUMNS = [
  'tenant_id',
  'kt_revision_id',
  'name',
  'form',
  'version',
  'data',
  'read_only',
  'context',
  'created_by',
  'created_at',
  'updated_by',
  'updated_at',
  'last_action',
] as const satisfies readonly Exclude<keyof RecordRow, 'id'>[];
