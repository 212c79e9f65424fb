import type { BatchRetrieveRequest } from '@rxs/contract';
import type { Call, Transport } from './transport.js';
import { pathSegment } from './url.js';

/** What a conditional request found: unchanged since the tag sent, and the tag of now. */
export interface TagCheck {
  unchanged: boolean;
  /** The answer's ETag now; undefined from a server that sends none (it cannot be polled cheaply). */
  etag: string | undefined;
}

/**
 * Conditional requests to the three services (`If-None-Match`): whether a topic revision, the
 * records listing of a revision or the tenant's traces changed since a tag, without downloading
 * them. Without `etag` they only fetch the current tag.
 */
export interface ConditionalClient {
  /** `GET /kt/{id}`: the revision (its schema, status and current revision id). */
  topic(revisionId: string, etag?: string): Promise<TagCheck>;
  /**
   * `GET /records/?context__knowledge_unit_topic_id=REV&limit=1&with_revision=true`: the tag moves
   * with any record of REV and with REV itself (as `GET /kt/{id}` shows it), so one request polls a
   * topic and its records.
   */
  records(revisionId: string, etag?: string): Promise<TagCheck>;
  /** `POST /traces/batch/list`: the tag moves with any trace of the tenant. */
  traces(request: BatchRetrieveRequest, etag?: string): Promise<TagCheck>;
}

export function createConditionalClient(
  transport: Transport,
  bases: { techdoc: URL; records: URL; tracer: URL },
): ConditionalClient {
  const check = (call: Call) => transport.conditional(call);
  return {
    topic: (revisionId, etag) =>
      check({
        service: 'techdoc',
        base: bases.techdoc,
        method: 'GET',
        path: `/kt/${pathSegment(revisionId, 'The knowledge topic revision id')}`,
        ifNoneMatch: etag,
      }),
    records: (revisionId, etag) =>
      check({
        service: 'records',
        base: bases.records,
        method: 'GET',
        path: '/records/',
        // One record is enough: the tag of a page moves exactly when the revision's does.
        query: { context__knowledge_unit_topic_id: revisionId, limit: 1, with_revision: true },
        ifNoneMatch: etag,
      }),
    traces: (request, etag) =>
      check({
        service: 'tracer',
        base: bases.tracer,
        method: 'POST',
        path: '/traces/batch/list',
        body: request,
        idempotent: true,
        ifNoneMatch: etag,
      }),
  };
}
