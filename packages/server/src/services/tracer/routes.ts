import { Readable } from 'node:stream';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  BatchRetrieveRequest,
  BatchRetrieveResponse,
  Trace,
  TraceChangesPage,
  TraceCreate,
  TraceEvent,
  TraceReview,
  TRACE_BATCH_MAX_EDGES,
  TRACE_BATCH_MAX_NODES,
  TRACE_BATCH_TOO_LARGE,
  ValidationErrorItem,
} from '@rxs/contract';
import { requirePermission } from '../../auth/principal.js';
import { unprocessable, validationItem } from '../../http/errors.js';
import { absentBodyAsEmpty } from '../../http/json-body.js';
import type { AsOfReader } from '../history/as-of.js';
import {
  apiKeySecurity,
  bodyErrorResponses,
  errorResponses,
  IfNoneMatchHeaders,
  TraceParams,
} from '../../http/schemas.js';
import { answeredNotModified } from '../../http/conditional.js';
import type { TracerService } from './service.js';
import { feedStart, sendFeedPage } from '../feeds/reply.js';
import type { TraceChangesFeed } from './changes-feed.js';
import { traceModelRoutes } from './trace-model-routes.js';

const DEFAULT_TRACE_CHANGES_PAGE = 10_000;
const MAX_TRACE_CHANGES_PAGE = 100_000;
const TraceChangesQuery = Type.Object({
  since: Type.Optional(
    Type.String({
      maxLength: 400,
      description:
        'The `cursor` of the previous answer; omitted: every trace of the tenant, and a first cursor',
    }),
  ),
  from: Type.Optional(
    Type.Literal('now', { description: 'Without `since`: no traces, only a cursor at the newest change' }),
  ),
  limit: Type.Integer({
    minimum: 1,
    maximum: MAX_TRACE_CHANGES_PAGE,
    default: DEFAULT_TRACE_CHANGES_PAGE,
    description: 'Changed traces per page (a page without `since` is always every trace)',
  }),
});

/** tracer: `/traces/...`. */
export function tracerRoutes(
  service: TracerService,
  readAsOf: AsOfReader,
  feed: TraceChangesFeed,
): FastifyPluginAsync {
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['tracer'];
    const security = apiKeySecurity;
    await fastify.register(traceModelRoutes(service.model));

    app.get(
      '/traces/changes',
      {
        schema: {
          tags,
          security,
          summary:
            'RXS: the traces created, deleted, made suspect or reviewed in the tenant since a cursor, in the order it happened',
          description:
            'Without `since`: every trace of the tenant and a cursor. With the `cursor` of an earlier answer: the traces created, made suspect (a record end changed) or reviewed since (whole, with `outdated`) and the ids of those deleted (also by deleting a record). `more` says another page waits. The cursor is also in the `RXS-Next-Cursor` header; it is bound to the tenant, and any other is 422. Streamed, one trace per line.',
          querystring: TraceChangesQuery,
          response: { 200: TraceChangesPage, ...errorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'traces:read');
        const { since, from, limit } = request.query;
        const page = await feed.page(request.principal!, feedStart(since, from), limit);
        const head = `{"cursor":${JSON.stringify(page.cursor)},"more":${page.more},"complete":${page.complete},"traces":`;
        return sendFeedPage(reply, { ...page, lines: page.traces }, head);
      },
    );

    app.post(
      '/traces/',
      {
        schema: {
          tags,
          security,
          summary: 'Create a trace between two nodes',
          body: TraceCreate,
          response: { 201: Trace, ...errorResponses, ...bodyErrorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'traces:write');
        return reply.code(201).send(await service.create(request.principal!, request.body));
      },
    );

    app.get(
      '/traces/:trace_id',
      {
        schema: {
          tags,
          security,
          summary: 'Get a trace',
          params: TraceParams,
          response: { 200: Trace, ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'traces:read');
        return service.get(request.principal!, request.params.trace_id);
      },
    );

    app.post(
      '/traces/:trace_id/review',
      {
        schema: {
          tags,
          security,
          summary: 'RXS: review a trace: the link still holds for its records as they are now',
          description:
            'A trace is suspect (`outdated`) when a record at either end changed since the trace was made or last reviewed. ' +
            "A review clears it until the next change; the review, with its optional comment, goes to the trace's history. " +
            'Reviewing a trace that is not suspect records the review too.',
          params: TraceParams,
          body: TraceReview,
          response: { 200: Trace, ...errorResponses, ...bodyErrorResponses },
        },
        preValidation: absentBodyAsEmpty,
      },
      async (request) => {
        requirePermission(request.principal!, 'traces:write');
        return service.review(request.principal!, request.params.trace_id, request.body.comment);
      },
    );

    app.get(
      '/traces/:trace_id/history',
      {
        schema: {
          tags,
          security,
          summary: "RXS: a trace's history, oldest first: made, made suspect, reviewed, deleted",
          description:
            "Each event with who, when, how and why (a review's comment, or the reason of the record change that made the trace suspect), and the record versions the trace stood for after it. Readable after the trace was deleted.",
          params: TraceParams,
          response: { 200: Type.Array(TraceEvent), ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'traces:read');
        return service.history(request.principal!, request.params.trace_id);
      },
    );

    app.delete(
      '/traces/:trace_id',
      {
        schema: {
          tags,
          security,
          summary: 'Delete a trace',
          params: TraceParams,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'traces:write');
        await service.delete(request.principal!, request.params.trace_id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/traces/batch/list',
      {
        schema: {
          tags,
          security,
          summary: `Traces of up to ${TRACE_BATCH_MAX_NODES} nodes within n_hops (default 1)`,
          description:
            `A batch holds at most ${TRACE_BATCH_MAX_NODES} nodes; larger batches are 422. ` +
            `An answer holds at most ${TRACE_BATCH_MAX_EDGES} edges, counted over all its results ` +
            `(an edge reached from two requested nodes counts twice); a request whose answer would hold more ` +
            `is 422 with a detail item of type "${TRACE_BATCH_TOO_LARGE}": ask for fewer nodes at once, or fewer hops. ` +
            'Only mode "legacy_connected_nodes" is served. ' +
            "Conditional: the answer carries a strong ETag that changes with any change of the tenant's traces or records; " +
            'send it back in If-None-Match and an unchanged answer is 412 (RFC 9110: not 304, as this is a POST) without the traces.',
          headers: IfNoneMatchHeaders,
          body: BatchRetrieveRequest,
          response: {
            200: BatchRetrieveResponse,
            ...errorResponses,
            422: Type.Object(
              { detail: Type.Array(ValidationErrorItem) },
              {
                description: `Validation error, or an answer that would hold more than ${TRACE_BATCH_MAX_EDGES} edges (detail type "${TRACE_BATCH_TOO_LARGE}")`,
              },
            ),
            ...bodyErrorResponses,
            412: Type.Object(
              { detail: Type.String() },
              {
                description:
                  "Not modified: the tenant's traces are unchanged since the ETag in If-None-Match",
              },
            ),
          },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'traces:read');
        if (request.body.mode === 'resolved') {
          throw unprocessable([
            validationItem(
              ['body', 'mode'],
              'Only mode "legacy_connected_nodes" is supported by this service',
              'enum',
            ),
          ]);
        }
        // Streamed piece by piece (the schema above still describes it), so a large answer never
        // holds the event loop while it is serialised.
        const principal = request.principal!;
        const asOf = await readAsOf(principal.tenantId, request.body.as_of, ['body', 'as_of']);
        const etag = await service.batchTag(principal, request.body);
        if (answeredNotModified(request, reply, etag)) return reply;
        const pieces = await service.batchListJson(principal, request.body, { asOf });
        void reply.type('application/json; charset=utf-8');
        return reply.send(Readable.from(pieces, { objectMode: false }) as never);
      },
    );
  };
}
