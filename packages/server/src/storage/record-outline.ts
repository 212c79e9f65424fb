import type { Kysely, Transaction } from 'kysely';
import type { Database, RecordOutlineEntryTable, RecordOutlineTable } from './schema.js';

/**
 * Topics' document outlines in storage (migrations/013_record_outlines.ts). Every change goes
 * through writeOutline, which replaces an outline's entries whole in one transaction.
 */

type Db = Kysely<Database> | Transaction<Database>;
export type StoredOutlineEntry = Pick<RecordOutlineEntryTable, 'record_id' | 'level'>;

/** Rows per INSERT: 5 bound parameters each, far under SQLite's 32 766 and PostgreSQL's 65 535. */
const INSERT_BATCH = 1000;
/** Ids per `IN (...)` list. */
const ID_BATCH = 1000;

/** Who put a topic's outline last and when, or undefined before the first `PUT`. */
export async function readOutlineHead(
  db: Db,
  tenantId: string,
  topicHistoryId: string,
): Promise<Pick<RecordOutlineTable, 'updated_at' | 'updated_by'> | undefined> {
  return db
    .selectFrom('record_outlines')
    .select(['updated_at', 'updated_by'])
    .where('tenant_id', '=', tenantId)
    .where('topic_history_id', '=', topicHistoryId)
    .executeTakeFirst();
}

/**
 * The entries of a topic's outline in order, each with whether its record is a record of the topic
 * now (false for a deleted record, whose entry stays stored so that a restore finds its place). A
 * record under a revision of the topic is the topic's tenant's: records are joined by id alone, their
 * primary key (with the tenant too, SQLite's planner scans the tenant's records for every entry).
 */
export async function readOutlineEntries(
  db: Db,
  tenantId: string,
  topicHistoryId: string,
): Promise<(StoredOutlineEntry & { live: boolean })[]> {
  const rows = await db
    .selectFrom('record_outline_entries as e')
    .leftJoin('records as r', 'r.id', 'e.record_id')
    .leftJoin('kt_revisions as k', 'k.id', 'r.kt_revision_id')
    .select(['e.record_id', 'e.level', 'k.history_id'])
    .where('e.tenant_id', '=', tenantId)
    .where('e.topic_history_id', '=', topicHistoryId)
    .orderBy('e.position')
    .execute();
  return rows.map((row) => ({
    record_id: row.record_id,
    level: Number(row.level),
    live: row.history_id === topicHistoryId,
  }));
}

/**
 * Replaces a topic's outline. The outline's row is written first: a second change of the same
 * outline waits for it on PostgreSQL (and SQLite runs one write transaction at a time), then
 * replaces what the first wrote; the last change wins whole, never a mix of two.
 */
export async function writeOutline(
  trx: Transaction<Database>,
  head: RecordOutlineTable,
  entries: readonly StoredOutlineEntry[],
): Promise<void> {
  const { tenant_id, topic_history_id } = head;
  await trx
    .insertInto('record_outlines')
    .values(head)
    .onConflict((conflict) =>
      conflict
        .columns(['tenant_id', 'topic_history_id'])
        .doUpdateSet({ updated_at: head.updated_at, updated_by: head.updated_by }),
    )
    .execute();
  await trx
    .deleteFrom('record_outline_entries')
    .where('tenant_id', '=', tenant_id)
    .where('topic_history_id', '=', topic_history_id)
    .execute();
  for (let start = 0; start < entries.length; start += INSERT_BATCH)
    await trx
      .insertInto('record_outline_entries')
      .values(
        entries.slice(start, start + INSERT_BATCH).map((entry, offset) => ({
          tenant_id,
          topic_history_id,
          position: start + offset,
          record_id: entry.record_id,
          level: entry.level,
        })),
      )
      .execute();
}

/**
 * Of these record ids, those of records of the tenant, each with the history id of the topic it is
 * a record of (null for a record under no revision). Records are found by id alone, their primary
 * key, and another tenant's are dropped here: with the tenant in the query SQLite's planner scans
 * the tenant's records for every batch.
 */
export async function recordTopics(
  db: Db,
  tenantId: string,
  recordIds: readonly string[],
): Promise<Map<string, string | null>> {
  const topics = new Map<string, string | null>();
  for (let start = 0; start < recordIds.length; start += ID_BATCH) {
    const rows = await db
      .selectFrom('records as r')
      .leftJoin('kt_revisions as k', 'k.id', 'r.kt_revision_id')
      .select(['r.id', 'r.tenant_id', 'k.history_id'])
      .where('r.id', 'in', recordIds.slice(start, start + ID_BATCH))
      .execute();
    for (const row of rows) if (row.tenant_id === tenantId) topics.set(row.id, row.history_id);
  }
  return topics;
}
