import { Readable } from 'node:stream';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import { jsonArrayParts, jsonArrayStream, lineChunks } from '../../http/json-array-stream.js';
import type { Storage } from '../../storage/database.js';
import type { TechdocService } from '../techdoc/service.js';
import { wholeRevision, type RecordFilter } from './filter.js';
import type { ListingCache } from './listing-cache.js';
import { recordListingTag } from './listing-tag.js';
import type { RecordsService } from './service.js';

/** A listing's body: a JSON array, one record per line, and how to send it. */
export interface ListingBody {
  stream: Readable;
  /** Its bytes, when known before it is sent (a kept listing). */
  size?: number;
  /** The last id of a page when more records follow (`Link: rel="next"`). */
  next?: string;
  /** As costly as an export (a whole as-of listing rebuilds every record from its versions). */
  expensive: boolean;
}

/** Who reads a listing's body. */
export interface BodyReader {
  /** False when nobody will (HEAD): the body is then neither answered from the cache nor kept. */
  reads: boolean;
  /**
   * Bytes of the body the reader was given and still holds (for an HTTP response, until the kernel
   * took them): a kept file's buffers before them are read into again (kept-file-stream.ts).
   */
  held(): number;
}

/**
 * `GET /records/`: a listing's ETag, taken before anything is read, then its body. A page is read
 * by its sizes first (RecordsService.page); a revision's whole listing comes from the listing cache
 * when it was kept at that tag, else it is streamed and kept; any other listing is streamed.
 */
export class RecordListings {
  constructor(
    private readonly storage: Storage,
    private readonly records: RecordsService,
    private readonly techdoc: TechdocService,
    /** Finished listings kept on disk (listing-cache.ts); none: every listing is built. */
    private readonly cache?: ListingCache,
  ) {}

  /** The listing's ETag, or 409 for a listing whose paging cannot go on (assertPagingCurrent). */
  async tag(principal: Principal, filter: RecordFilter): Promise<string> {
    await this.records.assertPagingCurrent(principal, filter);
    return this.listingTag(principal, filter);
  }

  /** The body of the listing whose ETag is `tag` (from `tag`). */
  async body(
    principal: Principal,
    filter: RecordFilter,
    tag: string,
    reader: BodyReader,
  ): Promise<ListingBody> {
    if (filter.limit !== undefined) {
      const page = await this.records.page(principal, { ...filter, limit: filter.limit });
      // The records are already serialised, one per line.
      return { stream: jsonArrayStream(lineChunks(page.lines)), next: page.next, expensive: false };
    }
    const revisionId = reader.reads ? wholeRevision(filter) : undefined;
    if (this.cache && revisionId) return this.kept(this.cache, principal, filter, revisionId, tag, reader);
    return {
      stream: jsonArrayStream(this.records.streamJsonChunks(principal, filter)),
      expensive: filter.asOf !== undefined,
    };
  }

  /**
   * A revision's whole listing from the cache, or streamed while it is written there. The kept
   * bytes do not depend on `withRevision`: they are keyed by the plain listing's tag, and kept only
   * when that tag still holds once the listing was read.
   */
  private async kept(
    cache: ListingCache,
    principal: Principal,
    filter: RecordFilter,
    revisionId: string,
    tag: string,
    reader: BodyReader,
  ): Promise<ListingBody> {
    const plain = { ...filter, withRevision: false };
    const plainTag = filter.withRevision ? await this.listingTag(principal, plain) : tag;
    const found = await cache.find(principal.tenantId, revisionId, plainTag, reader.held);
    if (found) return { stream: found.stream, size: found.size, expensive: false };
    const parts = jsonArrayParts(this.records.streamJsonChunks(principal, filter));
    const unchanged = async () => (await this.listingTag(principal, plain)) === plainTag;
    const body = cache.record(principal.tenantId, revisionId, plainTag, parts, unchanged);
    return { stream: Readable.from(body, { objectMode: false }), expensive: false };
  }

  /**
   * The listing's ETag (listing-tag.ts). With `withRevision`, it also covers each listed revision
   * as `GET /kt/{id}` answers it (null for one the tenant has not).
   */
  private async listingTag(principal: Principal, filter: RecordFilter): Promise<string> {
    const revisions = filter.withRevision
      ? await Promise.all(
          [...new Set(filter.revisionIds ?? [])].sort().map((id) =>
            this.techdoc.getRevision(principal, id, { asOf: filter.asOf }).catch((error: unknown) => {
              // A revision the tenant has not (or not yet, as of then) is part of the tag as such.
              if (error instanceof HttpError && error.statusCode === 404) return null;
              throw error;
            }),
          ),
        )
      : undefined;
    return recordListingTag(this.storage, principal.tenantId, filter, revisions);
  }
}
