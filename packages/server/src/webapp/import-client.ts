import type { BulkWriteAnswer, KnowledgeTopicRevision, ServiceRecord } from '@rxs/contract';
import {
  ConflictError,
  NotFoundError,
  RxsApiError,
  ValidationError,
  type RequestSummary,
  type ServiceName,
} from '@rxs/client';
import type { ImportClient } from '@rxs/exchange';
import type { Services } from '../services/index.js';
import type { Principal } from '../auth/principal.js';
import { keptFor, requestFingerprint, writeOnce } from '../http/idempotency.js';
import { HttpError } from '../http/errors.js';
import type { IdempotentRequest } from '../storage/idempotency-keys.js';
import { recordsInPages } from './record-pages.js';
import { answerBulkWrite } from '../services/records/bulk.js';

const ERRORS = { 404: NotFoundError, 409: ConflictError, 422: ValidationError } as const;

/**
 * The calls of an import, answered in-process by the services with the signed-in user's principal:
 * the same checks, answers and errors as the HTTP API (a refusal is the sdk's error of its status),
 * and the same idempotency keys, so a web import and an `rxs import` of one file never write twice.
 */
export function inProcessImportClient(services: Services, principal: Principal): ImportClient {
  /** A service's refusal as the error the sdk client would throw for its answer. */
  const call = async <T>(summary: RequestSummary, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      const type = ERRORS[error.statusCode as keyof typeof ERRORS];
      const response = { status: error.statusCode, detail: error.detail };
      if (type) throw new type(summary, response);
      throw new RxsApiError(error.message, summary, response);
    }
  };
  const request = (service: ServiceName, method: string, url: string): RequestSummary => ({
    service,
    method,
    url,
  });
  /** A write with its idempotency key: the kept answer when the key was used, as the HTTP API. */
  const once = (
    method: string,
    path: string,
    body: unknown,
    key: string | undefined,
    write: (idempotent?: IdempotentRequest) => Promise<ServiceRecord>,
  ) =>
    call(request('records', method, path), async () => {
      if (key === undefined) return write();
      const idempotent = { key, fingerprint: requestFingerprint(method, path, body) };
      const outcome = await writeOnce(
        () => services.records.keptAnswer(principal, key),
        () => write(idempotent),
      );
      if ('written' in outcome) return outcome.written;
      return JSON.parse(keptFor(idempotent, outcome.kept).body) as ServiceRecord;
    });
  return {
    techdoc: {
      getTopic: (revisionId) =>
        call(request('techdoc', 'GET', `/kt/${revisionId}`), () =>
          services.techdoc.getRevision(principal, revisionId),
        ),
      listTopics: (query = {}) =>
        call(request('techdoc', 'GET', '/kt/'), async () => {
          const topics: KnowledgeTopicRevision[] = [];
          let after: string | undefined;
          do {
            const page = await services.techdoc.list(principal, {
              knowledge_topic_history_id: query.knowledge_topic_history_id,
              limit: 1000,
              after,
            });
            for (const topic of page.items) topics.push(topic);
            after = page.next;
          } while (after !== undefined);
          return topics;
        }),
    },
    records: {
      async *listRecords(query = {}) {
        // A topic's records, or records by id (`id__in`: those a chunk of an import's rows names).
        const revisionId = query.context__knowledge_unit_topic_id;
        const ids = query.id__in?.split(',').filter((id) => id !== '');
        if (!revisionId && !ids?.length) return;
        // Pages of a few MB: the rows an import matches against may be megabytes each.
        const globalElementId = query.context__global_element_id;
        yield* recordsInPages(services.records, principal, {
          ...(revisionId !== undefined && { revisionIds: [revisionId] }),
          ...(ids?.length && { ids }),
          ...(globalElementId !== undefined && { globalElementId }),
        });
      },
      getRecord: (id) =>
        call(request('records', 'GET', `/records/${id}`), () => services.records.get(principal, id)),
      createRecord: (body, options) =>
        once('POST', '/records/', body, options?.idempotencyKey, (idempotent) =>
          services.records.create(principal, body, idempotent),
        ),
      updateRecord: (id, body, options) =>
        once('PATCH', `/records/${id}`, body, options?.idempotencyKey, (idempotent) =>
          services.records.update(principal, id, body, idempotent),
        ),
      bulkWrite: (items, options) =>
        call(request('records', 'POST', '/records/bulk'), async () => {
          const answer = await answerBulkWrite(services.records, principal, items, {
            key: options?.idempotencyKey,
          });
          return JSON.parse(answer.body) as BulkWriteAnswer;
        }),
      deleteRecord: (id, options) =>
        call(request('records', 'DELETE', `/records/${id}`), () =>
          services.records.delete(principal, id, { reason: options?.reason }),
        ),
    },
  };
}
