import { sql, type Kysely } from 'kysely';

/**
 * The changes feeds (`GET /records/changes`, `GET /traces/changes`).
 *
 * Records: which records changed under a KT revision, in the
 * order of its listing counter (004_listing_tags.ts). Every counted change leaves a row here with
 * the counter's value after it (`seq`) and the record: a version under the revision (create,
 * change, delete, restore, the arrival of a re-approval's move), and the departure of a moved record
 * from the revision it left (storage/records-write.ts).
 *
 * Why the counter and not a row id: a revision's counter is incremented under its row lock, so its
 * values are handed out in commit order; a reader that saw the counter at C has seen every row with
 * `seq <= C`, on PostgreSQL as on SQLite. A feed that went up to C never misses a later change.
 *
 * Traces: which traces were created or deleted in a tenant, in the order of its trace counter
 * (005_trace_tags.ts), the same way: each trace event leaves a row with the counter's new value.
 *
 * The rows start with this migration: a feed starts with the whole listing and a cursor at the
 * counter, so changes before it are never asked for.
 */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await recordChanges(db, dialect);
  await traceChanges(db, dialect);
}

async function recordChanges(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('record_listing_changes')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('kt_revision_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('record_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_listing_changes_pk', ['tenant_id', 'kt_revision_id', 'seq', 'record_id'])
    // On SQLite the rows live in the key's own b-tree: a change writes one b-tree, not two.
    .$call((table) => (dialect === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table))
    .execute();

  if (dialect === 'postgres') {
    // A statement's versions share the counter value it reached: a move of many records is one step.
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION count_listing_changes() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           WITH counted AS (
             INSERT INTO record_listing_tags (tenant_id, kt_revision_id, changes)
             SELECT tenant_id, coalesce(kt_revision_id, ''), count(*) FROM added
             GROUP BY tenant_id, coalesce(kt_revision_id, '') ORDER BY 1, 2
             ON CONFLICT (tenant_id, kt_revision_id)
             DO UPDATE SET changes = record_listing_tags.changes + excluded.changes
             RETURNING tenant_id, kt_revision_id, changes
           )
           INSERT INTO record_listing_changes (tenant_id, kt_revision_id, seq, record_id)
           SELECT a.tenant_id, c.kt_revision_id, c.changes, a.record_id
           FROM added a JOIN counted c
             ON c.tenant_id = a.tenant_id AND c.kt_revision_id = coalesce(a.kt_revision_id, '')
           ON CONFLICT DO NOTHING;
           RETURN NULL;
         END $$`,
      )
      .execute(db);
  } else {
    await sql.raw('DROP TRIGGER record_versions_count_listing_changes').execute(db);
    await sql
      .raw(
        `CREATE TRIGGER record_versions_count_listing_changes AFTER INSERT ON record_versions
         BEGIN
           INSERT INTO record_listing_tags (tenant_id, kt_revision_id, changes)
           VALUES (NEW.tenant_id, coalesce(NEW.kt_revision_id, ''), 1)
           ON CONFLICT (tenant_id, kt_revision_id) DO UPDATE SET changes = changes + 1;
           INSERT OR IGNORE INTO record_listing_changes (tenant_id, kt_revision_id, seq, record_id)
           SELECT tenant_id, kt_revision_id, changes, NEW.record_id FROM record_listing_tags
           WHERE tenant_id = NEW.tenant_id AND kt_revision_id = coalesce(NEW.kt_revision_id, '');
         END`,
      )
      .execute(db);
  }
}

async function traceChanges(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('trace_listing_changes')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('trace_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('trace_listing_changes_pk', ['tenant_id', 'seq', 'trace_id'])
    .$call((table) => (dialect === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table))
    .execute();

  if (dialect === 'postgres') {
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION count_trace_changes() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           WITH counted AS (
             INSERT INTO trace_listing_tags (tenant_id, changes)
             SELECT tenant_id, count(*) FROM added GROUP BY tenant_id ORDER BY 1
             ON CONFLICT (tenant_id) DO UPDATE SET changes = trace_listing_tags.changes + excluded.changes
             RETURNING tenant_id, changes
           )
           INSERT INTO trace_listing_changes (tenant_id, seq, trace_id)
           SELECT a.tenant_id, c.changes, a.trace_id FROM added a JOIN counted c ON c.tenant_id = a.tenant_id
           ON CONFLICT DO NOTHING;
           RETURN NULL;
         END $$`,
      )
      .execute(db);
  } else {
    await sql.raw('DROP TRIGGER trace_events_count_changes').execute(db);
    await sql
      .raw(
        `CREATE TRIGGER trace_events_count_changes AFTER INSERT ON trace_events
         BEGIN
           INSERT INTO trace_listing_tags (tenant_id, changes) VALUES (NEW.tenant_id, 1)
           ON CONFLICT (tenant_id) DO UPDATE SET changes = changes + 1;
           INSERT OR IGNORE INTO trace_listing_changes (tenant_id, seq, trace_id)
           SELECT tenant_id, changes, NEW.trace_id FROM trace_listing_tags WHERE tenant_id = NEW.tenant_id;
         END`,
      )
      .execute(db);
  }
}
