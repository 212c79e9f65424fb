import type { RecordVersion } from '@rxs/contract';
import type {
  BulkRecordItem,
  BulkWriteAnswer,
  RecordChangesPage,
  RecordCreate,
  RecordListQuery,
  RecordUpdate,
  ServiceRecord,
} from '@rxs/contract';
import { checkWholeNumber } from './concurrency.js';
import { keyedWriteError, RecordsStreamInterrupted, ResponseFormatError, RxsApiError } from './errors.js';
import { JsonArrayError, parseJsonArrayBatches, type JsonArrayMode } from './json-array-stream.js';
import { parseRecordLines } from './record-lines.js';
import { outlineMethods, type OutlineClient } from './outline.js';
import { expectArray, expectChangesPage, expectObject, type ShapeCheck } from './shape.js';
import type { Call, Exchange, RequestOptions, Transport } from './transport.js';
import { pathSegment } from './url.js';

export interface ListRecordsOptions {
  signal?: AbortSignal;
  /**
   * Page through the listing with `limit`/`after` pages of this size (the server allows up to 1000),
   * following `Link: <...>; rel="next"`. Without it, one request streams every match.
   */
  pageSize?: number;
  /** Called with the parser each body gets: `lines` (one record per line) or `general`. For diagnostics. */
  onParseMode?: (mode: JsonArrayMode) => void;
}

/** The records service; with RXS, also its topics' document outlines (OutlineClient). */
export interface RecordsClient extends OutlineClient {
  /**
   * `GET /records/`: the matching records, yielded one by one as they arrive, so memory stays flat
   * for any number of records. Ends with an error, never silently short, when the body is cut off
   * or malformed.
   *
   * Retries: a request is retried (network errors, 429, 500, 502, 503, 504, a body cut off) only
   * before it yielded its first record. Once records were handed out it is not restarted (they would
   * come twice): the listing throws {@link RecordsStreamInterrupted}, whose `lastId` lets the caller
   * resume with `after`, or start again from scratch. With `pageSize`, each page request is retried
   * this way on its own.
   */
  listRecords(query?: RecordListQuery, options?: ListRecordsOptions): AsyncIterable<ServiceRecord>;
  /**
   * `listRecords` in batches (the records each chunk of the body completed, never an empty batch):
   * the same records, retries and errors, with one await per chunk instead of one per record.
   */
  listRecordBatches(query?: RecordListQuery, options?: ListRecordsOptions): AsyncIterable<ServiceRecord[]>;
  /** `listRecords` collected into an array (memory grows with the result). */
  listAllRecords(query?: RecordListQuery, options?: ListRecordsOptions): Promise<ServiceRecord[]>;
  /**
   * RXS `GET /records/changes`: what changed in a revision's listing since `since` (the `cursor` of
   * an earlier page). Without `since`, the whole listing (held in memory: for a large one, start
   * with `fromNow` and list the records with `listRecords`); with `fromNow`, only a cursor at the
   * newest change. Apply `records`, then `removed`, and ask again with the page's `cursor` while
   * `more` is true. Retried like any read; a cursor the server refuses is a 422.
   */
  recordChanges(revisionId: string, options?: RecordChangesOptions): Promise<RecordChangesPage>;
  /**
   * RXS `GET /records/count`: how many records `listRecords` with these filters would list (`limit`
   * and `after` are ignored), without downloading them. A service without it answers an error.
   */
  countRecords(query?: RecordListQuery, options?: RequestOptions): Promise<number>;
  /** `GET /records/{id}`; with `asOf`, the record as it was at that moment (404 if it did not exist then). */
  getRecord(id: string, options?: RequestOptions & AsOfOption): Promise<ServiceRecord>;
  /**
   * `GET /records/{id}/versions`: the record's audit trail, newest first, following the pages
   * (`limit` versions a request). A deleted record's history stays readable.
   */
  listRecordVersions(id: string, options?: RequestOptions & { limit?: number }): AsyncIterable<RecordVersion>;
  /** `GET /records/{id}/versions/{n}`: one version, the record as that change left it. */
  getRecordVersion(id: string, n: number, options?: RequestOptions): Promise<RecordVersion>;
  /** `POST /records/{id}/restore`: brings a deleted record back as its last version was. Never retried. */
  restoreRecord(id: string, options?: RequestOptions & ReasonOption): Promise<ServiceRecord>;
  /**
   * `POST /records/` (201): validated against the KT revision's schema (422 lists every problem).
   * Retried only with `idempotencyKey` (RXS: the service answers a repeat with the first answer, so
   * a retry never creates twice; another service ignores the header, so give one only to RXS). A
   * repeat whose record was deleted since throws {@link RecordDeletedSinceError}: nothing was created.
   */
  createRecord(body: RecordCreate, options?: RequestOptions & IdempotencyOption): Promise<ServiceRecord>;
  /**
   * `PATCH /records/{id}`: name and data; with `version`, only if unchanged meanwhile (else 409).
   * Retried only with `idempotencyKey`; a repeat whose record was deleted since throws
   * {@link RecordDeletedSinceError}.
   */
  updateRecord(
    id: string,
    body: RecordUpdate,
    options?: RequestOptions & IdempotencyOption,
  ): Promise<ServiceRecord>;
  /** `DELETE /records/{id}` (204), with the traces that touch the record; the reason goes into its history. */
  deleteRecord(id: string, options?: RequestOptions & ReasonOption): Promise<void>;
  /**
   * RXS `POST /records/bulk`: up to 1,000 creates and changes (an item with `_id` is a change) in
   * one transaction, all or nothing: each item is checked as its single write is, and one refused
   * item refuses them all with a {@link ValidationError} whose items name it
   * (`loc` `["body", "records", index, ...]`). The answer lists each item's record in order.
   * Retried only with `idempotencyKey`, as the single writes are; a repeat whose records were
   * deleted since throws {@link RecordDeletedSinceError}. An item's own `idempotency_key` makes it
   * the single write it stands for under that key (answered from it, `replayed`, when it was used).
   */
  bulkWrite(
    items: readonly BulkRecordItem[],
    options?: RequestOptions & IdempotencyOption,
  ): Promise<BulkWriteAnswer>;
}

export interface RecordChangesOptions extends RequestOptions {
  since?: string;
  /** Without `since`: no records, only a cursor at the newest change. */
  fromNow?: boolean;
  /** Changed records per page (the server's default is 10 000, its most 100 000). */
  limit?: number;
}

/** Read the state at a moment (ISO 8601 date-time): `as_of`. */
export interface AsOfOption {
  asOf?: string;
}

/** RXS: a key of the caller's that makes a write safe to repeat (`Idempotency-Key`). */
export interface IdempotencyOption {
  idempotencyKey?: string;
}

/** Why a change is made: kept in the record's history (`change_reason`). */
export interface ReasonOption {
  reason?: string;
}

const record = expectObject('a record');
const changesPage = expectChangesPage('a page of record changes', 'records');
const recordCount: ShapeCheck = (value) =>
  typeof value === 'object' && value !== null && Number.isSafeInteger((value as { count?: unknown }).count)
    ? undefined
    : 'is not a record count (a JSON object with a whole "count")';
const bulkAnswer: ShapeCheck = (value) =>
  typeof value === 'object' && value !== null && Array.isArray((value as { records?: unknown }).records)
    ? undefined
    : 'is not the answer of a bulk write (a JSON object with "records")';
const version = expectObject('a record version');
const versions = expectArray('a list of record versions');

export function createRecordsClient(transport: Transport, base: URL): RecordsClient {
  const call = (c: Omit<Call, 'service' | 'base'>): Call => ({ service: 'records', base, ...c });
  const recordPath = (id: string) => `/records/${pathSegment(id, 'The record id')}`;

  /** A parse failure of a listing body as the client's error. */
  const asClientError = (error: unknown, exchange: Exchange | undefined): unknown =>
    error instanceof JsonArrayError && exchange
      ? new ResponseFormatError(
          transport.redactor.text(error.message),
          exchange.info,
          exchange.response.status,
          error.truncated,
          {
            cause: error,
          },
        )
      : error;

  /** A write of records, with the error of a repeat whose record was deleted since typed as such. */
  const keyedWrite = async <T = ServiceRecord>(write: Call, check: ShapeCheck = record): Promise<T> => {
    try {
      return await transport.json<T>(write, check);
    } catch (error) {
      throw keyedWriteError(error, write.idempotencyKey);
    }
  };

  async function* listRecordBatches(
    query: RecordListQuery = {},
    options: ListRecordsOptions = {},
  ): AsyncGenerator<ServiceRecord[], void, undefined> {
    const { pageSize, signal } = options;
    if (pageSize !== undefined) checkWholeNumber(pageSize, 'pageSize');
    const firstQuery = pageSize === undefined ? { ...query } : { ...query, limit: pageSize };
    let target: string | URL = '/records/';
    let received = 0;
    let lastId: string | undefined;
    for (;;) {
      const request = call({
        method: 'GET',
        path: target,
        query: typeof target === 'string' ? firstQuery : undefined,
        signal,
      });
      let next: URL | undefined;
      for (let retryIndex = 0; ; retryIndex++) {
        let yieldedHere = 0;
        let exchange: Exchange | undefined;
        try {
          exchange = await transport.open(request);
          next = pageSize === undefined ? undefined : transport.nextPage(exchange);
          for await (const elements of parseJsonArrayBatches(transport.chunks(exchange), {
            onMode: options.onParseMode,
          })) {
            // Records before a malformed element are handed out first, as one by one.
            let count = 0;
            let problem: string | undefined;
            for (; count < elements.length; count++) {
              problem = record(elements[count]);
              if (problem) break;
            }
            if (count > 0) {
              const items = (
                count === elements.length ? elements : elements.slice(0, count)
              ) as ServiceRecord[];
              const last = items[count - 1]!._id;
              yieldedHere += count;
              received += count;
              if (typeof last === 'string') lastId = last;
              else for (const item of items) if (typeof item._id === 'string') lastId = item._id;
              yield items;
            }
            if (problem) {
              throw new ResponseFormatError(
                `holds an element that ${problem}`,
                exchange.info,
                exchange.response.status,
                false,
              );
            }
          }
          break;
        } catch (error) {
          const failure = asClientError(error, exchange);
          if (yieldedHere === 0) {
            try {
              await transport.pauseBeforeRetry(failure, retryIndex, request);
              continue;
            } catch (final) {
              if (received > 0 && final instanceof RxsApiError) {
                throw new RecordsStreamInterrupted(final, received, lastId);
              }
              throw final;
            }
          }
          throw failure instanceof RxsApiError
            ? new RecordsStreamInterrupted(failure, received, lastId)
            : failure;
        } finally {
          exchange?.timer.cancel();
        }
      }
      if (!next) return;
      target = next;
    }
  }

  async function* listRecords(
    query?: RecordListQuery,
    options?: ListRecordsOptions,
  ): AsyncGenerator<ServiceRecord, void, undefined> {
    for await (const batch of listRecordBatches(query, options)) yield* batch;
  }

  return {
    ...outlineMethods(transport, call),
    listRecords: (query, options) => listRecords(query, options),

    listRecordBatches: (query, options) => listRecordBatches(query, options),

    listAllRecords: async (query, options) => {
      const all: ServiceRecord[] = [];
      for await (const batch of listRecordBatches(query, options)) for (const item of batch) all.push(item);
      return all;
    },

    recordChanges: async (revisionId, options = {}) =>
      transport.json(
        call({
          method: 'GET',
          path: '/records/changes',
          query: {
            context__knowledge_unit_topic_id: revisionId,
            ...(options.since !== undefined && { since: options.since }),
            ...(options.fromNow && { from: 'now' }),
            ...(options.limit !== undefined && { limit: checkWholeNumber(options.limit, 'limit') }),
          },
          signal: options.signal,
        }),
        changesPage,
        // Each record parsed from its own line: its text is kept (`recordText`).
        parseRecordLines,
      ),

    countRecords: async (query = {}, options = {}) => {
      const { limit: _limit, after: _after, with_revision: _withRevision, ...filters } = query;
      const answer = await transport.json<{ count: number }>(
        call({ method: 'GET', path: '/records/count', query: { ...filters }, signal: options.signal }),
        recordCount,
      );
      return answer.count;
    },

    getRecord: async (id, options) =>
      transport.json(
        call({
          method: 'GET',
          path: recordPath(id),
          query: options?.asOf === undefined ? undefined : { as_of: options.asOf },
          signal: options?.signal,
        }),
        record,
      ),

    listRecordVersions: (id, options = {}) => ({
      async *[Symbol.asyncIterator]() {
        const limit = checkWholeNumber(options.limit ?? 100, 'limit');
        let target: string | URL = `${recordPath(id)}/versions`;
        for (;;) {
          const page: { value: RecordVersion[]; next: URL | undefined } = await transport.jsonPage<
            RecordVersion[]
          >(
            call({
              method: 'GET',
              path: target,
              query: typeof target === 'string' ? { limit } : undefined,
              signal: options.signal,
            }),
            versions,
          );
          yield* page.value;
          if (!page.next) return;
          target = page.next;
        }
      },
    }),

    getRecordVersion: async (id, n, options) =>
      transport.json(
        call({
          method: 'GET',
          path: `${recordPath(id)}/versions/${checkWholeNumber(n, 'n')}`,
          signal: options?.signal,
        }),
        version,
      ),

    restoreRecord: async (id, options) =>
      transport.json(
        call({
          method: 'POST',
          path: `${recordPath(id)}/restore`,
          body: options?.reason === undefined ? {} : { change_reason: options.reason },
          signal: options?.signal,
        }),
        record,
      ),

    createRecord: async (body, options) =>
      keyedWrite(
        call({
          method: 'POST',
          path: '/records/',
          body,
          signal: options?.signal,
          idempotencyKey: options?.idempotencyKey,
        }),
      ),

    updateRecord: async (id, body, options) =>
      keyedWrite(
        call({
          method: 'PATCH',
          path: recordPath(id),
          body,
          signal: options?.signal,
          idempotencyKey: options?.idempotencyKey,
        }),
      ),

    bulkWrite: async (items, options) =>
      keyedWrite<BulkWriteAnswer>(
        call({
          method: 'POST',
          path: '/records/bulk',
          body: { records: items },
          signal: options?.signal,
          idempotencyKey: options?.idempotencyKey,
        }),
        bulkAnswer,
      ),

    deleteRecord: async (id, options) =>
      transport.empty(
        call({
          method: 'DELETE',
          path: recordPath(id),
          query: options?.reason === undefined ? undefined : { change_reason: options.reason },
          signal: options?.signal,
        }),
      ),
  };
}
