import { sql, type Transaction } from 'kysely';
import type {
  BulkWriteResult,
  RecordCreate,
  RecordUpdate,
  ServiceRecord,
  FormSchema,
  ValidationErrorItem,
} from '@rxs/contract';
import { isBulkUpdate, isObjectId, nextRecordVersion } from '@rxs/contract';
import type { Principal } from '../../auth/principal.js';
import { conflict, HttpError, notFound, unprocessable, validationItem } from '../../http/errors.js';
import type { LineListing, Storage } from '../../storage/database.js';
import type { Database, HistoryRow, RecordRow, RevisionRow } from '../../storage/schema.js';
import { newObjectId, nowIso } from '../../storage/ids.js';
import { inTransaction } from '../../storage/transactions.js';
import { jsonText, jsonValue } from '../../storage/json.js';
import { CHUNK_BYTES, lineChunks } from '../../http/json-array-stream.js';
import { changeActor, type ChangeActor } from '../../storage/change-actor.js';
import { deleteRecord, insertRecords, restoreRecord, updateRecord } from '../../storage/records-write.js';
import { nextRecordNumber } from '../../storage/record-numbers.js';
import {
  findAnswer,
  keepAnswers,
  type AnswerToKeep,
  type IdempotentRequest,
  type KeptAnswer,
  type RecordDeletion,
} from '../../storage/idempotency-keys.js';
import { deletionsOf, findAnswers } from '../../storage/idempotency-batches.js';
import { keptFor } from '../../http/idempotency.js';
import {
  duplicateProblems,
  itemError,
  itemFingerprint,
  itemProblems,
  listedProblems,
  type BulkItemShape,
} from './bulk-items.js';
import type { TechdocService } from '../techdoc/service.js';
export type { RecordFilter } from './filter.js';
import { recordJson, recordJsonSql, storedContext, toServiceRecord } from './repository.js';
import { recordsAsOfLines, recordsAsOfQuery, recordsAsOfSizes, storedRecordBytes } from './as-of-query.js';
import { itemsWithin, pageBytes } from '../../http/page-bytes.js';
import { auditDateCondition, type RecordFilter } from './filter.js';
import {
  countKeys,
  DEFAULT_MAX_RECORD_KEYS,
  recordDataValidator,
  validateRecordData,
} from '@rxs/contract/validation';
import { eventLoopSlices } from '@rxs/exchange/export';

/** A loop's `eventLoopSlices`: a promise to await when the event loop's turn is due. */
type EventLoopTurn = ReturnType<typeof eventLoopSlices>;

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

type Trx = Transaction<Database>;

/** A revision as the writes of one request need it. */
interface WriteRevision {
  revision: RevisionRow;
  history: HistoryRow;
  /** Checks record data against its form, compiled once for every record checked against it. */
  validate: (data: unknown) => ValidationErrorItem[];
}
type RevisionLoader = (revisionId: string) => Promise<WriteRevision>;

/** A create that passed every check but those its transaction makes. */
interface PreparedCreate {
  row: RecordRow;
  revision: RevisionRow;
  history: HistoryRow;
  /** With `auto_number`, the name given: the record's name is it and a number taken in the transaction. */
  numbered?: string;
  reason: string | null | undefined;
  /** Its place in a bulk request: a refusal names it. */
  index?: number;
}

/** A change that passed every check but the version guard of its transaction. */
interface PreparedUpdate {
  id: string;
  expectedVersion: string;
  changes: Parameters<typeof updateRecord>[4];
  reason: string | null | undefined;
  at: string;
  /** The record as the change leaves it. */
  record: ServiceRecord;
  index?: number;
}

/** Records read at once by id. */
const LOAD_BATCH = 500;

const recordNotFound = (id: string) => notFound(`Record ${id} was not found.`);

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
    if (filter.globalElementId !== undefined)
      query = query.where(
        this.storage.syntax.jsonTextOf('context', 'global_element_id'),
        '=',
        filter.globalElementId,
      );
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
    if (!row) throw recordNotFound(id);
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
    const create = await this.prepareCreate(principal, input, this.revisionsOf(principal.tenantId), nowIso());
    return inTransaction(this.db, async (trx) => {
      await this.writeCreates(trx, principal, [create]);
      const record = toServiceRecord(create.row);
      if (idempotency)
        await keepAnswers(
          trx,
          principal.tenantId,
          [{ request: idempotency, status: 201, body: JSON.stringify(record) }],
          create.row.created_at,
        );
      return record;
    });
  }

  /** Changes a record; `idempotency` as for `create`. */
  async update(
    principal: Principal,
    id: string,
    input: RecordUpdate,
    idempotency?: IdempotentRequest,
  ): Promise<ServiceRecord> {
    const row = await this.load(principal.tenantId, id);
    const update = await this.prepareUpdate(
      principal,
      row,
      input,
      this.revisionsOf(principal.tenantId),
      nowIso(),
    );
    const text = idempotency ? JSON.stringify(update.record) : '';
    await inTransaction(this.db, async (trx) => {
      await this.writeUpdate(trx, principal, update);
      if (idempotency)
        await keepAnswers(
          trx,
          principal.tenantId,
          [{ request: idempotency, status: 200, body: text }],
          update.at,
        );
    });
    return update.record;
  }

  /**
   * Creates and changes records in one transaction (`POST /records/bulk`): every item checked first,
   * as `create` and `update` check one (with `checkShape`, also as their routes check a body's
   * shape), and written only when none is refused; else a 422 names each refused item by its index
   * (`["body", "records", i, ...]`), refusals of another status as items of their kind (conflict,
   * not_found, deleted_since). An item with its own `idempotency_key` is the single write it stands
   * for under that key: answered from it when the key was used, kept under it when written. With
   * `idempotency`, the whole answer is kept under the request's key too. Returns the answer's JSON.
   */
  async bulkWrite(
    principal: Principal,
    items: readonly unknown[],
    options: {
      idempotency?: IdempotentRequest;
      checkShape?: (item: unknown, index: number) => ValidationErrorItem[];
      /** Each item's `itemFingerprint`, when the caller has them already. */
      fingerprints?: readonly string[];
      /** The caller's `eventLoopSlices`, when its work goes on into this. */
      turn?: EventLoopTurn;
    } = {},
  ): Promise<string> {
    const tenantId = principal.tenantId;
    const at = nowIso();
    // Each item's checks, and inside the transaction each statement, give the event loop its turn
    // when one is due: no stretch of a large request keeps other requests waiting for long.
    const turn = options.turn ?? eventLoopSlices();
    const problems: ValidationErrorItem[] = [];
    const results: (BulkWriteResult | undefined)[] = items.map(() => undefined);
    const pending: { index: number; item: BulkItemShape }[] = [];
    for (const [index, item] of items.entries()) {
      await turn();
      const shape = options.checkShape?.(item, index) ?? [];
      if (shape.length === 0) {
        pending.push({ index, item: item as BulkItemShape });
        continue;
      }
      // As a single write refused for its shape: the form's problems join the shape's.
      const seen = new Set(shape.map((problem) => JSON.stringify(problem.loc)));
      const recordId = isPlainObject(item) && typeof item._id === 'string' ? item._id : undefined;
      const form = itemProblems(index, unprocessable(await this.formProblems(principal, item, recordId)));
      problems.push(...shape, ...form.filter((problem) => !seen.has(JSON.stringify(problem.loc))));
    }
    problems.push(...duplicateProblems(pending));

    // Items under a key of their own that was used: answered from it, as the single write would be.
    const requests = new Map<number, IdempotentRequest>();
    for (const { index, item } of pending) {
      await turn();
      const key = item.idempotency_key;
      if (key !== undefined)
        requests.set(index, { key, fingerprint: options.fingerprints?.[index] ?? itemFingerprint(item) });
    }
    const kept = await findAnswers(
      this.db,
      tenantId,
      [...requests.values()].map((request) => request.key),
    );
    const toWrite: typeof pending = [];
    for (const entry of pending) {
      const request = requests.get(entry.index);
      const answer = request && kept.get(request.key);
      if (!request || !answer) {
        toWrite.push(entry);
        continue;
      }
      try {
        const record = JSON.parse(keptFor(request, answer).body) as ServiceRecord;
        results[entry.index] = {
          _id: record._id,
          version: record.version,
          created: !isBulkUpdate(entry.item),
          replayed: true,
        };
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        problems.push(...itemProblems(entry.index, error));
      }
      await turn();
    }

    // Every other item checked as `create` or `update` checks it, the records changed read at once.
    const revisions = this.revisionsOf(tenantId);
    const rows = await this.loadMany(
      tenantId,
      toWrite.flatMap(({ item }) => (isBulkUpdate(item) ? [item._id] : [])),
    );
    const creates: PreparedCreate[] = [];
    const updates: PreparedUpdate[] = [];
    for (const { index, item } of toWrite) {
      try {
        if (isBulkUpdate(item)) {
          const row = rows.get(item._id);
          if (!row) throw recordNotFound(item._id);
          const { _id, idempotency_key: _key, ...input } = item;
          updates.push({ ...(await this.prepareUpdate(principal, row, input, revisions, at)), index });
        } else {
          const { idempotency_key: _key, ...input } = item;
          creates.push({ ...(await this.prepareCreate(principal, input, revisions, at)), index });
        }
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        problems.push(...itemProblems(index, error));
      }
      await turn();
    }
    if (problems.length > 0) throw unprocessable(listedProblems(problems));

    // One transaction, all or nothing. Its turns of the event loop let other requests be answered;
    // other writes wait for its end (on SQLite for the one write connection, storage/sqlite/driver.ts).
    return inTransaction(this.db, async (trx) => {
      const firstVersions = await this.writeCreates(trx, principal, creates, turn);
      for (const update of updates) {
        await this.writeUpdate(trx, principal, update);
        await turn();
      }
      const answers: AnswerToKeep[] = [];
      for (const create of creates) {
        results[create.index!] = {
          _id: create.row.id,
          version: create.row.version,
          created: true,
          replayed: false,
        };
        const request = requests.get(create.index!);
        // The answer is `recordJson` of the row, which its first version holds as written.
        if (request)
          answers.push({
            request,
            status: 201,
            recordVersion: { recordId: create.row.id, n: firstVersions.get(create.row.id)! },
          });
        await turn();
      }
      for (const update of updates) {
        results[update.index!] = {
          _id: update.id,
          version: update.record.version,
          created: false,
          replayed: false,
        };
        const request = requests.get(update.index!);
        if (request) answers.push({ request, status: 200, body: JSON.stringify(update.record) });
        await turn();
      }
      const answer = JSON.stringify({ records: results });
      if (options.idempotency) answers.push({ request: options.idempotency, status: 200, body: answer });
      await keepAnswers(trx, tenantId, answers, at, turn);
      return answer;
    });
  }

  /** Which of these records of the tenant are deleted (not there now), with who deleted them and when. */
  deletedRecords(principal: Principal, recordIds: readonly string[]): Promise<Map<string, RecordDeletion>> {
    return deletionsOf(this.db, principal.tenantId, recordIds);
  }

  /** The revisions writes of one request name, each read once, its form parsed once. */
  private revisionsOf(tenantId: string): RevisionLoader {
    const loaded = new Map<string, Promise<WriteRevision>>();
    return (revisionId) => {
      let revision = loaded.get(revisionId);
      if (!revision) {
        revision = this.techdoc.loadRevision(tenantId, revisionId).then(({ revision, history }) => ({
          revision,
          history,
          validate: recordDataValidator(jsonValue<FormSchema>(revision.schema)),
        }));
        loaded.set(revisionId, revision);
      }
      return revision;
    };
  }

  /** The tenant's records with these ids, by id (those not found are left out). */
  private async loadMany(tenantId: string, ids: readonly string[]): Promise<Map<string, RecordRow>> {
    const rows = new Map<string, RecordRow>();
    for (let start = 0; start < ids.length; start += LOAD_BATCH) {
      const found = await this.db
        .selectFrom('records')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('id', 'in', ids.slice(start, start + LOAD_BATCH))
        .execute();
      for (const row of found) rows.set(row.id, row);
    }
    return rows;
  }

  /** A create checked (its revision current, its data valid for the form): the row to insert. */
  private async prepareCreate(
    principal: Principal,
    input: RecordCreate,
    revisions: RevisionLoader,
    at: string,
  ): Promise<PreparedCreate> {
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
    const { revision, history, validate } = await revisions(revisionId);
    assertNotSuperseded(revision, history.current_revision_id);
    const data = input.data ?? {};
    this.checkKeyCount(data);
    const problems = validate(data);
    if (problems.length > 0) throw unprocessable(problems);
    const row: RecordRow = {
      id: newObjectId(),
      tenant_id: principal.tenantId,
      kt_revision_id: revisionId,
      name: input.name.trim(),
      form: JSON.stringify(input.form),
      version: '1.0',
      data: JSON.stringify(data),
      read_only: input.read_only ? 1 : 0,
      context: storedContext(input.context),
      created_by: principal.userId,
      created_at: at,
      updated_by: null,
      updated_at: null,
      last_action: 'created',
    };
    const numbered = input.auto_number ? row.name : undefined;
    return { row, revision, history, numbered, reason: input.change_reason };
  }

  /**
   * Inserts checked creates with their first versions. Each topic's current revision is read
   * again first, share-locked (SqlSyntax.forShare): a re-approval moves the topic's records in the
   * transaction that updates that row, so the two are ordered and no record is left behind under
   * the old revision. Auto-numbers are taken here: concurrent creates get distinct ones.
   */
  private async writeCreates(
    trx: Trx,
    principal: Principal,
    creates: readonly PreparedCreate[],
    turn = eventLoopSlices(),
  ): Promise<Map<string, number>> {
    const current = new Map<string, string | null>();
    const byReason = new Map<string | null, { actor: ChangeActor; rows: RecordRow[] }>();
    for (const create of creates) {
      const { history, revision, row } = create;
      if (!current.has(history.id)) {
        const now = await this.storage.syntax
          .forShare(trx.selectFrom('kt_histories').select('current_revision_id').where('id', '=', history.id))
          .executeTakeFirstOrThrow();
        current.set(history.id, now.current_revision_id);
      }
      try {
        assertNotSuperseded(revision, current.get(history.id)!);
      } catch (error) {
        throw error instanceof HttpError ? itemError(create.index, error) : error;
      }
      // From the name given, each time: a transaction run again takes its number again.
      if (create.numbered !== undefined)
        row.name = `${create.numbered}-${await nextRecordNumber(trx, principal.tenantId, history.id, create.numbered)}`;
      const actor = changeActor(principal, create.reason, row.created_at);
      const group = byReason.get(actor.reason) ?? { actor, rows: [] };
      group.rows.push(row);
      byReason.set(actor.reason, group);
      await turn();
    }
    const firstVersions = new Map<string, number>();
    for (const { actor, rows } of byReason.values())
      for (const [id, n] of await insertRecords(trx, rows, actor, turn)) firstVersions.set(id, n);
    return firstVersions;
  }

  /** A change checked (the record writable, at the version expected, its data valid for the form). */
  private async prepareUpdate(
    principal: Principal,
    row: RecordRow,
    input: RecordUpdate,
    revisions: RevisionLoader,
    at: string,
  ): Promise<PreparedUpdate> {
    const id = row.id;
    if (row.read_only) throw conflict(`Record ${id} is read-only and refuses changes.`);
    if (input.version !== undefined && input.version !== row.version) {
      throw conflict(
        `Record ${id} is at version ${row.version}, not ${input.version}: someone changed it meanwhile. Reload it and apply your change again.`,
      );
    }
    if (input.data !== undefined) this.checkKeyCount(input.data);
    if (input.data !== undefined && row.kt_revision_id) {
      const { validate } = await revisions(row.kt_revision_id);
      const problems = validate(input.data);
      if (problems.length > 0) throw unprocessable(problems);
    }
    const changes = {
      name: input.name?.trim() ?? row.name,
      data: input.data !== undefined ? JSON.stringify(input.data) : row.data,
      version: nextRecordVersion(row.version),
      updated_by: principal.userId,
      updated_at: at,
      last_action: 'updated',
    };
    return {
      id,
      expectedVersion: row.version,
      changes,
      reason: input.change_reason,
      at,
      record: toServiceRecord({ ...row, ...changes }),
    };
  }

  /** Writes a checked change; the version guard makes concurrent updates fail loudly instead of overwriting. */
  private async writeUpdate(trx: Trx, principal: Principal, update: PreparedUpdate): Promise<void> {
    const actor = changeActor(principal, update.reason, update.at);
    const { id, expectedVersion, changes } = update;
    if (!(await updateRecord(trx, principal.tenantId, id, expectedVersion, changes, actor)))
      throw itemError(
        update.index,
        conflict(`Record ${id} changed meanwhile. Reload it and apply your change again.`),
      );
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
    if (!deleted) throw recordNotFound(id);
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
    if (!last) throw recordNotFound(id);
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
