import { sql } from 'kysely';
import type { Principal } from '../../auth/principal.js';
import type { Storage } from '../../storage/database.js';
import { decodeCursor, encodeCursor, type ChangesCursor } from '../feeds/cursor.js';
import { changedSince } from '../feeds/log.js';
import { NOW } from '../feeds/reply.js';
import type { TraceRow } from './batch-walk.js';
import { toTrace } from './service.js';

/** The cursors of this feed are bound to this scope (and the tenant). */
const SCOPE = 'traces';
const READ_BATCH = 500;
const CHUNK_BYTES = 256 * 1024;

/** One page of the trace feed, before its traces stream. */
export interface TraceFeedPage {
  cursor: string;
  more: boolean;
  complete: boolean;
  /** The new traces as `,\n`-prefixed JSON lines, in chunks. */
  traces: AsyncIterable<string>;
  /** Ids of the traces deleted; complete once `traces` has been read to the end. */
  removed: string[];
}

/**
 * The trace changes feed (`GET /traces/changes`): the traces created and deleted in the tenant since
 * a cursor, from the log of its trace counter (storage/migrations/006_changes_feeds.ts). Traces never
 * change, so a trace is either new (listed whole) or deleted (its id). The counter is read first and
 * bounds the page, as in the records feed (services/records/changes-feed.ts).
 */
export class TraceChangesFeed {
  constructor(private readonly storage: Storage) {}

  async page(
    principal: Principal,
    since: string | typeof NOW | undefined,
    limit: number,
  ): Promise<TraceFeedPage> {
    const tenantId = principal.tenantId;
    const counter = await this.counter(tenantId);
    const at = (cursor: ChangesCursor) => encodeCursor(tenantId, SCOPE, cursor);
    if (since === NOW)
      return { cursor: at({ seq: counter }), more: false, complete: false, traces: none(), removed: [] };
    if (since === undefined)
      return {
        cursor: at({ seq: counter }),
        more: false,
        complete: true,
        traces: this.allLines(tenantId),
        removed: [],
      };
    const cursor = decodeCursor(since, tenantId, SCOPE, counter);
    const changed = await changedSince(
      this.storage.db,
      { table: 'trace_listing_changes', id: 'trace_id', where: sql`tenant_id = ${tenantId}` },
      cursor,
      counter,
      limit + 1,
    );
    const page = changed.slice(0, limit);
    const more = changed.length > limit;
    const last = page[page.length - 1];
    const removed: string[] = [];
    return {
      cursor: at(more && last ? { seq: last.seq, after: last.id } : { seq: counter }),
      more,
      complete: false,
      traces: this.currentLines(
        tenantId,
        page.map((change) => change.id),
        removed,
      ),
      removed,
    };
  }

  private async counter(tenantId: string): Promise<number> {
    const row = await this.storage.db
      .selectFrom('trace_listing_tags')
      .select('changes')
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return Number(row?.changes ?? 0);
  }

  /** Every live trace of the tenant, in id order, from a database cursor. */
  private async *allLines(tenantId: string): AsyncGenerator<string> {
    const query = this.storage.db
      .selectFrom('traces')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('id')
      .compile();
    yield* chunked(
      (async function* (batches: AsyncIterable<TraceRow[]>) {
        for await (const rows of batches) for (const row of rows) yield JSON.stringify(toTrace(row));
      })(this.storage.streamBatches<TraceRow>(query)),
    );
  }

  /** The traces of `ids` that exist now, as lines; the others (deleted) go to `removed`. */
  private async *currentLines(tenantId: string, ids: string[], removed: string[]): AsyncGenerator<string> {
    const db = this.storage.db;
    yield* chunked(
      (async function* () {
        for (let start = 0; start < ids.length; start += READ_BATCH) {
          const batch = ids.slice(start, start + READ_BATCH);
          const rows = await db
            .selectFrom('traces')
            .selectAll()
            .where('tenant_id', '=', tenantId)
            .where('id', 'in', batch)
            .execute();
          const byId = new Map(rows.map((row) => [row.id, row as TraceRow]));
          for (const id of batch) {
            const row = byId.get(id);
            if (row) yield JSON.stringify(toTrace(row));
            else removed.push(id);
          }
        }
      })(),
    );
  }
}

async function* none(): AsyncGenerator<string> {}

/** Lines joined into `,\n`-prefixed chunks of about CHUNK_BYTES. */
async function* chunked(lines: AsyncIterable<string>): AsyncGenerator<string> {
  let buffer = '';
  for await (const line of lines) {
    buffer += `,\n${line}`;
    if (buffer.length >= CHUNK_BYTES) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer) yield buffer;
}
