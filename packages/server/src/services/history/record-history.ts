import type { RecordVersion } from '@rxs/contract';
import { sql, type Selectable } from 'kysely';
import type { Principal } from '../../auth/principal.js';
import { notFound } from '../../http/errors.js';
import { eventLoopSlices } from '@rxs/exchange/export';
import { CHUNK_BYTES } from '../../http/json-array-stream.js';
import { ExpensiveReads } from '../../http/expensive-reads.js';
import { itemsWithin, pageBytes } from '../../http/page-bytes.js';
import type { Storage } from '../../storage/database.js';
import type { RecordVersionTable } from '../../storage/schema.js';
import { storedRecordBytes } from '../records/as-of-query.js';
import { recordJson } from '../records/repository.js';

type VersionRow = Selectable<RecordVersionTable> & { user_email: string | null };

/** One version as the API shows it: who, when, why, and the whole record as the change left it. */
function toRecordVersion(row: VersionRow): RecordVersion {
  return JSON.parse(versionJson(row)) as RecordVersion;
}

/**
 * A version as one line of JSON, in the contract's order, built from the stored JSON text without
 * parsing it (recordJson): a version of a 2 MB record costs a copy of its text, not a parse and a
 * serialisation. No raw newline, as in listings.
 */
function versionJson(row: VersionRow): string {
  const { record_id, n, action, at, actor_user_id, actor_key_id, via, reason, user_email, ...record } = row;
  const text = JSON.stringify;
  return (
    `{"record_id":${text(record_id)},"n":${Number(n)},"action":${text(action)},"at":${text(at)},` +
    `"user_id":${text(actor_user_id)},"user_email":${text(user_email)},"key_id":${text(actor_key_id)},` +
    `"via":${text(via)},"reason":${text(reason)},"record":${recordJson({ ...record, id: record_id })}}`
  );
}

/** A page of versions, planned from their sizes before any is read: their numbers, newest first. */
export interface VersionsPage {
  numbers: number[];
  /** About the bytes of each one's JSON (storedRecordBytes), in the same order. */
  sizes: number[];
  /** Their sum. */
  bytes: number;
  /** The `n` to pass as `before` for the next page, when older versions remain. */
  next?: number;
}

/**
 * The audit trail of records (`GET /records/{id}/versions`): read only, as history is. A deleted
 * record's versions stay readable; another tenant's record is a 404 like any unknown one.
 *
 * A record's versions can weigh megabytes each, so a page is bounded by bytes as well as by count
 * (pageBytes): it is planned from the stored sizes (read without the values), then its versions are
 * read a few at a time and streamed. Memory holds a chunk, never the page.
 */
export class RecordHistoryService {
  constructor(
    private readonly storage: Storage,
    /** Slots for reads as costly as an export (a page of large versions, a whole as-of listing). */
    readonly expensiveReads: ExpensiveReads,
  ) {}

  private versions(tenantId: string, recordId: string) {
    return this.storage.db
      .selectFrom('record_versions as v')
      .leftJoin('users as u', 'u.id', 'v.actor_user_id')
      .selectAll('v')
      .select('u.email as user_email')
      .where('v.tenant_id', '=', tenantId)
      .where('v.record_id', '=', recordId);
  }

  /**
   * The versions of a page, newest first: at most `limit`, and past the first no more than `budget`
   * bytes of JSON; `before` is the `n` of the last version of the previous page. 404 for a record
   * without versions.
   */
  async planVersions(
    principal: Principal,
    recordId: string,
    page: { limit: number; before?: number },
    budget = pageBytes(),
  ): Promise<VersionsPage> {
    let query = this.storage.db
      .selectFrom('record_versions as v')
      .select([
        'v.n',
        sql<number>`${storedRecordBytes(this.storage.syntax, 'v')} + coalesce(octet_length(${sql.ref('v.reason')}), 0)`.as(
          'bytes',
        ),
      ])
      .where('v.tenant_id', '=', principal.tenantId)
      .where('v.record_id', '=', recordId)
      .orderBy('v.n', 'desc')
      .limit(page.limit + 1);
    if (page.before !== undefined) query = query.where('v.n', '<', page.before);
    const rows = await query.execute();
    if (rows.length === 0 && page.before === undefined) throw this.unknown(recordId);
    const sizes = rows.map((row) => Number(row.bytes));
    const count = itemsWithin(sizes, page.limit, budget);
    const numbers = rows.slice(0, count).map((row) => Number(row.n));
    return {
      numbers,
      sizes: sizes.slice(0, count),
      bytes: sizes.slice(0, count).reduce((sum, size) => sum + size, 0),
      next: rows.length > count ? numbers[numbers.length - 1] : undefined,
    };
  }

  /**
   * The rows of a planned page, newest first, a few at a time (about a chunk's bytes, or one
   * version), giving the event loop a turn between reads.
   */
  private async *versionRows(
    tenantId: string,
    recordId: string,
    page: VersionsPage,
  ): AsyncGenerator<VersionRow[]> {
    const turn = eventLoopSlices();
    for (let start = 0; start < page.numbers.length;) {
      const take = itemsWithin(page.sizes.slice(start), page.numbers.length - start, CHUNK_BYTES);
      const group = page.numbers.slice(start, start + take);
      start += take;
      const rows = (await this.versions(tenantId, recordId)
        .where('v.n', 'in', group)
        .orderBy('v.n', 'desc')
        .execute()) as VersionRow[];
      yield rows;
      const pause = turn();
      if (pause) await pause;
    }
  }

  /** The versions of a planned page as JSON lines, newest first, a few at a time. */
  async *versionLines(principal: Principal, recordId: string, page: VersionsPage): AsyncGenerator<string[]> {
    for await (const rows of this.versionRows(principal.tenantId, recordId, page))
      yield rows.map(versionJson);
  }

  /** The versions of a planned page, newest first, one at a time (for in-process readers). */
  async *readVersions(
    principal: Principal,
    recordId: string,
    page: VersionsPage,
  ): AsyncGenerator<RecordVersion> {
    for await (const rows of this.versionRows(principal.tenantId, recordId, page))
      for (const row of rows) yield toRecordVersion(row);
  }

  /** Newest first; `before` is the `n` of the last version of the previous page. */
  async listVersions(
    principal: Principal,
    recordId: string,
    page: { limit: number; before?: number },
  ): Promise<{ items: RecordVersion[]; next?: number }> {
    const planned = await this.planVersions(principal, recordId, page);
    const items: RecordVersion[] = [];
    for await (const version of this.readVersions(principal, recordId, planned)) items.push(version);
    return { items, next: planned.next };
  }

  /** The newest version's number, action, name and revision, without the record's values. */
  async newest(
    principal: Principal,
    recordId: string,
  ): Promise<
    { n: number; action: RecordVersion['action']; name: string; revisionId: string | null } | undefined
  > {
    const row = await this.storage.db
      .selectFrom('record_versions')
      .select(['n', 'action', 'name', 'kt_revision_id'])
      .where('tenant_id', '=', principal.tenantId)
      .where('record_id', '=', recordId)
      .orderBy('n', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row
      ? {
          n: Number(row.n),
          action: row.action as RecordVersion['action'],
          name: row.name,
          revisionId: row.kt_revision_id,
        }
      : undefined;
  }

  async getVersion(principal: Principal, recordId: string, n: number): Promise<RecordVersion> {
    const row = (await this.versions(principal.tenantId, recordId)
      .where('v.n', '=', n)
      .executeTakeFirst()) as VersionRow | undefined;
    if (row) return toRecordVersion(row);
    const any = await this.versions(principal.tenantId, recordId).select('v.n').limit(1).executeTakeFirst();
    if (!any) throw this.unknown(recordId);
    throw notFound(
      `Record ${recordId} has no version ${n}. List its versions with GET /records/${recordId}/versions.`,
    );
  }

  private unknown(recordId: string) {
    return notFound(`Record ${recordId} was not found: it never existed in your tenant.`);
  }
}
