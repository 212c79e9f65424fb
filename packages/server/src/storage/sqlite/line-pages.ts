import { isUtf8 } from 'node:buffer';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { LineListing } from '../database.js';
import type { Database } from '../schema.js';

/**
 * Rows in a listing's first page, and at most in any. A page is one synchronous statement, so its
 * rows' size is unknown before the first: one row, however large, keeps that step short (16 rows of
 * 2 MB would hold the event loop for about 300 ms). Past the first, the rows per page follow the lines'
 * size, so a page stays near a chunk's bytes; small records reach MAX_PAGE_ROWS from the second page.
 */
const FIRST_PAGE_ROWS = 1;
const MAX_PAGE_ROWS = 256;

/** One page: its lines joined, the keys in the order their lines were joined, the last key, its rows. */
interface LinePage {
  chunk: Buffer | null;
  keys: string | null;
  last: string | null;
  count: number;
}

/** A statement and the values of its named parameters (`:after`, `:limit`), which SQLite binds by name. */
export interface NamedStatement<Row> {
  query: CompiledQuery<Row>;
  named?: Record<string, unknown>;
}

/** Runs statements in one snapshot, as `Storage.streamPages` does, binding their named parameters. */
export type PageReader = <Row>(
  next: (previous: Row[] | undefined) => NamedStatement<Row> | undefined,
) => AsyncIterable<Row[]>;

/** Whether comma separated keys are strictly ascending. */
function ascending(keys: string): boolean {
  let previous = '';
  let start = 0;
  for (;;) {
    const end = keys.indexOf(',', start);
    const key = keys.slice(start, end < 0 ? undefined : end);
    if (key <= previous) return false;
    if (end < 0) return true;
    previous = key;
    start = end + 1;
  }
}

/**
 * A page's statement: the listing's rows from `:after` (or its start), `:limit` of them, their lines
 * joined by group_concat. Pages differ only in those two values, so each shape is compiled once per
 * listing (and prepared once per reader).
 */
function pageQuery(
  db: Kysely<Database>,
  listing: LineListing,
  fromStart: boolean,
  ordered: boolean,
): CompiledQuery<LinePage> {
  const rows = listing
    .rows({ after: fromStart ? undefined : sql.raw<string>(':after'), limit: sql.raw<number>(':limit') })
    // Each line with its separator.
    .select([listing.line(',\n').as('line'), sql.ref(listing.key).as('sort_key')]);
  return db
    .selectFrom(rows.as('page'))
    .select([
      // The page's rows reach the aggregates in key order (the subquery's ORDER BY ... LIMIT); a
      // sort inside group_concat would cost as much again. `keys` proves the order (see linePages),
      // and the `ordered` form, for a page that fails the proof, sorts explicitly.
      ordered
        ? sql<Buffer | null>`CAST(group_concat(line, '' ORDER BY sort_key) AS BLOB)`.as('chunk')
        : sql<Buffer | null>`CAST(group_concat(line, '') AS BLOB)`.as('chunk'),
      ordered
        ? sql<string | null>`NULL`.as('keys')
        : sql<string | null>`group_concat(sort_key, ',')`.as('keys'),
      sql<string | null>`max(sort_key)`.as('last'),
      sql<number>`count(*)`.as('count'),
    ])
    .compile();
}

/**
 * A listing's lines as chunks of about `chunkBytes`, each line preceded by `,\n`: one keyset page
 * per statement, its lines built and joined by SQLite, so a record costs no JavaScript. Memory holds
 * a page, never the listing.
 */
export async function* linePages(
  db: Kysely<Database>,
  listing: LineListing,
  chunkBytes: number,
  read: PageReader,
): AsyncGenerator<Buffer> {
  const shapes = new Map<string, CompiledQuery<LinePage>>();
  let after = listing.after;
  let limit = FIRST_PAGE_ROWS;
  let retry = false;
  const page = (ordered: boolean): NamedStatement<LinePage> => {
    const shape = `${after === undefined}:${ordered}`;
    let query = shapes.get(shape);
    if (!query) shapes.set(shape, (query = pageQuery(db, listing, after === undefined, ordered)));
    return { query, named: after === undefined ? { limit } : { after, limit } };
  };
  const pages = read<LinePage>((previous) => {
    if (!previous) return page(false);
    if (retry) return page(true);
    const { chunk, last, count } = previous[0]!;
    if (count < limit || !chunk || !last) return undefined;
    after = last;
    limit = Math.max(1, Math.min(MAX_PAGE_ROWS, Math.floor((chunkBytes * count) / chunk.length)));
    return page(false);
  });
  for await (const [joined] of pages) {
    const { chunk, keys } = joined!;
    // Not provably in key order: ask for the same page again, sorted explicitly.
    retry = keys !== null && !ascending(keys);
    if (!chunk || retry) continue;
    // SQLite passes text through as stored: invalid UTF-8 (never written by this server) is
    // replaced by U+FFFD here, as in a line read as a JS string.
    yield isUtf8(chunk) ? chunk : Buffer.from(chunk.toString('utf8'));
  }
}
