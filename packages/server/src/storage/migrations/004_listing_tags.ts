import type { Kysely } from 'kysely';

/**
 * Listing tags (conditional `GET /records/`): a counter per tenant and KT revision id, raised in the
 * transaction of every change of a record under that revision (storage/records-write.ts). A listing's
 * ETag is made of the counters of the revisions it covers, so a poll of an unchanged topic is
 * answered without reading its records. A revision without a row has never changed since this
 * migration: its counter is 0.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('record_listing_tags')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    // '' for records under no revision.
    .addColumn('kt_revision_id', 'text', (c) => c.notNull())
    .addColumn('changes', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_listing_tags_pk', ['tenant_id', 'kt_revision_id'])
    .execute();
}
