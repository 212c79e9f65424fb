import type SQLite from 'better-sqlite3';
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
 */

/** Prepared statements of one connection, reused by SQL text. */
export interface StatementCache {
  prepare(sql: string): SQLite.Statement;
  close(): void;
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

function run<R>(statement: SQLite.Statement, parameters: readonly unknown[]): QueryResult<R> {
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

const write = <R>(statements: StatementCache, query: CompiledQuery) =>
  run<R>(statements.prepare(query.sql), query.parameters);

class SqliteSharingDriver implements Driver {
  /** The lease that holds the write connection, if any; the next holders, in the order they asked. */
  private holder: Lease | undefined;
  private readonly waiting: { lease: Lease; take: () => void }[] = [];
  private reader: StatementCache | undefined;

  constructor(
    private readonly writer: StatementCache,
    private readonly openReader: (() => StatementCache) | undefined,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Lease(this);
  }

  async beginTransaction(lease: Lease): Promise<void> {
    await this.hold(lease);
    write(this.writer, CompiledQuery.raw('begin'));
  }

  async commitTransaction(): Promise<void> {
    write(this.writer, CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(): Promise<void> {
    write(this.writer, CompiledQuery.raw('rollback'));
  }

  async releaseConnection(lease: Lease): Promise<void> {
    if (this.holder === lease) this.handOver();
  }

  async destroy(): Promise<void> {
    this.reader?.close();
    this.writer.close();
  }

  async execute<R>(lease: Lease, query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.holder === lease || this.holder === undefined) return write(this.writer, query);
    if (this.openReader) {
      // Prepared on the reader, not the writer: the writer may be in the middle of a streamed read.
      this.reader ??= this.openReader();
      const statement = this.reader.prepare(query.sql);
      if (statement.readonly) return run(statement, query.parameters);
    }
    await this.hold(lease);
    try {
      return write(this.writer, query);
    } finally {
      this.handOver();
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
 */
export function sharingSqliteDialect(writer: StatementCache, openReader?: () => StatementCache): Dialect {
  return {
    createDriver: () => new SqliteSharingDriver(writer, openReader),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createAdapter: () => new SqliteAdapter(),
    createIntrospector: (db) => new SqliteIntrospector(db),
  };
}
