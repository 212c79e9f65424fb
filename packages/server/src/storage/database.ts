import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type CompiledQuery, type Migration } from 'kysely';
import * as initial from './migrations/001_initial.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/**
 * The storage every service works through: one Kysely instance (same queries on both engines) plus a
 * streaming read that does not hold the shared connection, so a slow client downloading a large
 * listing never stalls the rest of the server.
 */
export interface Storage {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  readonly location: string;
  /** Runs a read query and yields its rows one by one from a database cursor. */
  stream<Row>(query: CompiledQuery<Row>): AsyncIterable<Row>;
  /** Checks the database file/cluster for corruption; returns the problems found (empty when sound). */
  integrityCheck(): Promise<string[]>;
  close(): Promise<void>;
}

export interface OpenStorageOptions {
  /** `sqlite:PATH`, a plain file path, or `:memory:`. */
  url: string;
}

export async function openStorage(options: OpenStorageOptions): Promise<Storage> {
  const { url } = options;
  if (/^postgres(ql)?:\/\//.test(url)) {
    throw new Error(
      `PostgreSQL (${url.replace(/\/\/[^@]*@/, '//***@')}) is not supported by this build yet; use a SQLite file path.`,
    );
  }
  const storage = openSqlite(url.replace(/^sqlite:/, ''));
  await migrate(storage);
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
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Database migration ${failed} failed at ${storage.location}: ${String(error)}`);
  }
}
