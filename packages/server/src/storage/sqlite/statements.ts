import type SQLite from 'better-sqlite3';

/** Compiled statements kept per connection. */
export const STATEMENT_CACHE_SIZE = 500;

/**
 * What a statement gave: its rows, or for a write the rows changed and the last rowid; `wrote`
 * when it may have changed the database (a write may also return rows: `returning`).
 */
export interface StatementResult {
  rows: unknown[];
  changes?: number;
  lastInsertRowid?: number | bigint;
  wrote: boolean;
}

/** Prepared statements of one connection, reused by SQL text, and the one way to run them. */
export interface StatementRunner {
  prepare(sql: string): SQLite.Statement;
  run(sql: string, parameters: readonly unknown[]): StatementResult;
  close(): void;
}

/**
 * The statements of `db`. Kysely prepares every query anew, and better-sqlite3 compiles SQL on each
 * `prepare` (about half the cost of a point lookup): statements are reused by SQL text, at most
 * `cacheSize` of them (queries with long `in (...)` lists make many texts). A statement still being
 * iterated is never handed out again (`busy`).
 */
export function statementRunner(db: SQLite.Database, cacheSize = STATEMENT_CACHE_SIZE): StatementRunner {
  const statements = new Map<string, SQLite.Statement>();
  const prepare = (sql: string): SQLite.Statement => {
    const known = statements.get(sql);
    if (known && !known.busy) return known;
    const statement = db.prepare(sql);
    if (!known) {
      statements.set(sql, statement);
      if (statements.size > cacheSize) statements.delete(statements.keys().next().value as string);
    }
    return statement;
  };
  return {
    prepare,
    run(sql, parameters) {
      // SQLite rolls a transaction back by itself after some failures (SQLITE_FULL, most I/O errors);
      // a ROLLBACK would then fail and hide the error that matters (a full disk: 507).
      if (sql === 'rollback' && !db.inTransaction) return { rows: [], wrote: false };
      const statement = prepare(sql);
      const wrote = !statement.readonly;
      if (statement.reader) return { rows: statement.all(parameters), wrote };
      const { changes, lastInsertRowid } = statement.run(parameters);
      return { rows: [], changes, lastInsertRowid, wrote };
    },
    close: () => db.close(),
  };
}
