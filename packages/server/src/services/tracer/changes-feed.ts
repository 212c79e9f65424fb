import { sql } from 'kysely';
import type { Principal } from '../../auth/principal.js';
import { lineChunks } from '../../http/json-array-stream.js';
import type { Storage } from '../../storage/database.js';
import { decodeCursor, encodeCursor } from '../feeds/cursor.js';
import { presentLines, readChanges } from '../feeds/log.js';
import { NOW } from '../feeds/reply.js';
import { pageBytes } from '../../http/page-bytes.js';
import { eventLoopSlices } from '@rxs/exchange/export';
import type { TraceRow } from '../../storage/schema.js';
import { traceChangeCount, tracesWithStatus } from './service.js';

/** The cursors of this feed are bound to this scope (and the tenant). */
const SCOPE = 'traces';

/**
 * Bytes of one trace's line at most (about 600: ids of at most 128 characters, short types and
 * dates). A page holds no more traces than a page's bytes (pageBytes) takes of such lines, whatever
 * `limit` says: 10 922 at the default, more than the default limit.
 */
const TRACE_LINE_BYTES = 768;

/** Traces in a page of `budget` bytes, at least one. */
function tracesWithin(budget: number): number {
  return Math.max(1, Math.floor(budget / TRACE_LINE_BYTES));
}

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
 * The trace changes feed (`GET /traces/changes`): the traces created, deleted, made suspect or
 * reviewed in the tenant since a cursor, from the log of its trace counter (storage/migrations/
 * 006_changes_feeds.ts). A trace that is there is listed whole, with whether it is suspect now; a
 * deleted one by its id. The counter is read first and bounds the page, as in the records feed
 * (services/records/changes-feed.ts).
 */
export class TraceChangesFeed {
  constructor(private readonly storage: Storage) {}

  async page(
    principal: Principal,
    since: string | typeof NOW | undefined,
    limit: number,
  ): Promise<TraceFeedPage> {
    const tenantId = principal.tenantId;
    const counter = await traceChangeCount(this.storage.db, tenantId);
    const removed: string[] = [];
    if (since === NOW || since === undefined)
      return {
        cursor: encodeCursor(tenantId, SCOPE, { seq: counter }),
        more: false,
        complete: since === undefined,
        traces: lineChunks(since === undefined ? this.allLines(tenantId) : []),
        removed,
      };
    const changes = await readChanges(
      this.storage.db,
      { table: 'trace_listing_changes', id: 'trace_id', where: sql`tenant_id = ${tenantId}` },
      decodeCursor(since, tenantId, SCOPE, counter),
      counter,
      Math.min(limit, tracesWithin(pageBytes())),
    );
    return {
      cursor: encodeCursor(tenantId, SCOPE, changes.next),
      more: changes.more,
      complete: false,
      traces: lineChunks(this.currentLines(tenantId, changes.ids, removed)),
      removed,
    };
  }

  /** Every live trace of the tenant, in id order, from a database cursor, a batch at a time. */
  private async *allLines(tenantId: string): AsyncGenerator<string[]> {
    const query = this.storage.db
      .selectFrom('traces')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('id')
      .compile();
    const turn = eventLoopSlices();
    for await (const rows of this.storage.streamBatches<TraceRow>(query)) {
      yield (await tracesWithStatus(this.storage.db, tenantId, rows)).map((trace) => JSON.stringify(trace));
      const pause = turn();
      if (pause) await pause;
    }
  }

  /** The traces of `ids` that exist now, as lines; the others (deleted) go to `removed`. */
  private currentLines(tenantId: string, ids: string[], removed: string[]) {
    return presentLines(
      ids,
      async (batch) => {
        const rows = await this.storage.db
          .selectFrom('traces')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('id', 'in', batch)
          .execute();
        const traces = await tracesWithStatus(this.storage.db, tenantId, rows);
        return new Map(traces.map((trace) => [trace._id, JSON.stringify(trace)]));
      },
      removed,
    );
  }
}
