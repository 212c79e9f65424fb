import { sql, type Kysely } from 'kysely';

/**
 * Listing tags (conditional `GET /records/`): a counter per tenant and KT revision id of the changes
 * of the records under it. A listing's ETag is made of the counters of the revisions it covers, so a
 * poll of an unchanged topic is answered without reading its records. A revision without a row has
 * not changed since this migration: its counter is 0.
 *
 * Every change of a record appends its version (storage/records-write.ts), under the revision the
 * record is under after the change (before it, for a deletion); a trigger on `record_versions`
 * counts it, in the same transaction, without a round trip: a write costs next to nothing more. A
 * re-approval's move is also counted for the revisions the records left (records-write.ts).
 */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('record_listing_tags')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    // '' for records under no revision.
    .addColumn('kt_revision_id', 'text', (c) => c.notNull())
    .addColumn('changes', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_listing_tags_pk', ['tenant_id', 'kt_revision_id'])
    .execute();

  if (dialect === 'postgres') {
    // Once per statement (a move appends thousands of versions in one): one counter update per
    // revision, in revision order, so concurrent writers lock counters in the same order.
    await sql
      .raw(
        `CREATE FUNCTION count_listing_changes() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           INSERT INTO record_listing_tags (tenant_id, kt_revision_id, changes)
           SELECT tenant_id, coalesce(kt_revision_id, ''), count(*) FROM added
           GROUP BY tenant_id, coalesce(kt_revision_id, '') ORDER BY 1, 2
           ON CONFLICT (tenant_id, kt_revision_id)
           DO UPDATE SET changes = record_listing_tags.changes + excluded.changes;
           RETURN NULL;
         END $$`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER record_versions_count_listing_changes AFTER INSERT ON record_versions
         REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_listing_changes()`,
      )
      .execute(db);
  } else {
    await sql
      .raw(
        `CREATE TRIGGER record_versions_count_listing_changes AFTER INSERT ON record_versions
         BEGIN
           INSERT INTO record_listing_tags (tenant_id, kt_revision_id, changes)
           VALUES (NEW.tenant_id, coalesce(NEW.kt_revision_id, ''), 1)
           ON CONFLICT (tenant_id, kt_revision_id) DO UPDATE SET changes = changes + 1;
         END`,
      )
      .execute(db);
  }
}
