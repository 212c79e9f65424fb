import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../storage/schema.js';
import type { ChangesCursor } from './cursor.js';

/** Where a feed's changes are logged (storage/migrations/006_changes_feeds.ts). */
export interface ChangesLog {
  table: 'record_listing_changes' | 'trace_listing_changes';
  /** The column naming what changed. */
  id: 'record_id' | 'trace_id';
  /** The feed's rows: its tenant (and revision). */
  where: RawBuilder<unknown>;
}

/**
 * What changed after the cursor up to the counter, each id once, ordered by its last change (then
 * id): at most `limit`. With `after`, the changes at the cursor's own step were delivered up to
 * that id, so a page may end inside one step (a move counts once for many records).
 */
export async function changedSince(
  db: Kysely<Database>,
  log: ChangesLog,
  cursor: ChangesCursor,
  counter: number,
  limit: number,
): Promise<{ id: string; seq: number }[]> {
  if (cursor.seq >= counter && cursor.after === undefined) return [];
  const id = sql.ref(log.id);
  const from = cursor.after === undefined ? sql`seq > ${cursor.seq}` : sql`seq >= ${cursor.seq}`;
  const within =
    cursor.after === undefined ? sql`` : sql`HAVING max(seq) > ${cursor.seq} OR ${id} > ${cursor.after}`;
  const { rows } = await sql<{ id: string; last: number | string }>`
    SELECT ${id} AS id, max(seq) AS last FROM ${sql.table(log.table)}
    WHERE ${log.where} AND seq <= ${counter} AND ${from}
    GROUP BY ${id} ${within}
    ORDER BY max(seq), ${id} LIMIT ${limit}`.execute(db);
  return rows.map((row) => ({ id: row.id, seq: Number(row.last) }));
}
