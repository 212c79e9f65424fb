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

/** One page of a feed: the ids that changed, in order, and where the next page starts. */
export interface ChangesPageIds {
  ids: string[];
  /** More changes wait beyond this page. */
  more: boolean;
  /** The cursor after this page: inside a step when the page ended there, else at the counter. */
  next: ChangesCursor;
}

/**
 * What changed after the cursor up to the counter, each id once, ordered by its last change (then
 * id): at most `limit`. With `after`, the changes at the cursor's own step were delivered up to
 * that id, so a page may end inside one step (a move counts once for many records).
 */
export async function readChanges(
  db: Kysely<Database>,
  log: ChangesLog,
  cursor: ChangesCursor,
  counter: number,
  limit: number,
): Promise<ChangesPageIds> {
  if (cursor.seq >= counter && cursor.after === undefined)
    return { ids: [], more: false, next: { seq: counter } };
  const id = sql.ref(log.id);
  const from = cursor.after === undefined ? sql`seq > ${cursor.seq}` : sql`seq >= ${cursor.seq}`;
  const within =
    cursor.after === undefined ? sql`` : sql`HAVING max(seq) > ${cursor.seq} OR ${id} > ${cursor.after}`;
  // One more than asked: whether another page waits.
  const { rows } = await sql<{ id: string; last: number | string }>`
    SELECT ${id} AS id, max(seq) AS last FROM ${sql.table(log.table)}
    WHERE ${log.where} AND seq <= ${counter} AND ${from}
    GROUP BY ${id} ${within}
    ORDER BY max(seq), ${id} LIMIT ${limit + 1}`.execute(db);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const more = rows.length > limit && last !== undefined;
  return {
    ids: page.map((row) => row.id),
    more,
    next: more ? { seq: Number(last.last), after: last.id } : { seq: counter },
  };
}

/** Ids read per statement while a page streams. */
const READ_BATCH = 500;

/**
 * The lines of the ids of a page that are still there (`read` gives, for a batch of ids, the line of
 * each one found), a batch at a time, in the page's order; the ids not found go to `removed`.
 */
export async function* presentLines(
  ids: readonly string[],
  read: (batch: string[]) => Promise<Map<string, string>>,
  removed: string[],
): AsyncGenerator<string[]> {
  for (let start = 0; start < ids.length; start += READ_BATCH) {
    const batch = ids.slice(start, start + READ_BATCH);
    const found = await read(batch);
    const lines: string[] = [];
    for (const id of batch) {
      const line = found.get(id);
      if (line === undefined) removed.push(id);
      else lines.push(line);
    }
    yield lines;
  }
}
