import pg from 'pg';
import Cursor from 'pg-cursor';
import { to as copyTo } from 'pg-copy-streams';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import type { LineListing, Storage } from '../database.js';
import type { Database } from '../schema.js';
import { copyRowsAsLines, inlineParameters } from './copy-text.js';
import { postgresSyntax } from './syntax.js';

export interface PostgresOptions {
  /** Connections per process; several replicas share the server's max_connections. */
  poolSize: number;
  /** Longest a single statement may run before PostgreSQL cancels it. */
  statementTimeoutMs: number;
}

export const DEFAULT_POSTGRES_OPTIONS: PostgresOptions = { poolSize: 10, statementTimeoutMs: 30_000 };

/** The storage on PostgreSQL, with its own bulk read. */
export interface PostgresStorage extends Storage {
  /**
   * `COPY (query) TO STDOUT` in one consistent snapshot, the rows as the bytes of COPY's text format
   * (copy-text.ts reads them). A listing's lines then never become JS strings.
   */
  copyOut(query: CompiledQuery<unknown>): AsyncIterable<Buffer>;
}

/** Rows fetched per round trip while streaming a listing. */
const CURSOR_BATCH = 1000;
/** A listing streamed to a slow client may take long; it gets its own, generous limit. */
const STREAM_STATEMENT_TIMEOUT = '15min';

/** PostgreSQL's type id of `json`. */
const JSON_TYPE = 114;

/**
 * `json` columns (records' form, data and context, migration 010) come back as the text stored, as
 * SQLite's do: a listing splices it in without parsing it (json.ts reads it where a value is needed).
 */
const storedJsonAsText: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === JSON_TYPE
      ? (text: string) => text
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

// jsonb comes back parsed, json and text stay text; BIGINT counts come back as strings (Number() them).
export function openPostgres(
  url: string,
  options: PostgresOptions = DEFAULT_POSTGRES_OPTIONS,
): PostgresStorage {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    statement_timeout: options.statementTimeoutMs,
    idle_in_transaction_session_timeout: Math.max(options.statementTimeoutMs * 2, 60_000),
    application_name: 'rxs',
    types: storedJsonAsText,
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool, cursor: Cursor }) });

  /**
   * Runs `read` in a read-only REPEATABLE READ transaction on a client of its own: one snapshot for
   * the whole listing, like SQLite's reader connection.
   */
  async function* inSnapshot<T>(
    read: (client: pg.PoolClient, discard: () => void) => AsyncIterable<T>,
  ): AsyncIterable<T> {
    const client = await pool.connect();
    let failed = false;
    let open = false;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      open = true;
      await client.query(`SET LOCAL statement_timeout = '${STREAM_STATEMENT_TIMEOUT}'`);
      yield* read(client, () => (failed = true));
      await client.query('COMMIT');
      open = false;
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      // A listing abandoned half-way (client gone) ends its transaction before the client is reused;
      // one whose connection cannot take another statement (a COPY cut short) closes it instead.
      if (open && !failed) await client.query('ROLLBACK').catch(() => undefined);
      client.release(failed);
    }
  }

  function streamBatches<Row>(query: CompiledQuery<Row>, batchSize = CURSOR_BATCH): AsyncIterable<Row[]> {
    return inSnapshot(async function* (client) {
      const cursor = client.query(new Cursor(query.sql, query.parameters as unknown[]));
      try {
        for (;;) {
          const rows = await cursor.read(batchSize);
          if (rows.length === 0) break;
          yield rows as Row[];
          if (rows.length < batchSize) break;
        }
      } finally {
        await cursor.close();
      }
    });
  }

  function copyOut(query: CompiledQuery<unknown>): AsyncIterable<Buffer> {
    return inSnapshot(async function* (client, discard) {
      const text = inlineParameters(query.sql, query.parameters, (value) => client.escapeLiteral(value));
      const rows = client.query(copyTo(`COPY (${text}) TO STDOUT`));
      let complete = false;
      try {
        for await (const chunk of rows) yield chunk as Buffer;
        complete = true;
      } finally {
        // Stopped half-way, the connection is still in COPY mode: it is closed, not reused.
        if (!complete) {
          discard();
          rows.destroy();
        }
      }
    });
  }

  /** The whole listing from one COPY, whose bytes go out as they come; the `,\n`s are copy-text.ts's. */
  function streamLines(listing: LineListing, chunkBytes: number): AsyncIterable<Buffer> {
    const rows = listing.rows({ after: listing.after === undefined ? undefined : sql.val(listing.after) });
    return copyRowsAsLines(copyOut(rows.select(listing.line('').as('line')).compile()), chunkBytes);
  }

  return {
    db,
    dialect: 'postgres',
    syntax: postgresSyntax,
    location: url.replace(/\/\/[^@/]*@/, '//***@'),
    // A fetch costs a round trip: a few rows save most of the trips while holding a few records
    // (8 of 2 MB are 16 MB).
    largeRowsPerFetch: 8,
    copyOut,
    async *stream<Row>(query: CompiledQuery<Row>): AsyncIterable<Row> {
      for await (const rows of streamBatches(query)) yield* rows;
    },
    streamBatches,
    async *streamPages<Row>(
      next: (previous: Row[] | undefined) => CompiledQuery<Row> | undefined,
    ): AsyncIterable<Row[]> {
      yield* inSnapshot(async function* (client) {
        for (let query = next(undefined); query;) {
          const { rows } = await client.query(query.sql, query.parameters as unknown[]);
          if (rows.length === 0) break;
          yield rows as Row[];
          query = next(rows as Row[]);
        }
      });
    },
    streamLines,
    async integrityCheck() {
      const problems: string[] = [];
      const orphans = await db
        .selectFrom('kt_revisions')
        .leftJoin('kt_histories', 'kt_histories.id', 'kt_revisions.history_id')
        .select('kt_revisions.id')
        .where('kt_histories.id', 'is', null)
        .execute();
      if (orphans.length > 0) problems.push(`${orphans.length} KT revisions without a history`);
      return problems;
    },
    async close() {
      await db.destroy();
    },
  };
}
