import { sql, type Kysely } from 'kysely';

/**
 * History: every change of a record, trace and KT revision appends an immutable row in the
 * transaction of the change (storage/records-write.ts and the services); baselines name points in
 * time; approvals carry their meaning and reason. The existing rows get a first version each, so
 * history starts complete at the upgrade.
 */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const json = dialect === 'postgres' ? 'jsonb' : 'text';

  await db.schema
    .createTable('record_versions')
    .addColumn('record_id', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'text', (c) => c.notNull())
    .addColumn('actor_key_id', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    // The record as the change left it (a deletion keeps the record as it was).
    .addColumn('kt_revision_id', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('form', sql.raw(json), (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('data', sql.raw(json), (c) => c.notNull())
    .addColumn('read_only', 'integer', (c) => c.notNull())
    .addColumn('context', sql.raw(json), (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addColumn('updated_at', 'text')
    .addColumn('last_action', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_versions_pk', ['record_id', 'n'])
    .execute();
  // As-of listings: the versions under a revision, per record, newest last.
  await db.schema
    .createIndex('record_versions_as_of')
    .on('record_versions')
    .columns(['tenant_id', 'kt_revision_id', 'record_id', 'n'])
    .execute();
  // No (tenant_id, at) index: no read needs one (as-of reads go by revision, record or node), and
  // every write would pay for it.

  await db.schema
    .createTable('trace_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('trace_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'text', (c) => c.notNull())
    .addColumn('actor_key_id', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('source_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('relation_type', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('trace_events_by_trace')
    .on('trace_events')
    .columns(['trace_id', 'action'])
    .execute();
  await db.schema
    .createIndex('trace_events_by_source')
    .on('trace_events')
    .columns(['tenant_id', 'source_id', 'at'])
    .execute();
  await db.schema
    .createIndex('trace_events_by_target')
    .on('trace_events')
    .columns(['tenant_id', 'target_id', 'at'])
    .execute();
  await db.schema
    .createIndex('trace_events_by_time')
    .on('trace_events')
    .columns(['tenant_id', 'at'])
    .execute();

  // How an approval was signed: its meaning (approved, reviewed), the reason, and how the approver
  // proved who they were (their password in the web app, or the API key of the call).
  for (const column of ['approval_meaning', 'approval_reason', 'approval_signature'])
    await db.schema.alterTable('kt_revisions').addColumn(column, 'text').execute();

  await db.schema
    .createTable('kt_revision_versions')
    .addColumn('revision_id', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('history_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'text', (c) => c.notNull())
    .addColumn('actor_key_id', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    // The revision as the change left it.
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('schema', sql.raw(json), (c) => c.notNull())
    .addColumn('data', sql.raw(json), (c) => c.notNull())
    .addColumn('product_history_id', 'text', (c) => c.notNull())
    .addColumn('product_version', 'text', (c) => c.notNull())
    .addColumn('knowledge_unit_history_id', 'text', (c) => c.notNull())
    .addColumn('knowledge_unit_version', 'text', (c) => c.notNull())
    .addColumn('source_schema_id', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addColumn('updated_at', 'text')
    .addColumn('last_action', 'text', (c) => c.notNull())
    .addColumn('approved_by', 'text')
    .addColumn('approved_at', 'text')
    .addColumn('approval_meaning', 'text')
    .addColumn('approval_reason', 'text')
    .addColumn('approval_signature', 'text')
    .addPrimaryKeyConstraint('kt_revision_versions_pk', ['revision_id', 'n'])
    .execute();
  await db.schema
    .createIndex('kt_revision_versions_by_history')
    .on('kt_revision_versions')
    .columns(['tenant_id', 'history_id', 'at'])
    .execute();

  await db.schema
    .createTable('baselines')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('revision_ids', sql.raw(json), (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('baselines_name')
    .on('baselines')
    .columns(['tenant_id', 'name'])
    .unique()
    .execute();

  // Existing rows: their present state is their first version.
  await sql`INSERT INTO record_versions (record_id, n, tenant_id, at, action, actor_user_id, actor_key_id, via, reason,
      kt_revision_id, name, form, version, data, read_only, context, created_by, created_at, updated_by, updated_at, last_action)
    SELECT id, 1, tenant_id, coalesce(updated_at, created_at), CASE WHEN updated_at IS NULL THEN 'created' ELSE 'updated' END,
      coalesce(updated_by, created_by), NULL, 'upgrade', 'history starts: the record as it was when history was introduced',
      kt_revision_id, name, form, version, data, read_only, context, created_by, created_at, updated_by, updated_at, last_action
    FROM records`.execute(db);
  await sql`INSERT INTO trace_events (id, trace_id, tenant_id, at, action, actor_user_id, actor_key_id, via, reason,
      source_id, source_type, target_id, target_type, relation_type, created_by, created_at)
    SELECT id || '-created', id, tenant_id, created_at, 'created', created_by, NULL, 'upgrade', NULL,
      source_id, source_type, target_id, target_type, relation_type, created_by, created_at
    FROM traces`.execute(db);
  await sql`INSERT INTO kt_revision_versions (revision_id, n, tenant_id, history_id, at, action, actor_user_id, actor_key_id, via,
      name, type, version, status, schema, data, product_history_id, product_version, knowledge_unit_history_id,
      knowledge_unit_version, source_schema_id, created_by, created_at, updated_by, updated_at, last_action, approved_by, approved_at,
      approval_meaning, approval_reason, approval_signature)
    SELECT id, 1, tenant_id, history_id, coalesce(approved_at, updated_at, created_at),
      CASE WHEN approved_at IS NOT NULL THEN 'approved' WHEN updated_at IS NOT NULL THEN 'updated' ELSE 'created' END,
      coalesce(approved_by, updated_by, created_by), NULL, 'upgrade',
      name, type, version, status, schema, data, product_history_id, product_version, knowledge_unit_history_id,
      knowledge_unit_version, source_schema_id, created_by, created_at, updated_by, updated_at, last_action, approved_by, approved_at,
      NULL, NULL, NULL
    FROM kt_revisions`.execute(db);

  // Append-only in the database itself, whatever code or tool reaches these tables.
  for (const table of ['record_versions', 'trace_events', 'kt_revision_versions', 'baselines']) {
    if (dialect === 'postgres') {
      await sql
        .raw(
          `CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table}
           FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`,
        )
        .execute(db);
    } else {
      for (const event of ['UPDATE', 'DELETE']) {
        await sql
          .raw(
            `CREATE TRIGGER ${table}_no_${event.toLowerCase()} BEFORE ${event} ON ${table}
             BEGIN SELECT RAISE(ABORT, 'history is never changed or deleted'); END`,
          )
          .execute(db);
      }
    }
  }
}
