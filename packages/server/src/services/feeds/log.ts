import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../storage/schema.js';
import { eventLoopSlices } from '@rxs/exchange/export';
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
  /** The counter value of each id's last change, in the same order. */
  seqs: number[];
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
    return { ids: [], seqs: [], more: false, next: { seq: counter } };
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
    seqs: page.map((row) => Number(row.last)),
    more,
    next: more ? { seq: Number(last.last), after: last.id } : { seq: counter },
  };
}

/** Bytes a removed id takes in a page (`"<id>",`). */
const REMOVED_ID_BYTES = 32;

/**
 * The page cut to what fits in `budget` bytes of JSON, at least one id: `sizes` reads about the
 * bytes of each present id's line for a batch of ids (absent ones are removed, a few bytes each).
 * The cursor of a cut page stands inside the step of its last id, as when `limit` ends a page.
 */
export async function withinBytes(
  page: ChangesPageIds,
  sizes: (batch: string[]) => Promise<Map<string, number>>,
  budget: number,
): Promise<ChangesPageIds> {
  const turn = eventLoopSlices();
  let bytes = 0;
  for (let start = 0; start < page.ids.length; start += READ_BATCH) {
    const batch = page.ids.slice(start, start + READ_BATCH);
    const found = await sizes(batch);
    for (let i = 0; i < batch.length; i++) {
      const size = found.get(batch[i]!) ?? REMOVED_ID_BYTES;
      const count = start + i;
      if (count > 0 && bytes + size > budget) {
        const id = page.ids[count - 1]!;
        return {
          ids: page.ids.slice(0, count),
          seqs: page.seqs.slice(0, count),
          more: true,
          next: { seq: page.seqs[count - 1]!, after: id },
        };
      }
      bytes += size;
    }
    const pause = turn();
    if (pause) await pause;
  }
  return page;
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
  const turn = eventLoopSlices();
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
    // The database answers synchronously (SQLite): a page of many ids must not hold other requests.
    const pause = turn();
    if (pause) await pause;
  }
}
