import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  SqliteDialect,
  type CompiledQuery,
  type Migration,
  type SqliteDatabase,
  sql,
} from 'kysely';
import * as initial from './migrations/001_initial.js';
import * as tenantUsersAndAudit from './migrations/002_tenant_users_and_audit.js';
import * as history from './migrations/003_history.js';
import * as listingTags from './migrations/004_listing_tags.js';
import * as traceTags from './migrations/005_trace_tags.js';
import * as changesFeeds from './migrations/006_changes_feeds.js';
import * as idempotencyKeys from './migrations/007_idempotency_keys.js';
import * as recordNumbers from './migrations/008_record_numbers.js';
import * as suspectTraces from './migrations/009_suspect_traces.js';
import * as jsonText from './migrations/010_json_text.js';
import type { Database } from './schema.js';
import { DEFAULT_POSTGRES_OPTIONS, openPostgres } from './postgres.js';

export type Dialect = 'sqlite' | 'postgres';

/**
 * The storage every service works through: one Kysely instance (same queries on both engines) plus a
 * streaming read that does not hold the shared connection, so a slow client downloading a large
 * listing never stalls the rest of the server.
 */
export interface Storage {
  readonly db: Kysely<Database>;
  /** Holds the database's migration lock while `work` runs (PostgreSQL takes its own advisory lock). */
  withMigrationLock?<T>(work: () => Promise<T>): Promise<T>;
  readonly dialect: Dialect;
  readonly location: string;
  /** Runs a read query and yields its rows one by one from a database cursor. */
  stream<Row>(query: CompiledQuery<Row>): AsyncIterable<Row>;
  /**
   * The same in batches of up to `batchSize` rows (one cursor round trip, or one synchronous pull
   * from SQLite, per batch): a long listing then costs one await per batch instead of per row.
   */
  streamBatches<Row>(query: CompiledQuery<Row>, batchSize?: number): AsyncIterable<Row[]>;
  /**
   * PostgreSQL only: `COPY (query) TO STDOUT` in one consistent snapshot, the rows as the bytes of
   * COPY's text format (copy-text.ts reads them). A listing's lines then never become JS strings.
   */
  copyOut?(query: CompiledQuery<unknown>): AsyncIterable<Buffer>;
  /**
   * Keyset pages in one consistent snapshot: runs `next(undefined)`, then `next(rows of the previous
   * page)`, and so on, yielding each page's rows, until `next` returns undefined or a page is empty.
   * Like `stream`, it does not hold the shared connection.
   */
  streamPages<Row>(
    next: (previous: Row[] | undefined) => CompiledQuery<Row> | undefined,
  ): AsyncIterable<Row[]>;
  /** Checks the database file/cluster for corruption; returns the problems found (empty when sound). */
  integrityCheck(): Promise<string[]>;
  close(): Promise<void>;
}

export interface OpenStorageOptions {
  /** `postgres://...`, `sqlite:PATH`, a plain file path, or `:memory:`. */
  url: string;
  postgres?: { poolSize?: number; statementTimeoutMs?: number };
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** Opens SQLite or PostgreSQL by URL and migrates it (once, under a lock, however many replicas start). */
export async function openStorage(options: OpenStorageOptions): Promise<Storage> {
  const { url } = options;
  const storage = isPostgresUrl(url)
    ? openPostgres(url, {
        poolSize: options.postgres?.poolSize ?? DEFAULT_POSTGRES_OPTIONS.poolSize,
        statementTimeoutMs:
          options.postgres?.statementTimeoutMs ?? DEFAULT_POSTGRES_OPTIONS.statementTimeoutMs,
      })
    : openSqlite(url.replace(/^sqlite:/, ''));
  try {
    await migrate(storage);
  } catch (error) {
    await storage.close().catch(() => undefined);
    throw error;
  }
  return storage;
}

/** The size the SQLite WAL returns to after a long read let it grow (journal_size_limit). */
export const WAL_SIZE_LIMIT_BYTES = 8 * 1024 * 1024;

/** Rows per batch when the caller does not say. */
const DEFAULT_BATCH = 256;

function openReader(file: string): SQLite.Database {
  const reader = new SQLite(file, { readonly: true });
  reader.pragma('busy_timeout = 5000');
  return reader;
}

/**
 * The database holds key hashes and every tenant's data: only its owner may read it. SQLite gives
 * the -wal and -shm files the database file's mode, so creating that file 0600 (or narrowing an
 * existing installation's) covers all three.
 */
function keepPrivate(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(path) && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
}

function openSqlite(path: string): Storage {
  const file = path === ':memory:' ? path : resolve(path);
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true });
    keepPrivate(file);
  }
  const connection = new SQLite(file);
  connection.pragma('journal_mode = WAL');
  // FULL: a commit is on disk before we answer 201/200, so an acknowledged write survives a crash.
  connection.pragma('synchronous = FULL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  // A long reader keeps the WAL from being reset, so it grows; once readers end and a checkpoint
  // completes, the next write cuts the file back to this size instead of keeping its largest size.
  connection.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: reusingStatements(connection) }),
  });

  async function* streamBatches<Row>(
    query: CompiledQuery<Row>,
    batchSize = DEFAULT_BATCH,
  ): AsyncIterable<Row[]> {
    const parameters = query.parameters as unknown[];
    // A reader connection of its own: WAL gives it a consistent snapshot for the whole statement
    // while writers carry on. In-memory databases cannot be shared, so they read all at once.
    if (file === ':memory:') {
      const rows = connection.prepare(query.sql).all(...parameters) as Row[];
      for (let i = 0; i < rows.length; i += batchSize) yield rows.slice(i, i + batchSize);
      return;
    }
    const reader = openReader(file);
    try {
      const rows = reader.prepare(query.sql).iterate(...parameters) as IterableIterator<Row>;
      try {
        for (;;) {
          // A synchronous pull of a whole batch: no await per row.
          const batch: Row[] = [];
          for (let next = rows.next(); ; next = rows.next()) {
            if (next.done) break;
            batch.push(next.value);
            if (batch.length >= batchSize) break;
          }
          if (batch.length > 0) yield batch;
          if (batch.length < batchSize) break;
        }
      } finally {
        // Ends the statement (also when the listing is abandoned half-way) before the reader closes.
        rows.return?.();
      }
    } finally {
      reader.close();
    }
  }

  return {
    db,
    dialect: 'sqlite',
    location: file,
    async *stream<Row>(query: CompiledQuery<Row>): AsyncIterable<Row> {
      for await (const rows of streamBatches(query)) yield* rows;
    },
    streamBatches,
    async *streamPages<Row>(
      next: (previous: Row[] | undefined) => CompiledQuery<Row> | undefined,
    ): AsyncIterable<Row[]> {
      // Pages differ in their parameters only: prepare each statement once per listing.
      const statements = new Map<string, SQLite.Statement>();
      const run = (db: SQLite.Database, query: CompiledQuery<Row>) => {
        let statement = statements.get(query.sql);
        if (!statement) statements.set(query.sql, (statement = db.prepare(query.sql)));
        return statement.all(...(query.parameters as unknown[])) as Row[];
      };
      if (file === ':memory:') {
        // No second connection: read every page now, so the listing still sees one state.
        const pages: Row[][] = [];
        for (let query = next(undefined); query;) {
          const rows = run(connection, query);
          if (rows.length === 0) break;
          pages.push(rows);
          query = next(rows);
        }
        yield* pages;
        return;
      }
      const reader = openReader(file);
      try {
        // One read transaction: every page comes from the snapshot its first statement took.
        reader.exec('BEGIN');
        for (let query = next(undefined); query;) {
          const rows = run(reader, query);
          if (rows.length === 0) break;
          yield rows;
          query = next(rows);
        }
      } finally {
        if (reader.inTransaction) reader.exec('COMMIT');
        reader.close();
      }
    },
    async withMigrationLock<T>(work: () => Promise<T>): Promise<T> {
      // BEGIN IMMEDIATE takes SQLite's write lock up front, so processes starting together on one file
      // migrate one after the other; the later ones then find nothing left to do.
      connection.exec('BEGIN IMMEDIATE');
      try {
        const result = await work();
        connection.exec('COMMIT');
        return result;
      } catch (error) {
        if (connection.inTransaction) connection.exec('ROLLBACK');
        throw error;
      }
    },
    async integrityCheck() {
      const rows = connection.pragma('integrity_check') as { integrity_check: string }[];
      return rows.map((r) => r.integrity_check).filter((r) => r !== 'ok');
    },
    async close() {
      await db.destroy();
    },
  };
}

async function migrate(storage: Storage): Promise<void> {
  const migrations: Record<string, Migration> = {
    '001_initial': { up: (db) => initial.up(db, storage.dialect) },
    '002_tenant_users_and_audit': { up: (db) => tenantUsersAndAudit.up(db, storage.dialect) },
    '003_history': { up: (db) => history.up(db, storage.dialect) },
    '004_listing_tags': { up: (db) => listingTags.up(db, storage.dialect) },
    '005_trace_tags': { up: (db) => traceTags.up(db, storage.dialect) },
    '006_changes_feeds': { up: (db) => changesFeeds.up(db, storage.dialect) },
    '007_idempotency_keys': { up: (db) => idempotencyKeys.up(db) },
    '008_record_numbers': { up: (db) => recordNumbers.up(db) },
    '009_suspect_traces': { up: (db) => suspectTraces.up(db) },
    '010_json_text': { up: (db) => jsonText.up(db, storage.dialect) },
  };
  const migrator = new Migrator({
    db: storage.db,
    provider: { getMigrations: async () => migrations },
    // SQLite migrates inside the lock's own transaction; PostgreSQL in Kysely's, under an advisory lock.
    disableTransactions: storage.withMigrationLock !== undefined,
  });
  const run = () => migrator.migrateToLatest();
  const { error, results } = await (storage.withMigrationLock ? storage.withMigrationLock(run) : run());
  if (error) {
    const newer = await migrationsUnknownHere(storage, Object.keys(migrations));
    if (newer.length > 0)
      throw new Error(
        `The database at ${storage.location} was upgraded by a newer version of RXS (its migration ` +
          `${newer.join(', ')} is unknown to this one, whose last is ${Object.keys(migrations).at(-1)}). ` +
          `Run that version or a newer one; this version cannot use the database as it is now.`,
      );
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Database migration ${failed} failed at ${storage.location}: ${String(error)}`);
  }
}

/** Migrations the database records as done that this version does not have (a newer one ran them). */
async function migrationsUnknownHere(storage: Storage, known: string[]): Promise<string[]> {
  try {
    const done = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
      storage.db,
    );
    return done.rows.map((row) => row.name).filter((name) => !known.includes(name));
  } catch {
    return []; // no table: the first migration failed
  }
}

/** Stands in for ROLLBACK when SQLite has already rolled the transaction back. */
const ALREADY_ROLLED_BACK = {
  reader: false,
  all: () => [],
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
  iterate: () => [][Symbol.iterator](),
};

/** Compiled statements kept per connection; queries with long `in (...)` lists make many texts. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew, and better-sqlite3 compiles SQL on each `prepare` (about half
 * the cost of a point lookup). Statements are reused by SQL text. Kysely holds its one SQLite
 * connection for a whole streamed query, so a cached statement is never reused mid-iteration; the
 * `busy` check keeps that true should anything else prepare through this object.
 */
function reusingStatements(connection: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => connection.close(),
    prepare(sql) {
      // SQLite rolls a transaction back by itself after some failures (SQLITE_FULL, most I/O
      // errors); Kysely's ROLLBACK would then fail and hide the error that matters (a full disk: 507).
      if (sql === 'rollback' && !connection.inTransaction) return ALREADY_ROLLED_BACK;
      const known = statements.get(sql);
      if (known && !known.busy) return known;
      const statement = connection.prepare(sql);
      if (!known) {
        statements.set(sql, statement);
        if (statements.size > STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      }
      return statement;
    },
  };
}
