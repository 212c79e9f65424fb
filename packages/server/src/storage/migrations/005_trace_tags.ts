import { sql, type Kysely } from 'kysely';

/**
 * Trace tags (conditional `POST /traces/batch/list`): a counter per tenant of the changes of its
 * traces. Every trace created or deleted appends its event (`trace_events`); a trigger counts it in
 * the same transaction. A tenant without a row has not changed its traces since this migration.
 */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('trace_listing_tags')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id'))
    .addColumn('changes', 'integer', (c) => c.notNull())
    .execute();

  if (dialect === 'postgres') {
    await sql
      .raw(
        `CREATE FUNCTION count_trace_changes() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           INSERT INTO trace_listing_tags (tenant_id, changes)
           SELECT tenant_id, count(*) FROM added GROUP BY tenant_id ORDER BY 1
           ON CONFLICT (tenant_id) DO UPDATE SET changes = trace_listing_tags.changes + excluded.changes;
           RETURN NULL;
         END $$`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER trace_events_count_changes AFTER INSERT ON trace_events
         REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_trace_changes()`,
      )
      .execute(db);
  } else {
    await sql
      .raw(
        `CREATE TRIGGER trace_events_count_changes AFTER INSERT ON trace_events
         BEGIN
           INSERT INTO trace_listing_tags (tenant_id, changes) VALUES (NEW.tenant_id, 1)
           ON CONFLICT (tenant_id) DO UPDATE SET changes = changes + 1;
         END`,
      )
      .execute(db);
  }
}
