import { eventLoopSlices } from '@rxs/exchange/export';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type CompiledQuery } from 'kysely';
import type { Storage } from '../database.js';
import type { Database } from '../schema.js';
import { checkpointer } from './checkpointer.js';
import { sharingSqliteDialect } from './driver.js';
import { linePages, type NamedStatement } from './line-pages.js';
import { statementRunner } from './statements.js';
import { sqliteSyntax } from './syntax.js';
import { walSync } from './wal-sync.js';

/**
 * The size the SQLite WAL returns to when it starts afresh (journal_size_limit), and past which it
 * is due a checkpoint (SQLite's own auto-checkpoint point: 1000 pages of 4 KiB).
 */
export const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/** The writer connection's page cache, in KiB (64 MiB). */
export const WRITER_CACHE_KIB = 64 * 1024;

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

/** Opens (creating it if needed) the SQLite database at `path`, or an in-memory one for `:memory:`. */
export function openSqlite(path: string): Storage {
  const file = path === ':memory:' ? path : resolve(path);
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true });
    keepPrivate(file);
  }
  const connection = new SQLite(file);
  connection.pragma('journal_mode = WAL');
  // NORMAL: a commit does not sync the WAL itself; wal-sync.ts syncs it (a large write's off the event
  // loop) before the write is acknowledged (201/200): an acknowledged write survives a crash as with FULL.
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  // A long reader keeps the WAL from being reset, so it grows; once readers end and a checkpoint
  // completes, the next write cuts the file back to this size instead of keeping its largest size.
  connection.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  // The writer's page cache (SQLite's default is 2 MiB): a bulk write touches the B-tree pages of
  // several indexes per row, and pages evicted mid-transaction are read back again. Memory is taken
  // only as pages are used.
  connection.pragma(`cache_size = -${WRITER_CACHE_KIB}`);
  const onDisk = file === ':memory:' ? undefined : durability(connection, file);
  // Reads outside a transaction go to a reader of their own while a transaction holds the writer.
  const db = new Kysely<Database>({
    dialect: sharingSqliteDialect(
      statementRunner(connection),
      onDisk && (() => statementRunner(openReader(file))),
      onDisk,
    ),
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
    const turn = eventLoopSlices();
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
          await turn();
        }
      } finally {
        // Ends the statement (also when the listing is abandoned half-way) before the reader closes.
        rows.return?.();
      }
    } finally {
      reader.close();
    }
  }

  /** `Storage.streamPages`, for statements that may also have named parameters. */
  async function* readPages<Row>(
    next: (previous: Row[] | undefined) => NamedStatement<Row> | undefined,
  ): AsyncIterable<Row[]> {
    // Pages differ in their parameters only: prepare each statement once per listing.
    const statements = new Map<string, SQLite.Statement>();
    const run = (db: SQLite.Database, { query, named }: NamedStatement<Row>) => {
      let statement = statements.get(query.sql);
      if (!statement) statements.set(query.sql, (statement = db.prepare(query.sql)));
      const parameters = query.parameters as unknown[];
      return (named ? statement.all(...parameters, named) : statement.all(...parameters)) as Row[];
    };
    if (file === ':memory:') {
      // No second connection: read every page now, so the listing still sees one state.
      const pages: Row[][] = [];
      for (let statement = next(undefined); statement;) {
        const rows = run(connection, statement);
        if (rows.length === 0) break;
        pages.push(rows);
        statement = next(rows);
      }
      yield* pages;
      return;
    }
    const reader = openReader(file);
    const turn = eventLoopSlices();
    try {
      // One read transaction: every page comes from the snapshot its first statement took.
      reader.exec('BEGIN');
      for (let statement = next(undefined); statement;) {
        const rows = run(reader, statement);
        if (rows.length === 0) break;
        yield rows;
        // SQLite answers at once: without a turn now and then, a consumer that never waits (a
        // socket that takes every chunk) would hold the event loop for the whole read.
        await turn();
        statement = next(rows);
      }
    } finally {
      if (reader.inTransaction) reader.exec('COMMIT');
      reader.close();
    }
  }

  return {
    db,
    dialect: 'sqlite',
    syntax: sqliteSyntax,
    location: file,
    // The cursor hands rows out one by one at no cost.
    largeRowsPerFetch: 1,
    async *stream<Row>(query: CompiledQuery<Row>): AsyncIterable<Row> {
      for await (const rows of streamBatches(query)) yield* rows;
    },
    streamBatches,
    streamPages: <Row>(next: (previous: Row[] | undefined) => CompiledQuery<Row> | undefined) =>
      readPages<Row>((previous) => {
        const query = next(previous);
        return query && { query };
      }),
    streamLines: (listing, chunkBytes) => linePages(db, listing, chunkBytes, readPages),
    async withMigrationLock<T>(work: () => Promise<T>): Promise<T> {
      // BEGIN IMMEDIATE takes SQLite's write lock up front, so processes starting together on one file
      // migrate one after the other; the later ones then find nothing left to do.
      connection.exec('BEGIN IMMEDIATE');
      try {
        const result = await work();
        connection.exec('COMMIT');
        await onDisk?.sync(0);
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
      await onDisk?.closeBeforeConnection();
      await db.destroy();
      await onDisk?.close();
    },
  };
}

/**
 * What keeps the commits of the file `file` on disk without holding the event loop: the WAL synced
 * before a write is acknowledged (wal-sync.ts), and checkpoints in a thread of their own
 * (checkpointer.ts) instead of inside a commit.
 */
function durability(connection: SQLite.Database, file: string) {
  const wal = walSync(file);
  const checkpoints = checkpointer(file);
  connection.pragma('wal_autocheckpoint = 0');
  let failed = false;
  const walBytes = () => {
    try {
      return statSync(`${file}-wal`).size;
    } catch {
      return 0;
    }
  };
  return {
    sync: (bytes: number) => wal.sync(bytes),
    // The WAL file is cut back to WAL_SIZE_LIMIT_BYTES when it starts afresh, and grows past it only
    // with frames written since.
    checkpointDue: () => !failed && walBytes() > WAL_SIZE_LIMIT_BYTES,
    async checkpoint() {
      try {
        await checkpoints.checkpoint();
      } catch {
        // Without the thread, the connection checkpoints again itself: the WAL must stay bounded.
        failed = true;
        if (connection.open) connection.pragma('wal_autocheckpoint = 1000');
      }
    },
    /** The checkpoint thread's connection ends before the writer's, which then checkpoints last. */
    closeBeforeConnection: () => checkpoints.close(),
    close: () => wal.close(),
  };
}
