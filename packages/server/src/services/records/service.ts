import { sql } from 'kysely';
import type {
  RecordCreate,
  RecordUpdate,
  ServiceRecord,
  FormSchema,
  ValidationErrorItem,
} from '@rxs/contract';
import { isObjectId, nextRecordVersion } from '@rxs/contract';
import type { Principal } from '../../auth/principal.js';
import { conflict, HttpError, notFound, unprocessable, validationItem } from '../../http/errors.js';
import type { LineListing, Storage } from '../../storage/database.js';
import type { RecordRow } from '../../storage/schema.js';
import { newObjectId, nowIso } from '../../storage/ids.js';
import { inTransaction } from '../../storage/transactions.js';
import { jsonText, jsonValue } from '../../storage/json.js';
import { CHUNK_BYTES, lineChunks } from '../../http/json-array-stream.js';
import { changeActor } from '../../storage/change-actor.js';
import { deleteRecord, insertRecords, restoreRecord, updateRecord } from '../../storage/records-write.js';
import { nextRecordNumber } from '../../storage/record-numbers.js';
import {
  findAnswer,
  keepAnswer,
  type IdempotentRequest,
  type KeptAnswer,
} from '../../storage/idempotency-keys.js';
import type { TechdocService } from '../techdoc/service.js';
export type { RecordFilter } from './filter.js';
import { recordJson, recordJsonSql, storedContext, toServiceRecord } from './repository.js';
import { recordsAsOfLines, recordsAsOfQuery, recordsAsOfSizes, storedRecordBytes } from './as-of-query.js';
import { itemsWithin, pageBytes } from '../../http/page-bytes.js';
import { auditDateCondition, type RecordFilter } from './filter.js';
import { countKeys, DEFAULT_MAX_RECORD_KEYS, validateRecordData } from '@rxs/contract/validation';
import { eventLoopSlices } from '@rxs/exchange/export';

export interface RecordLimits {
  /** Keys one record's data may have, nested ones included (default DEFAULT_MAX_RECORD_KEYS). */
  maxRecordKeys?: number;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** What every line of a listing shares, written into its SQL: the tenant, and a single revision. */
function sameOnEveryLine(tenantId: string, filter: RecordFilter): { tenantId: string; revisionId?: string } {
  return { tenantId, revisionId: filter.revisionIds?.length === 1 ? filter.revisionIds[0] : undefined };
}

/** An empty list of revision ids or record ids matches nothing (and SQL has no empty `in ()`). */
function noneCanMatch(filter: RecordFilter): boolean {
  return filter.revisionIds?.length === 0 || filter.ids?.length === 0;
}

/** `recordJson` of each row, a batch at a time. */
async function* jsonLines(batches: AsyncIterable<RecordRow[]>): AsyncGenerator<string[]> {
  for await (const rows of batches) yield rows.map(recordJson);
}

/** 409 for a revision whose topic was re-approved since: records belong under the current one. */
function assertNotSuperseded(revision: { id: string; status: string }, currentId: string | null): void {
  if (revision.status === 'draft' || !currentId || currentId === revision.id) return;
  throw conflict(
    `Revision ${revision.id} was superseded: its topic was re-approved as revision ${currentId}, and its records moved there. Create the record under ${currentId} (context.knowledge_unit_topic_id).`,
  );
}

/** Records: listing (streamed), single-record CRUD with validation against the topic's form schema. */
export class RecordsService {
  private readonly maxRecordKeys: number;

  constructor(
    private readonly storage: Storage,
    private readonly techdoc: TechdocService,
    limits: RecordLimits = {},
  ) {
    const max = limits.maxRecordKeys ?? DEFAULT_MAX_RECORD_KEYS;
    if (!Number.isInteger(max) || max < 1) {
      throw new Error(
        `The keys allowed per record (RXS_MAX_RECORD_KEYS) must be a whole number of at least 1, got ${max}.`,
      );
    }
    this.maxRecordKeys = max;
  }

  /** 422 for data with more keys than a record may have: exports would grow a column for each. */
  private checkKeyCount(data: unknown): void {
    const max = this.maxRecordKeys;
    if (countKeys(data, max) <= max) return;
    throw unprocessable([
      validationItem(
        ['body', 'data'],
        `The record data has more than ${max} keys (counted over nested objects and list entries); a record may have at most ${max}. Split the data into several records, or raise the limit with RXS_MAX_RECORD_KEYS.`,
        'too_many_keys',
      ),
    ]);
  }

  private get db() {
    return this.storage.db;
  }

  /** The matching records, ordered by id, without a selection yet. */
  private listQuery(tenantId: string, filter: RecordFilter) {
    let query = this.db.selectFrom('records').where('tenant_id', '=', tenantId).orderBy('id');
    if (filter.revisionIds) query = query.where('kt_revision_id', 'in', filter.revisionIds);
    if (filter.ids) query = query.where('id', 'in', filter.ids);
    if (filter.after) query = query.where('id', '>', filter.after);
    if (filter.startDate || filter.endDate)
      query = query.where((eb) => auditDateCondition(eb, filter, 'created_at', 'updated_at'));
    if (filter.limit !== undefined) query = query.limit(filter.limit);
    return query;
  }

  /** The matching rows: the present records, or with `asOf` the records as they were then. */
  private selectRows(tenantId: string, filter: RecordFilter) {
    return filter.asOf === undefined
      ? this.listQuery(tenantId, filter).selectAll()
      : recordsAsOfQuery(this.storage, tenantId, filter, filter.asOf);
  }

  /** How many records a listing with this filter (without `limit` and `after`) holds. */
  async count(principal: Principal, filter: RecordFilter): Promise<number> {
    if (noneCanMatch(filter)) return 0;
    const whole = { ...filter, limit: undefined, after: undefined };
    const row = await this.db
      .selectFrom(this.selectRows(principal.tenantId, whole).as('matching'))
      .select(sql<number | string | bigint>`count(*)`.as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /**
   * Every matching record as a JSON line, read from a database cursor in batches, for in-process
   * readers (the web app's exports, reports and imports). It gives the event loop a turn every few
   * milliseconds: SQLite answers synchronously, so a long read would hold every other request.
   */
  async *streamJsonLines(principal: Principal, filter: RecordFilter): AsyncGenerator<string> {
    const turn = eventLoopSlices();
    for await (const lines of this.lineBatches(principal.tenantId, filter))
      for (const line of lines) {
        yield line;
        const pause = turn();
        if (pause) await pause;
      }
  }

  /**
   * The listing's lines a batch at a time. As-of rows come from history, where a record may weigh
   * megabytes: their batches are bounded by bytes (recordsAsOfLines), not by a number of rows.
   */
  private lineBatches(tenantId: string, filter: RecordFilter): AsyncIterable<string[]> {
    if (noneCanMatch(filter)) return (async function* () {})();
    if (filter.asOf !== undefined)
      return recordsAsOfLines(this.storage, tenantId, filter, filter.asOf, filter.limit);
    return jsonLines(this.rowBatches(tenantId, filter));
  }

  /**
   * The same lines in chunks of about CHUNK_BYTES, each line preceded by `,\n`: how `GET /records/`
   * streams a whole listing (`jsonArrayStream`). The database builds the lines itself from the
   * stored JSON text, so a record costs no JavaScript (Storage.streamLines); as-of listings (from
   * history) come in batches of about a chunk. Memory holds a page, a batch or a chunk, never the
   * listing.
    if (filter.globalElementId !== undefined)
      query = query.where(
        this.storage.syntax.jsonTextOf('context', 'global_element_id'),
        '=',
        filter.globalElementId,
      );
   */
  streamJsonChunks(principal: Principal, filter: RecordFilter): AsyncIterable<Buffer | string> {
    if (noneCanMatch(filter)) return (async function* () {})();
    if (filter.asOf === undefined && filter.limit === undefined)
      return this.storage.streamLines(this.lineListing(principal.tenantId, filter), CHUNK_BYTES);
    return lineChunks(this.lineBatches(principal.tenantId, filter));
  }

  /** The listing's lines as the database builds them, in id order, for Storage.streamLines. */
  private lineListing(tenantId: string, filter: RecordFilter): LineListing {
    const known = sameOnEveryLine(tenantId, filter);
    const rows = this.listQuery(tenantId, { ...filter, after: undefined, limit: undefined });
    return {
      key: 'id',
      after: filter.after,
      rows: (page) => {
        let query = rows;
        if (page.after !== undefined) query = query.where('id', '>', page.after);
        if (page.limit !== undefined) query = query.limit(page.limit);
        return query;
      },
      line: (prefix) => recordJsonSql(this.storage.syntax, prefix, known),
    };
  }

  private async *rowBatches(tenantId: string, filter: RecordFilter): AsyncGenerator<RecordRow[]> {
    if (noneCanMatch(filter)) return;
    yield* this.storage.streamBatches<RecordRow>(this.selectRows(tenantId, filter).compile());
  }

  /**
   * A listing that goes on from `after` by revision id must not read as finished when a listed
   * revision was re-approved between pages (its records moved on): 409 naming the new revision.
   */
  async assertPagingCurrent(principal: Principal, filter: RecordFilter): Promise<void> {
    if (filter.after === undefined || !filter.revisionIds?.length || filter.asOf !== undefined) return;
    const superseded = await this.supersededRevision(principal.tenantId, filter.revisionIds);
    if (superseded) {
      throw conflict(
        `Revision ${superseded.id} was re-approved as revision ${superseded.current} while you were paging, and its records moved there: this listing cannot go on. Start again without "after" using context__knowledge_unit_topic_id=${superseded.current}.`,
      );
    }
  }

  /**
   * One of these revisions whose topic was re-approved since (its records moved on to `current`),
   * or undefined when none was (a draft never is).
   */
  async supersededRevision(
    tenantId: string,
    revisionIds: readonly string[],
  ): Promise<{ id: string; current: string } | undefined> {
    const row = await this.db
      .selectFrom('kt_revisions')
      .innerJoin('kt_histories', 'kt_histories.id', 'kt_revisions.history_id')
      .select(['kt_revisions.id as id', 'kt_histories.current_revision_id as current'])
      .where('kt_revisions.tenant_id', '=', tenantId)
      .where('kt_revisions.id', 'in', revisionIds)
      .where('kt_revisions.status', '!=', 'draft')
      .where('kt_histories.current_revision_id', 'is not', null)
      .whereRef('kt_histories.current_revision_id', '!=', 'kt_revisions.id')
      .executeTakeFirst();
    return row?.current ? { id: row.id, current: row.current } : undefined;
  }

  /** The answer kept for an Idempotency-Key of the tenant within its 24 hours, if any. */
  keptAnswer(principal: Principal, key: string): Promise<KeptAnswer | undefined> {
    return findAnswer(this.db, principal.tenantId, key);
  }

  /**
   * One page of records (`limit` set): its JSON lines, a batch at a time, and the last id when more
   * remain. A page holds at most `limit` records and, past the first, no more than a page's bytes
   * (pageBytes): the sizes are read first, without the records, and only the records that fit are
   * read (as-of ones as they stream out).
   */
  async page(
    principal: Principal,
    filter: RecordFilter & { limit: number },
  ): Promise<{ lines: AsyncIterable<string[]>; next?: string }> {
    const none = (async function* () {})();
    if (noneCanMatch(filter)) return { lines: none };
    const tenantId = principal.tenantId;
    const ahead = { ...filter, limit: filter.limit + 1 };
    const sizes =
      filter.asOf === undefined
        ? await this.listQuery(tenantId, ahead)
            .select(['id', storedRecordBytes(this.storage.syntax, 'records').as('bytes')])
            .execute()
        : await recordsAsOfSizes(this.storage, tenantId, ahead, filter.asOf).execute();
    const count = itemsWithin(
      sizes.map((row) => Number(row.bytes)),
      filter.limit,
      pageBytes(),
    );
    if (count === 0) return { lines: none };
    const last = sizes[count - 1]!.id;
    const next = sizes.length > count ? last : undefined;
    // History does not change: the same `count` rows as sized.
    if (filter.asOf !== undefined)
      return { lines: this.lineBatches(tenantId, { ...filter, limit: count }), next };
    // Up to the last id sized, not `count` rows: a record created meanwhile before it is then in
    // this page, not skipped by the next one.
    const rows = await this.listQuery(tenantId, { ...filter, limit: undefined })
      .where('id', '<=', last)
      .selectAll()
      .execute();
    return {
      lines: (async function* () {
        yield rows.map(recordJson);
      })(),
      next,
    };
  }

  /** A record now, or with `asOf` as it was then (404 when it did not exist at that moment). */
  async get(principal: Principal, id: string, options: { asOf?: string } = {}): Promise<ServiceRecord> {
    if (options.asOf === undefined) return toServiceRecord(await this.load(principal.tenantId, id));
    const row = await recordsAsOfQuery(
      this.storage,
      principal.tenantId,
      { ids: [id] },
      options.asOf,
    ).executeTakeFirst();
    if (!row)
      throw notFound(`Record ${id} did not exist at ${options.asOf} (or is not a record of your tenant).`);
    return toServiceRecord(row);
  }

  private async load(tenantId: string, id: string): Promise<RecordRow> {
    const row = await this.db
      .selectFrom('records')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(`Record ${id} was not found.`);
    return row;
  }

  /**
   * The form's problems with a body whose shape was refused (an empty name, say), so that one 422
   * names every problem: the data checked against the form of the revision it names (a create) or
   * of the record's revision (a change, `recordId`). None when the data or the revision cannot be
   * read from the body; the shape's own problems say why.
   */
  async formProblems(principal: Principal, body: unknown, recordId?: string): Promise<ValidationErrorItem[]> {
    if (!isPlainObject(body) || !isPlainObject(body.data)) return [];
    let revisionId: unknown;
    if (recordId === undefined) {
      revisionId = isPlainObject(body.context) ? body.context.knowledge_unit_topic_id : undefined;
    } else {
      const row = await this.db
        .selectFrom('records')
        .select('kt_revision_id')
        .where('tenant_id', '=', principal.tenantId)
        .where('id', '=', recordId)
        .executeTakeFirst();
      revisionId = row?.kt_revision_id;
    }
    if (typeof revisionId !== 'string' || !isObjectId(revisionId)) return [];
    try {
      const { revision } = await this.techdoc.loadRevision(principal.tenantId, revisionId);
      return validateRecordData(jsonValue<FormSchema>(revision.schema), body.data);
    } catch (error) {
      if (error instanceof HttpError) return [];
      throw error;
    }
  }

  /**
   * Creates a record. With `idempotency`, the answer is kept under its key in the same transaction
   * (storage/idempotency-keys.ts) as `JSON.stringify` of the record returned.
   */
  async create(
    principal: Principal,
    input: RecordCreate,
    idempotency?: IdempotentRequest,
  ): Promise<ServiceRecord> {
    const revisionId = input.context.knowledge_unit_topic_id;
    if (!revisionId) {
      throw unprocessable([
        validationItem(
          ['body', 'context', 'knowledge_unit_topic_id'],
          'Field required: the KT revision id the record belongs to',
          'missing',
        ),
      ]);
    }
    const { revision, history } = await this.techdoc.loadRevision(principal.tenantId, revisionId);
    assertNotSuperseded(revision, history.current_revision_id);
    const data = input.data ?? {};
    this.checkKeyCount(data);
    const problems = validateRecordData(jsonValue<FormSchema>(revision.schema), data);
    if (problems.length > 0) throw unprocessable(problems);

    const name = input.name.trim();
    const row: RecordRow = {
      id: newObjectId(),
      tenant_id: principal.tenantId,
      kt_revision_id: revisionId,
      name,
      form: JSON.stringify(input.form),
      version: '1.0',
      data: JSON.stringify(data),
      read_only: input.read_only ? 1 : 0,
      context: storedContext(input.context),
      created_by: principal.userId,
      created_at: nowIso(),
      updated_by: null,
      updated_at: null,
      last_action: 'created',
    };
    let record: ServiceRecord | undefined;
    await inTransaction(this.db, async (trx) => {
      // A re-approval moves the topic's records in the transaction that updates its history row:
      // reading that row again here, share-locked (SqlSyntax.forShare), orders the two, so no
      // record is left behind under the old revision.
      const now = await this.storage.syntax
        .forShare(trx.selectFrom('kt_histories').select('current_revision_id').where('id', '=', history.id))
        .executeTakeFirstOrThrow();
      assertNotSuperseded(revision, now.current_revision_id);
      // The number is taken in this transaction: concurrent creates get distinct ones.
      if (input.auto_number)
        row.name = `${name}-${await nextRecordNumber(trx, principal.tenantId, history.id, name)}`;
      await insertRecords(trx, [row], changeActor(principal, input.change_reason, row.created_at));
      record = toServiceRecord(row);
      if (idempotency)
        await keepAnswer(trx, principal.tenantId, idempotency, 201, JSON.stringify(record), row.created_at);
    });
    return record!;
  }

  /** Changes a record; `idempotency` as for `create`. */
  async update(
    principal: Principal,
    id: string,
    input: RecordUpdate,
    idempotency?: IdempotentRequest,
  ): Promise<ServiceRecord> {
    const row = await this.load(principal.tenantId, id);
    if (row.read_only) throw conflict(`Record ${id} is read-only and refuses changes.`);
    if (input.version !== undefined && input.version !== row.version) {
      throw conflict(
        `Record ${id} is at version ${row.version}, not ${input.version}: someone changed it meanwhile. Reload it and apply your change again.`,
      );
    }
    if (input.data !== undefined) this.checkKeyCount(input.data);
    if (input.data !== undefined && row.kt_revision_id) {
      const { revision } = await this.techdoc.loadRevision(principal.tenantId, row.kt_revision_id);
      const problems = validateRecordData(jsonValue<FormSchema>(revision.schema), input.data);
      if (problems.length > 0) throw unprocessable(problems);
    }
    const changes = {
      name: input.name?.trim() ?? row.name,
      data: input.data !== undefined ? JSON.stringify(input.data) : row.data,
      version: nextRecordVersion(row.version),
      updated_by: principal.userId,
      updated_at: nowIso(),
      last_action: 'updated',
    };
    // The version guard makes concurrent updates fail loudly instead of overwriting.
    const actor = changeActor(principal, input.change_reason, changes.updated_at);
    const record = toServiceRecord({ ...row, ...changes });
    const text = idempotency ? JSON.stringify(record) : '';
    const updated = await inTransaction(this.db, async (trx) => {
      if (!(await updateRecord(trx, principal.tenantId, id, row.version, changes, actor))) return false;
      if (idempotency) await keepAnswer(trx, principal.tenantId, idempotency, 200, text, changes.updated_at);
      return true;
    });
    if (!updated) throw conflict(`Record ${id} changed meanwhile. Reload it and apply your change again.`);
    return record;
  }

  /**
   * Deletes a record and the traces that touch it, so no export links to a record that is gone. Its
   * history stays: the last version is the record as it was, marked deleted.
   */
  async delete(principal: Principal, id: string, options: { reason?: string | null } = {}): Promise<void> {
    const row = await this.load(principal.tenantId, id);
    if (row.read_only) throw conflict(`Record ${id} is read-only and cannot be deleted.`);
    const actor = changeActor(principal, options.reason);
    const deleted = await inTransaction(this.db, (trx) => deleteRecord(trx, principal.tenantId, id, actor));
    if (!deleted) throw notFound(`Record ${id} was not found.`);
  }

  /**
   * Brings a deleted record back as its last version was (same id, same data), under its revision
   * if that is still current, else under the topic's current revision. Its traces stay deleted.
   */
  async restore(
    principal: Principal,
    id: string,
    options: { reason?: string | null } = {},
  ): Promise<ServiceRecord> {
    const last = await this.db
      .selectFrom('record_versions')
      .selectAll()
      .where('tenant_id', '=', principal.tenantId)
      .where('record_id', '=', id)
      .orderBy('n', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!last) throw notFound(`Record ${id} was not found.`);
    if (last.action !== 'deleted')
      throw conflict(`Record ${id} is not deleted: only a deleted record can be restored.`);
    let revisionId = last.kt_revision_id;
    if (revisionId) {
      const { history } = await this.techdoc.loadRevision(principal.tenantId, revisionId);
      revisionId = history.current_revision_id ?? revisionId;
    }
    const actor = changeActor(principal, options.reason);
    const row: RecordRow = {
      id,
      tenant_id: principal.tenantId,
      kt_revision_id: revisionId,
      name: last.name,
      form: jsonText(last.form),
      version: nextRecordVersion(last.version),
      data: jsonText(last.data),
      read_only: last.read_only,
      context: jsonText(last.context),
      created_by: last.created_by,
      created_at: last.created_at,
      updated_by: principal.userId,
      updated_at: actor.at,
      // The contract knows only created and updated; the version says `restored`.
      last_action: 'updated',
    };
    await inTransaction(this.db, async (trx) => {
      const present = await trx.selectFrom('records').select('id').where('id', '=', id).executeTakeFirst();
      if (present) throw conflict(`Record ${id} was restored meanwhile.`);
      await restoreRecord(trx, principal.tenantId, id, row, actor);
    });
    return toServiceRecord(row);
  }
}
