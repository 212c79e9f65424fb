import { sql, type Transaction } from 'kysely';
import { eventLoopSlices } from '@rxs/exchange/export';
import { actorColumns, type ChangeActor } from './change-actor.js';
import type { Database, RecordRow } from './schema.js';
import { insertRows, marker, runTemplate, templateOf } from './row-inserts.js';
import { statementBatches, textLength } from './statement-batches.js';
import { deleteTracesTouching, markTracesSuspect } from './traces-write.js';

/**
 * The one write path of records. Every change of a record goes through here, inside the caller's
 * transaction, and appends the record's new version (storage/migrations/003_history.ts) in that same
 * transaction: an acknowledged change always has its version, and no version exists without its
 * change. Callers (the records service, the re-approval move, the demo seed, the benchmark data)
 * never write `records` themselves. Each version also counts, by a trigger in that transaction, as a
 * change of the listings of its revision (migrations/004_listing_tags.ts): their ETags move with it.
 */

type Trx = Transaction<Database>;
export type RecordAction = 'created' | 'updated' | 'deleted' | 'moved' | 'restored';

/** Ids per `IN (...)` list. */
const ID_BATCH = 500;

/**
 * Inserts new records and their first versions. A new record's first version is its `n` 1 unless
 * its id was used before (the demo seed, started again after a crash, re-creates its sample records
 * under their real ids in a new tenant): the version numbers of an id never repeat. They are read
 * once for a batch, after its records are inserted: the records' rows keep a concurrent insert of
 * the same ids out until this transaction ends. The rows go in statements of bounded size, with a
 * turn of the event loop (`turn`, shared with the caller's work) between them when one is due.
 * Returns each new record's first version number (`n`), by id.
 */
export async function insertRecords(
  trx: Trx,
  rows: readonly RecordRow[],
  actor: ChangeActor,
  turn = eventLoopSlices(),
): Promise<Map<string, number>> {
  const first = new Map<string, number>();
  if (rows.length === 0) return first;
  const columns = Object.keys(rows[0]!) as (keyof RecordRow)[];
  for (const batch of statementBatches(rows, (row) => textLength(Object.values(row)))) {
    await insertRows(
      trx,
      'records',
      columns,
      batch.map((row) => columns.map((column) => row[column])),
    );
    await turn();
    const used = await lastVersionNumbers(
      trx,
      batch.map((row) => row.id),
    );
    for (const row of batch) first.set(row.id, (used.get(row.id) ?? 0) + 1);
    await insertRows(
      trx,
      'record_versions',
      VERSION_COLUMNS,
      batch.map((row) => firstVersion(row, first.get(row.id)!, actor)),
    );
    await turn();
  }
  return first;
}

/**
 * The values of a new record's first version, in the order of VERSION_COLUMNS: the record's row as
 * inserted, and who created it. Read column by column, without copying the row (a bulk write makes
 * thousands of these).
 */
function firstVersion(row: RecordRow, n: number, actor: ChangeActor): unknown[] {
  const event: Partial<Record<(typeof VERSION_COLUMNS)[number], unknown>> = {
    record_id: row.id,
    n,
    action: 'created',
    reason: actor.reason,
    ...actorColumns(actor),
  };
  return VERSION_COLUMNS.map((column) =>
    column in event ? event[column] : row[column as Exclude<keyof RecordRow, 'id'>],
  );
}

/** The highest version number of each of these ids that has versions already (an id used before). */
async function lastVersionNumbers(trx: Trx, ids: readonly string[]): Promise<Map<string, number>> {
  const rows = await trx
    .selectFrom('record_versions')
    .select((eb) => ['record_id', eb.fn.max('n').as('n')])
    .where('record_id', 'in', ids)
    .groupBy('record_id')
    .execute();
  return new Map(rows.map((row) => [row.record_id, Number(row.n)]));
}

/**
 * Changes a record if it is still at `expectedVersion` (the lost-update guard), then appends the
 * version it became. False when the record is gone or at another version: nothing was written.
 */
export async function updateRecord(
  trx: Trx,
  tenantId: string,
  id: string,
  expectedVersion: string,
  changes: Partial<
    Pick<RecordRow, 'name' | 'data' | 'version' | 'updated_by' | 'updated_at' | 'last_action'>
  >,
  actor: ChangeActor,
): Promise<boolean> {
  const updated = await trx
    .updateTable('records')
    .set(changes as never)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  if (updated.numUpdatedRows === 0n) return false;
  await appendVersions(trx, tenantId, [id], 'updated', actor);
  // A new version of a record makes the links to it suspect until someone reviews them.
  if (changes.version !== undefined && changes.version !== expectedVersion)
    await markTracesSuspect(trx, tenantId, id, expectedVersion, actor);
  return true;
}

/**
 * Deletes a record and the traces that touch it. The record's last version is the record as it was,
 * marked `deleted`; each trace gets its `deleted` event. False when there was no such record.
 */
export async function deleteRecord(
  trx: Trx,
  tenantId: string,
  id: string,
  actor: ChangeActor,
): Promise<boolean> {
  // DELETE ... RETURNING: the row as it was, taken by the statement that removes it, so two
  // deletions of one record cannot both append a version.
  const row = await trx
    .deleteFrom('records')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (!row) return false;
  const { id: recordId, ...columns } = row;
  await trx
    .insertInto('record_versions')
    .values({
      ...columns,
      record_id: recordId,
      n: nextVersionNumber(recordId),
      action: 'deleted',
      reason: actor.reason,
      ...actorColumns(actor),
    } as never)
    .execute();
  await deleteTracesTouching(trx, tenantId, id, actor);
  return true;
}

/**
 * A re-approval: moves the records of a topic's earlier revisions to its new current revision. Each
 * moved record gets a `moved` version (the same record under the new revision id), and counts as
 * leaving the revision it was under (the changes feed reports it gone there).
 */
export async function moveRecords(
  trx: Trx,
  tenantId: string,
  fromRevisionIds: readonly string[],
  toRevisionId: string,
  actor: ChangeActor,
): Promise<number> {
  const departed = new Map<string, string[]>();
  let moved = 0;
  // One revision per statement: its RETURNING names the records that left that revision.
  for (const from of [...new Set(fromRevisionIds)].sort()) {
    // RETURNING names exactly the rows this statement moved (records created under the new
    // revision itself are not moved and get no version), and they stay locked until the commit.
    const rows = await trx
      .updateTable('records')
      .set({ kt_revision_id: toRevisionId })
      .where('tenant_id', '=', tenantId)
      .where('kt_revision_id', '=', from)
      .returning('id')
      .execute();
    const ids = rows.map((row) => row.id);
    for (let i = 0; i < ids.length; i += ID_BATCH)
      await appendVersions(trx, tenantId, ids.slice(i, i + ID_BATCH), 'moved', actor);
    if (ids.length > 0) departed.set(from, ids);
    moved += ids.length;
  }
  // The `moved` versions count for the revision the records joined; the ones they left changed too.
  for (const [from, ids] of departed) await countDepartures(trx, tenantId, from, ids);
  return moved;
}

/**
 * Brings a deleted record back, as its last version was, under the same id: a `restored` version.
 * Its traces stay deleted (they are not part of the record). The caller checks that it is deleted.
 */
export async function restoreRecord(
  trx: Trx,
  tenantId: string,
  id: string,
  row: RecordRow,
  actor: ChangeActor,
): Promise<void> {
  await trx
    .insertInto('records')
    .values({ ...row, id, tenant_id: tenantId } as never)
    .execute();
  await appendVersions(trx, tenantId, [id], 'restored', actor);
}

/**
 * Counts the departure of records from a revision's listing as one change of it (its ETag moves)
 * and logs each record under the counter's new value, as the trigger does for versions. The
 * revisions of one move are counted in id order, so concurrent writers lock counters in one order.
 */
async function countDepartures(
  trx: Trx,
  tenantId: string,
  revisionId: string,
  recordIds: readonly string[],
): Promise<void> {
  const counted = await trx
    .insertInto('record_listing_tags')
    .values({ tenant_id: tenantId, kt_revision_id: revisionId, changes: 1 })
    .onConflict((conflict) =>
      conflict
        .columns(['tenant_id', 'kt_revision_id'])
        .doUpdateSet({ changes: sql<number>`record_listing_tags.changes + 1` }),
    )
    .returning('changes')
    .executeTakeFirstOrThrow();
  const seq = Number(counted.changes);
  for (let start = 0; start < recordIds.length; start += ID_BATCH) {
    await trx
      .insertInto('record_listing_changes')
      .values(
        recordIds
          .slice(start, start + ID_BATCH)
          .map((recordId) => ({ tenant_id: tenantId, kt_revision_id: revisionId, seq, record_id: recordId })),
      )
      .onConflict((conflict) => conflict.doNothing())
      .execute();
  }
}

/** The next version number of a record id, read in the statement that inserts the version. */
function nextVersionNumber(recordId: string) {
  return sql<number>`(SELECT coalesce(max(v.n), 0) + 1 FROM record_versions v WHERE v.record_id = ${recordId})`;
}

/** Appends, for each record, its next version: the row as it is now in this transaction. */
async function appendVersions(
  trx: Trx,
  tenantId: string,
  ids: readonly string[],
  action: RecordAction,
  actor: ChangeActor,
): Promise<void> {
  if (ids.length === 0) return;
  const values = [actor.at, action, actor.userId, actor.keyId, actor.via, actor.reason, tenantId, ...ids];
  const template = templateOf(trx, `append:${ids.length}`, () =>
    trx
      .insertInto('record_versions')
      .columns(VERSION_COLUMNS)
      .expression((eb) =>
        eb
          .selectFrom('records as r')
          .select([
            'r.id as record_id',
            sql<number>`coalesce((SELECT max(v.n) FROM record_versions v WHERE v.record_id = r.id), 0) + 1`.as(
              'n',
            ),
            'r.tenant_id',
            sql<string>`${marker(0)}`.as('at'),
            sql<string>`${marker(1)}`.as('action'),
            sql<string>`${marker(2)}`.as('actor_user_id'),
            sql<string | null>`${marker(3)}`.as('actor_key_id'),
            sql<string>`${marker(4)}`.as('via'),
            sql<string | null>`${marker(5)}`.as('reason'),
            'r.kt_revision_id',
            'r.name',
            'r.form',
            'r.version',
            'r.data',
            'r.read_only',
            'r.context',
            'r.created_by',
            'r.created_at',
            'r.updated_by',
            'r.updated_at',
            'r.last_action',
          ])
          .where('r.tenant_id', '=', marker(6))
          .where(
            'r.id',
            'in',
            ids.map((_, i) => marker(7 + i)),
          ),
      )
      .compile(),
  );
  await runTemplate(trx, template, values);
}

/** A version's columns, in the order the appending INSERT ... SELECT selects them (positional). */
const VERSION_COLUMNS = [
  'record_id',
  'n',
  'tenant_id',
  'at',
  'action',
  'actor_user_id',
  'actor_key_id',
  'via',
  'reason',
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
] as const;
