import { sql } from 'kysely';
import type { Principal } from '../../auth/principal.js';
import type { Storage } from '../../storage/database.js';
import { decodeCursor, encodeCursor, type ChangesCursor } from '../feeds/cursor.js';
import { changedSince } from '../feeds/log.js';
import { NOW } from '../feeds/reply.js';
import { recordJson, type RecordRow } from './repository.js';
import type { RecordsService } from './service.js';

/** Changes per page when the client names no limit, and at most. */
export const DEFAULT_CHANGES_PAGE = 10_000;
export const MAX_CHANGES_PAGE = 100_000;
/** Records read per statement while a page streams. */
const READ_BATCH = 500;
/** Bytes of JSON per streamed chunk. */
const CHUNK_BYTES = 256 * 1024;

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
    const supersededBy = await this.supersededBy(tenantId, revisionId);
    if (since === NOW) {
      // A client that reads the listing itself (GET /records/, after this): only where it stands.
      return {
        revisionId,
        supersededBy,
        cursor: encodeCursor(tenantId, revisionId, { seq: counter }),
        more: false,
        complete: false,
        records: (async function* () {})(),
        removed: [],
      };
    }
    if (since === undefined) {
      // From the beginning: the whole listing, and a cursor at the counter read before it.
      return {
        revisionId,
        supersededBy,
        cursor: encodeCursor(tenantId, revisionId, { seq: counter }),
        more: false,
        complete: true,
        records: this.records.streamJsonChunks(principal, { revisionIds: [revisionId] }),
        removed: [],
      };
    }
    const cursor = decodeCursor(since, tenantId, revisionId, counter);
    const changed = await changedSince(
      this.storage.db,
      {
        table: 'record_listing_changes',
        id: 'record_id',
        where: sql`tenant_id = ${tenantId} AND kt_revision_id = ${revisionId}`,
      },
      cursor,
      counter,
      limit + 1,
    );
    const page = changed.slice(0, limit);
    const more = changed.length > limit;
    const last = page[page.length - 1];
    const next: ChangesCursor = more && last ? { seq: last.seq, after: last.id } : { seq: counter };
    const removed: string[] = [];
    return {
      revisionId,
      supersededBy,
      cursor: encodeCursor(tenantId, revisionId, next),
      more,
      complete: false,
      records: this.currentLines(
        tenantId,
        revisionId,
        page.map((change) => change.id),
        removed,
      ),
      removed,
    };
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

  /** The revision the topic was re-approved as, when its records moved on from this one. */
  private async supersededBy(tenantId: string, revisionId: string): Promise<string | null> {
    const row = await this.storage.db
      .selectFrom('kt_revisions')
      .innerJoin('kt_histories', 'kt_histories.id', 'kt_revisions.history_id')
      .select(['kt_revisions.status as status', 'kt_histories.current_revision_id as current'])
      .where('kt_revisions.tenant_id', '=', tenantId)
      .where('kt_revisions.id', '=', revisionId)
      .executeTakeFirst();
    if (!row || row.status === 'draft' || !row.current || row.current === revisionId) return null;
    return row.current;
  }

  /** The records of `ids` that are in the listing now, as lines; the others go to `removed`. */
  private async *currentLines(
    tenantId: string,
    revisionId: string,
    ids: string[],
    removed: string[],
  ): AsyncGenerator<string> {
    let buffer = '';
    for (let start = 0; start < ids.length; start += READ_BATCH) {
      const batch = ids.slice(start, start + READ_BATCH);
      const rows = await this.storage.db
        .selectFrom('records')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('kt_revision_id', '=', revisionId)
        .where('id', 'in', batch)
        .execute();
      const byId = new Map<string, RecordRow>(rows.map((row) => [row.id, row]));
      for (const id of batch) {
        const row = byId.get(id);
        if (!row) {
          removed.push(id);
          continue;
        }
        buffer += `,\n${recordJson(row)}`;
        if (buffer.length >= CHUNK_BYTES) {
          yield buffer;
          buffer = '';
        }
      }
    }
    if (buffer) yield buffer;
  }
}
