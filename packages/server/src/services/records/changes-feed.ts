import { sql } from 'kysely';
import type { Principal } from '../../auth/principal.js';
import { lineChunks } from '../../http/json-array-stream.js';
import type { Storage } from '../../storage/database.js';
import { decodeCursor, encodeCursor } from '../feeds/cursor.js';
import { presentLines, readChanges, withinBytes } from '../feeds/log.js';
import { pageBytes } from '../../http/page-bytes.js';
import { storedRecordBytes } from './as-of-query.js';
import { NOW } from '../feeds/reply.js';
import { recordJsonSql } from './repository.js';
import type { RecordsService } from './service.js';

/**
 * Changes per page when the client names no limit, and at most (422 beyond). A page also ends once
 * its records pass a page's bytes (pageBytes), with `more` set.
 */
export const DEFAULT_CHANGES_PAGE = 10_000;
export const MAX_CHANGES_PAGE = 100_000;

/** One page of the feed, before its records stream. */
export interface ChangesPage {
  revisionId: string;
  supersededBy: string | null;
  cursor: string;
  more: boolean;
  complete: boolean;
  /** The changed records as `,\n`-prefixed JSON lines, in chunks (see http/json-array-stream.ts). */
  records: AsyncIterable<Buffer | string>;
  /** The ids that left the listing; complete once `records` has been read to the end. */
  removed: string[];
}

/**
 * The records changes feed (`GET /records/changes`): what changed in one revision's listing since a
 * cursor, from the per-revision log of counted changes (storage/migrations/006_changes_feeds.ts).
 *
 * The counter is read first and bounds the page; the records are read after it, as they are then.
 * A change after the counter was read may thus show early, and shows again in the next page: a
 * client applying pages in order always ends at the listing as it is, and never misses a change.
 */
export class RecordChangesFeed {
  constructor(
    private readonly storage: Storage,
    private readonly records: RecordsService,
  ) {}

  async page(
    principal: Principal,
    revisionId: string,
    since: string | typeof NOW | undefined,
    limit: number,
  ): Promise<ChangesPage> {
    const tenantId = principal.tenantId;
    const counter = await this.counter(tenantId, revisionId);
    const superseded = await this.records.supersededRevision(tenantId, [revisionId]);
    const start = { revisionId, supersededBy: superseded?.current ?? null, removed: [] as string[] };
    if (since === NOW || since === undefined) {
      // From the beginning: the whole listing (or, from now, none of it), and a cursor at the
      // counter read before it.
      return {
        ...start,
        cursor: encodeCursor(tenantId, revisionId, { seq: counter }),
        more: false,
        complete: since === undefined,
        records:
          since === undefined
            ? this.records.streamJsonChunks(principal, { revisionIds: [revisionId] })
            : lineChunks([]),
      };
    }
    const read = await readChanges(
      this.storage.db,
      {
        table: 'record_listing_changes',
        id: 'record_id',
        where: sql`tenant_id = ${tenantId} AND kt_revision_id = ${revisionId}`,
      },
      decodeCursor(since, tenantId, revisionId, counter),
      counter,
      limit,
    );
    // Records may weigh megabytes: a page also ends once its records pass a page's bytes.
    const changes = await withinBytes(read, (batch) => this.sizes(tenantId, revisionId, batch), pageBytes());
    return {
      ...start,
      cursor: encodeCursor(tenantId, revisionId, changes.next),
      more: changes.more,
      complete: false,
      records: lineChunks(this.currentLines(tenantId, revisionId, changes.ids, start.removed)),
    };
  }

  /** About the bytes of the line of each record of `ids` in the listing, read without the records. */
  private async sizes(tenantId: string, revisionId: string, ids: string[]): Promise<Map<string, number>> {
    const rows = await this.storage.db
      .selectFrom('records')
      .select(['id', storedRecordBytes(this.storage.syntax, 'records').as('bytes')])
      .where('tenant_id', '=', tenantId)
      .where('kt_revision_id', '=', revisionId)
      .where('id', 'in', ids)
      .execute();
    return new Map(rows.map((row) => [row.id, Number(row.bytes)]));
  }

  /** How often the revision's listing changed so far (0 before its first change). */
  private async counter(tenantId: string, revisionId: string): Promise<number> {
    const row = await this.storage.db
      .selectFrom('record_listing_tags')
      .select('changes')
      .where('tenant_id', '=', tenantId)
      .where('kt_revision_id', '=', revisionId)
      .executeTakeFirst();
    return Number(row?.changes ?? 0);
  }

  /**
   * The records of `ids` that are in the listing now, as lines; the others go to `removed`. Each
   * line is built by the database, as a listing's are (`recordJsonSql`: the same bytes as
   * `recordJson`, without a row object per record).
   */
  private currentLines(tenantId: string, revisionId: string, ids: string[], removed: string[]) {
    const line = recordJsonSql(this.storage.syntax, '', { tenantId, revisionId });
    return presentLines(
      ids,
      async (batch) => {
        const rows = await this.storage.db
          .selectFrom('records')
          .select(['id', line.as('line')])
          .where('tenant_id', '=', tenantId)
          .where('kt_revision_id', '=', revisionId)
          .where('id', 'in', batch)
          .execute();
        return new Map(rows.map((row) => [row.id, row.line]));
      },
      removed,
    );
  }
}
