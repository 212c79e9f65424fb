import type {
  AliasableExpression,
  CompiledQuery,
  Expression,
  Kysely,
  RawBuilder,
  SelectQueryBuilder,
} from 'kysely';
import type { Database } from './schema.js';

/** Which database a storage is: for migrations, copies between databases and diagnostics. */
export type Dialect = 'sqlite' | 'postgres';

/**
 * The SQL where the engines differ, written once per dialect (sqlite/syntax.ts, postgres/syntax.ts):
 * queries built with these read the same on both, and no caller asks which database it is.
 */
export interface SqlSyntax {
  /** A text value as a JSON string, escaped exactly as `JSON.stringify` escapes; JSON's null for NULL. */
  jsonString(value: Expression<unknown>): RawBuilder<string>;
  /**
   * A value as text: a stored JSON column's text as written, or a bound parameter typed as text
   * (which a database cannot infer inside concat()).
   */
  asText(value: Expression<unknown>): RawBuilder<string>;
  /**
   * The text of a JSON column's top-level `key` (NULL when absent or null), the key written into
   * the SQL as a literal so that an index on the same expression serves it (migration 011).
   */
  jsonTextOf(column: string, key: string): RawBuilder<string | null>;
  /** A column reference the planner will not choose an index by (see the dialects for why). */
  unindexed(column: `${string}.${string}`): RawBuilder<unknown>;
  /**
   * The query, locking the rows it reads against concurrent writers until the transaction ends, on
   * a database that locks rows; one that runs a single write transaction at a time needs no lock.
   */
  forShare<Q extends SelectQueryBuilder<Database, any, any>>(query: Q): Q;
}

/** Where a keyset page of a `LineListing` starts and how many rows it takes, as the dialect binds them. */
export interface KeysetPage {
  /** Rows whose key is above this (none: from the listing's first row). */
  after?: Expression<string>;
  /** Rows at most (none: every row). */
  limit?: Expression<number>;
}

/** A listing of JSON lines the database builds itself, read in the order of a unique key. */
export interface LineListing {
  /** The rows of a page, filtered and ordered by `key`, nothing selected yet. */
  rows(page: KeysetPage): SelectQueryBuilder<Database, any, object>;
  /** The column ordering the rows: unique text without commas (ids). */
  key: string;
  /** Where the listing starts: after this key (none: at its first row). */
  after?: string;
  /** Each row's line, built by the database, `prefix` before it. */
  line(prefix: string): AliasableExpression<string>;
}

/**
 * The storage every service works through: one Kysely instance (the same queries on both engines,
 * with `syntax` where they differ) plus streaming reads that do not hold the shared connection, so
 * a slow client downloading a large listing never stalls the rest of the server. Each dialect
 * implements it once (sqlite/, postgres/); open.ts opens one by URL.
 */
export interface Storage {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  readonly syntax: SqlSyntax;
  readonly location: string;
  /**
   * Rows a streamed read takes from the database at a time when each row may weigh megabytes: as
   * few as keep the reads cheap. Memory holds that many such rows.
   */
  readonly largeRowsPerFetch: number;
  /** Holds the database's migration lock while `work` runs (PostgreSQL takes its own advisory lock). */
  withMigrationLock?<T>(work: () => Promise<T>): Promise<T>;
  /** Runs a read query and yields its rows one by one from a database cursor. */
  stream<Row>(query: CompiledQuery<Row>): AsyncIterable<Row>;
  /**
   * The same in batches of up to `batchSize` rows (one cursor round trip, or one synchronous pull
   * from SQLite, per batch): a long listing then costs one await per batch instead of per row.
   */
  streamBatches<Row>(query: CompiledQuery<Row>, batchSize?: number): AsyncIterable<Row[]>;
  /**
   * Keyset pages in one consistent snapshot: runs `next(undefined)`, then `next(rows of the previous
   * page)`, and so on, yielding each page's rows, until `next` returns undefined or a page is empty.
   * Like `stream`, it does not hold the shared connection.
   */
  streamPages<Row>(
    next: (previous: Row[] | undefined) => CompiledQuery<Row> | undefined,
  ): AsyncIterable<Row[]>;
  /**
   * A listing's lines in one consistent snapshot, as UTF-8 chunks of about `chunkBytes` (each line
   * preceded by `,\n`, json-array-stream.ts), built by the database: the lines never become rows or
   * JS strings. Memory holds a chunk, never the listing; the first bytes go out at once.
   */
  streamLines(listing: LineListing, chunkBytes: number): AsyncIterable<Buffer>;
  /** Checks the database file/cluster for corruption; returns the problems found (empty when sound). */
  integrityCheck(): Promise<string[]>;
  close(): Promise<void>;
}
