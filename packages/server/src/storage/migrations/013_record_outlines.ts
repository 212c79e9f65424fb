import type { Kysely } from 'kysely';

/**
 * The document outline of each topic (storage/record-outline.ts): one row per outline, with who put
 * it last and when, and one row per entry in the outline's order. A topic is named by its history
 * id, so the outline outlives re-approvals. Entries name records without a foreign key: a deleted
 * record's entry stays (reads leave it out), so a restored record is back in its place. The outline's
 * row is written first in every change, so two changes of one outline at once take turns.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('record_outlines')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('topic_history_id', 'text', (c) => c.notNull().references('kt_histories.id'))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_outlines_pk', ['tenant_id', 'topic_history_id'])
    .execute();

  await db.schema
    .createTable('record_outline_entries')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('topic_history_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('record_id', 'text', (c) => c.notNull())
    .addColumn('level', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_outline_entries_pk', ['tenant_id', 'topic_history_id', 'position'])
    .addForeignKeyConstraint(
      'record_outline_entries_outline',
      ['tenant_id', 'topic_history_id'],
      'record_outlines',
      ['tenant_id', 'topic_history_id'],
    )
    // Each record once per outline; also finds a record's place.
    .addUniqueConstraint('record_outline_entries_record', ['tenant_id', 'topic_history_id', 'record_id'])
    .execute();
}
