import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type CompiledQuery, type Migration } from 'kysely';
import * as initial from './migrations/001_initial.js';
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

function openSqlite(path: string): Storage {
  const file = path === ':memory:' ? path : resolve(path);
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const connection = new SQLite(file);
  connection.pragma('journal_mode = WAL');
  // FULL: a commit is on disk before we answer 201/200, so an acknowledged write survives a crash.
  connection.pragma('synchronous = FULL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });

  return {
    db,
    dialect: 'sqlite',
    location: file,
    async *stream<Row>(query: CompiledQuery<Row>): AsyncIterable<Row> {
      // A reader connection of its own: WAL gives it a consistent snapshot for the whole statement
      // while writers carry on. In-memory databases cannot be shared, so they read all at once.
      if (file === ':memory:') {
        for (const row of connection.prepare(query.sql).all(...(query.parameters as unknown[])))
          yield row as Row;
        return;
      }
      const reader = new SQLite(file, { readonly: true });
      try {
        reader.pragma('busy_timeout = 5000');
        const statement = reader.prepare(query.sql);
        for (const row of statement.iterate(...(query.parameters as unknown[]))) yield row as Row;
      } finally {
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
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Database migration ${failed} failed at ${storage.location}: ${String(error)}`);
  }
}
