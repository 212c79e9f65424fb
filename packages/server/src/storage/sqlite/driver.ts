import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { StatementResult, StatementRunner } from './statements.js';

/**
 * Kysely's SQLite dialect, with a transaction that may give the event loop turns.
 *
 * SQLite has one writer, and a transaction holds the write connection from BEGIN to COMMIT. Kysely's
 * own driver makes every statement of every request wait for that connection, so a transaction
 * that awaits between its statements (a large write giving the event loop a turn, so that other
 * requests are answered) would keep every read waiting until it commits, /healthz included. Here:
 *
 * - a transaction (and a streamed read) holds the write connection; other transactions, and writes
 *   outside one, wait for it in the order they came, so nothing interleaves with the transaction;
 * - a read-only statement outside a transaction runs at once: on the write connection when no one
 *   holds it, else on a read-only connection of the same file, which sees what was last committed
 *   (WAL), never the open transaction's writes. An in-memory database has no second connection:
 *   there, such reads wait like writes.
 *
 * better-sqlite3 runs each statement to its end synchronously, so a statement never overlaps
 * another on the same connection.
 *
 * A write to a file is acknowledged once it is on disk (`disk.sync()`, wal-sync.ts: the WAL synced
 * at once after a small write, off the event loop after a large one). A transaction hands the write
 * connection on as soon as it has committed, before that sync: the next one need not wait for it.
 * When the WAL is due a checkpoint, the checkpoint holds the write connection like a transaction
 * (writes wait for it, reads go on), so that it copies every frame and the next write can start the
 * WAL afresh: a WAL that writers kept appending to would grow without end.
 */

/** What a file database does for durability and checkpoints (storage.ts). */
export interface SqliteDisk {
  /** Resolves once what was committed is on disk; `bytes`: about how much was written since the last call. */
  sync(bytes: number): Promise<void>;
  checkpointDue(): boolean;
  /** Runs one checkpoint beside the event loop; never throws (a failure is handled inside). */
  checkpoint(): Promise<void>;
}

/** A connection as Kysely asks for one: a lease of the write connection, or a route around it. */
class Lease implements DatabaseConnection {
  constructor(private readonly driver: SqliteSharingDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute<R>(this, query);
  }

  streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    return this.driver.stream<R>(this, query);
  }
}

function queryResult<R>({ rows, changes, lastInsertRowid }: StatementResult): QueryResult<R> {
  if (changes === undefined) return { rows: rows as R[] };
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid ?? 0), rows: [] };
}

/** About the bytes a statement's parameters add to the database (text, blobs; 8 for a number). */
function parameterBytes(parameters: readonly unknown[]): number {
  let bytes = 0;
  for (const value of parameters) {
    if (typeof value === 'string') bytes += value.length;
    else if (value instanceof Uint8Array) bytes += value.byteLength;
    else bytes += 8;
  }
  return bytes;
}

class SqliteSharingDriver implements Driver {
  /** The lease that holds the write connection, if any; the next holders, in the order they asked. */
  private holder: Lease | undefined;
  private readonly waiting: { lease: Lease; take: () => void }[] = [];
  private reader: StatementRunner | undefined;

  constructor(
    private readonly writer: StatementRunner,
    private readonly openReader: (() => StatementRunner) | undefined,
    private readonly disk: SqliteDisk | undefined,
  ) {}

  private checkpointing = false;
  /** Bytes of the parameters of the writes since the last sync: how large the next sync is. */
  private unsynced = 0;

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Lease(this);
  }

  async beginTransaction(lease: Lease): Promise<void> {
    await this.hold(lease);
    this.writer.run('begin', []);
  }

  async commitTransaction(lease: Lease): Promise<void> {
    this.writer.run('commit', []);
    if (this.holder === lease) this.handOver();
    await this.durable();
  }

  async rollbackTransaction(lease: Lease): Promise<void> {
    // After a commit the connection may be another's (a failed sync): nothing of this one is open.
    if (this.holder === lease) this.writer.run('rollback', []);
  }

  async releaseConnection(lease: Lease): Promise<void> {
    if (this.holder === lease) this.handOver();
  }

  async destroy(): Promise<void> {
    this.reader?.close();
    this.writer.close();
  }

  async execute<R>(lease: Lease, query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.holder === lease) return queryResult(this.run(query));
    if (this.holder === undefined) return this.writeOutsideTransaction(query);
    if (this.openReader) {
      // Prepared on the reader, not the writer: the writer may be in the middle of a streamed read.
      this.reader ??= this.openReader();
      if (this.readsOnly(query.sql)) return queryResult(this.reader.run(query.sql, query.parameters));
    }
    await this.hold(lease);
    try {
      return await this.writeOutsideTransaction(query);
    } finally {
      this.handOver();
    }
  }

  /** A statement on the write connection, outside a transaction: a write commits by itself. */
  private async writeOutsideTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = this.run(query);
    if (result.wrote) await this.durable();
    return queryResult(result);
  }

  /** A statement on the write connection, its parameters counted when it writes. */
  private run(query: CompiledQuery): StatementResult {
    const result = this.writer.run(query.sql, query.parameters);
    if (result.wrote && this.disk) this.unsynced += parameterBytes(query.parameters);
    return result;
  }

  /** Resolves once what was committed is on disk; starts a checkpoint when one is due. */
  private async durable(): Promise<void> {
    if (!this.disk) return;
    const bytes = this.unsynced;
    this.unsynced = 0;
    await this.disk.sync(bytes);
    if (!this.checkpointing && this.disk.checkpointDue()) void this.checkpoint(this.disk);
  }

  private async checkpoint(disk: SqliteDisk): Promise<void> {
    this.checkpointing = true;
    const lease = new Lease(this);
    try {
      await this.hold(lease);
      await disk.checkpoint();
    } finally {
      if (this.holder === lease) this.handOver();
      this.checkpointing = false;
    }
  }

  /**
   * Whether `sql` only reads, as the reader connection compiles it. A statement it cannot compile
   * (its idea of the schema may be older than the writer's) goes to the writer, which has the last
   * word, also on the error.
   */
  private readsOnly(sql: string): boolean {
    try {
      return this.reader!.prepare(sql).readonly;
    } catch {
      return false;
    }
  }

  async *stream<R>(lease: Lease, query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // The rows are read across awaits: the write connection is held until the last.
    const held = this.holder === lease;
    if (!held) await this.hold(lease);
    try {
      for (const row of this.writer.prepare(query.sql).iterate(query.parameters)) yield { rows: [row as R] };
    } finally {
      if (!held) this.handOver();
    }
  }

  private async hold(lease: Lease): Promise<void> {
    if (this.holder === undefined) {
      this.holder = lease;
      return;
    }
    await new Promise<void>((take) => this.waiting.push({ lease, take }));
  }

  /** The next in line holds the write connection from now: no one can take it in between. */
  private handOver(): void {
    const next = this.waiting.shift();
    this.holder = next?.lease;
    next?.take();
  }
}

/**
 * The SQLite dialect over `writer`; reads outside a transaction go to the connection `openReader`
 * opens (on first need) while another holds the writer. Without `openReader`, they wait for it.
 * For a file, `disk` makes writes durable before they are acknowledged, and checkpoints.
 */
export function sharingSqliteDialect(
  writer: StatementRunner,
  openReader: (() => StatementRunner) | undefined,
  disk: SqliteDisk | undefined,
): Dialect {
  return {
    createDriver: () => new SqliteSharingDriver(writer, openReader, disk),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createAdapter: () => new SqliteAdapter(),
    createIntrospector: (db) => new SqliteIntrospector(db),
  };
}
