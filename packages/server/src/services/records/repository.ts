import { sql, type RawBuilder } from 'kysely';
import type { RecordContext, ServiceRecord } from '@rxs/contract';
import type { RecordRow } from '../../storage/schema.js';
import type { SqlSyntax } from '../../storage/database.js';
import { recordJson } from '../../storage/record-json.js';

export { recordJson };

/**
 * SQL for `prefix` + `recordJson(row)`, byte for byte, built by the database itself: a listing then
 * never materialises rows as JS objects. Text is quoted as `JSON.stringify` quotes it
 * (`syntax.jsonString`), and the stored JSON columns are spliced in as the text written. Columns the
 * query pins to one value (`known`) come in as parameters, already JSON. The records-listing tests
 * hold this and `recordJson` together.
 */
export function recordJsonSql(
  syntax: SqlSyntax,
  prefix: string,
  known: { tenantId?: string; revisionId?: string } = {},
): RawBuilder<string> {
  const text = (value: string) => sql.lit(value);
  const quote = (column: keyof RecordRow) => syntax.jsonString(sql.ref(column));
  const pinned = (column: keyof RecordRow, value: string | undefined) =>
    value === undefined ? quote(column) : syntax.asText(sql`${JSON.stringify(value)}`);
  const context = syntax.asText(sql.ref('context'));
  const parts = [
    text(`${prefix}{"_id":"`),
    sql.ref('id'),
    text('","name":'),
    quote('name'),
    text(',"form":'),
    sql.ref('form'),
    text(',"version":'),
    quote('version'),
    text(',"data":'),
    sql.ref('data'),
    text(',"read_only":'),
    sql`(CASE WHEN "read_only" <> 0 THEN 'true' ELSE 'false' END)`,
    text(',"metadata":{"tenant_id":'),
    pinned('tenant_id', known.tenantId),
    text('},"context":{"knowledge_unit_topic_id":'),
    pinned('kt_revision_id', known.revisionId),
    // `{}` alone closes the context; anything longer (always `{"...` as stored) continues it. Its
    // byte length decides as its UTF-16 length does in recordJson: both exceed 2 for any object
    // but `{}`, and octet_length() needs no pass over the text.
    sql`(CASE WHEN octet_length(${context}) > 2 THEN ',' ELSE '' END)`,
    sql`substr(${context}, 2)`,
    text(',"audit_info":{"user_id_created":'),
    quote('created_by'),
    text(',"timestamp_created":'),
    quote('created_at'),
    text(',"user_id_last_updated":'),
    quote('updated_by'),
    text(',"timestamp_last_updated":'),
    quote('updated_at'),
    text(',"last_action":'),
    quote('last_action'),
    text('}}'),
  ];
  return sql<string>`concat(${sql.join(parts)})`;
}

export function toServiceRecord(row: RecordRow): ServiceRecord {
  return JSON.parse(recordJson(row)) as ServiceRecord;
}

/** The context as stored: everything but the revision id, which lives in its own indexed column. */
export function storedContext(context: RecordContext): string {
  const { knowledge_unit_topic_id: _revision, ...rest } = context;
  return JSON.stringify(rest);
}
