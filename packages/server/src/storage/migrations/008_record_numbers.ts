import type { Kysely } from 'kysely';

/**
 * Auto-numbering (`auto_number` on `POST /records/`): the last number given per topic (its history,
 * so numbers go on across re-approvals) and name prefix. Taken by an atomic increment in the
 * transaction of the create: unique and increasing under concurrent creates, never reused after a
 * deletion.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('record_numbers')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('history_id', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('last', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_numbers_pk', ['tenant_id', 'history_id', 'prefix'])
    .execute();
}
