import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  AsOf,
  BulkRecordCreate,
  BulkRecordUpdate,
  BulkWrite,
  BulkWriteAnswer,
  MAX_BULK_RECORDS,
  ChangeReason,
  isObjectId,
  ObjectId,
  RecordChangesPage,
  RecordCreate,
  RecordUpdate,
  RecordVersion,
  roleAllows,
  ServiceRecord,
} from '@rxs/contract';
import { requirePermission, type Principal } from '../../auth/principal.js';
import {
  deletedSinceResponse,
  idempotentRequest,
  replayAnswer,
  sendAnswer,
  writeOnce,
} from '../../http/idempotency.js';
import { toValidationItems } from '../../http/validation.js';
import type { IdempotentRequest } from '../../storage/idempotency-keys.js';
import { unprocessable, validationItem } from '../../http/errors.js';
import { jsonArrayStream, lineChunks } from '../../http/json-array-stream.js';
import { isExpensivePage } from '../../http/expensive-reads.js';
import { parseIsoDate } from '../../http/iso-date.js';
import { absentBodyAsEmpty } from '../../http/json-body.js';
import { answeredNotModified } from '../../http/conditional.js';
import { setNextLink } from '../../http/pagination.js';
import {
  apiKeySecurity,
  bodyErrorResponses,
  conflictResponse,
  errorResponses,
  IdempotencyKeyHeaders,
  IfNoneMatchHeaders,
  NotModified,
  RecordParams,
} from '../../http/schemas.js';
import type { AsOfReader } from '../history/as-of.js';
import type { RecordHistoryService } from '../history/record-history.js';
import type { RecordFilter, RecordsService } from './service.js';
import type { RecordListings } from './listing.js';
import { DEFAULT_CHANGES_PAGE, MAX_CHANGES_PAGE, type RecordChangesFeed } from './changes-feed.js';
import { feedStart, sendFeedPage } from '../feeds/reply.js';
import { answerBulkWrite } from './bulk.js';
import { bulkItemShapes, bulkEnvelopeProblems } from './bulk-route.js';
import { BULK_WRITE_SLOTS, ExportSlots } from '../../http/export-slots.js';

const MAX_IDS = 1000;

const ListQuery = Type.Object({
  context__knowledge_unit_topic_id: Type.Optional(
    Type.String({ maxLength: 100, description: 'KT revision id; a wrong id (e.g. a history id) gives []' }),
  ),
  context__knowledge_unit_topic_id__in: Type.Optional(
    Type.String({ maxLength: 25 * MAX_IDS, description: 'Comma separated KT revision ids' }),
  ),
  id__in: Type.Optional(Type.String({ maxLength: 25 * MAX_IDS, description: 'Comma separated record ids' })),
  context__global_element_id: Type.Optional(
    Type.String({
      maxLength: 2000,
      description:
        "The record's identity in the source it was imported from (`context.global_element_id`), exactly",
    }),
  ),
  audit_info__start_date: Type.Optional(Type.String({ maxLength: 40, description: 'ISO date or date-time' })),
  audit_info__end_date: Type.Optional(Type.String({ maxLength: 40, description: 'ISO date or date-time' })),
  audit_info__include_updated: Type.Optional(
    Type.Boolean({ description: 'Match the date range on the last update too, not only creation' }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1000,
      description:
        'Page size; a page of large records ends sooner, at about 8 MiB (follow Link: rel="next"); omit to stream all matches',
    }),
  ),
  after: Type.Optional({ ...ObjectId, description: 'The last `_id` of the previous page' }),
  as_of: Type.Optional(AsOf),
  with_revision: Type.Optional(
    Type.Boolean({
      description:
        'RXS: the ETag also covers the listed revisions as GET /kt/{id} shows them, so one conditional request polls a topic and its records',
    }),
  ),
});
type ListQuery = (typeof ListQuery)['static'];
const { limit: _limit, after: _after, with_revision: _withRevision, ...countFilters } = ListQuery.properties;
const CountQuery = Type.Object(countFilters, { additionalProperties: false });

const ChangesQuery = Type.Object({
  context__knowledge_unit_topic_id: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'KT revision id whose listing the feed follows',
  }),
  since: Type.Optional(
    Type.String({
      maxLength: 400,
      description: 'The `cursor` of the previous answer; omitted: the whole listing, and a first cursor',
    }),
  ),
  from: Type.Optional(
    Type.Literal('now', {
      description:
        'Without `since`: no records, only a cursor at the newest change (take it before reading the listing with GET /records/)',
    }),
  ),
  limit: Type.Integer({
    minimum: 1,
    maximum: MAX_CHANGES_PAGE,
    default: DEFAULT_CHANGES_PAGE,
    description:
      'Changed records per page; a page of large records ends sooner, at about 8 MiB, with `more` (a page without `since` is always the whole listing)',
  }),
});

const DEFAULT_VERSIONS_PAGE = 50;
const MAX_VERSIONS_PAGE = 500;
const VersionParams = Type.Object({
  id: ObjectId,
  n: Type.Integer({
    minimum: 1,
    maximum: 2_147_483_647,
    description: '1 for the creation, then one per change',
  }),
});
const ChangeReasonBody = Type.Object(
  { change_reason: Type.Optional(ChangeReason) },
  { additionalProperties: false },
);

/** records: `/records/...`, and the records' history (`/records/{id}/versions`). */
export function recordsRoutes(
  service: RecordsService,
  listings: RecordListings,
  history: RecordHistoryService,
  readAsOf: AsOfReader,
  feed: RecordChangesFeed,
): FastifyPluginAsync {
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['records'];
    const security = apiKeySecurity;

    app.get(
      '/records/',
      {
        schema: {
          tags,
          security,
          summary: 'List records (a plain JSON array, ordered by _id, one record per line)',
          description:
            "Conditional: the answer carries a strong ETag; send it back in If-None-Match and an unchanged listing answers 304 without a body. The tag changes with every change of a record under the listed revisions (all of the tenant's without a revision filter).",
          querystring: ListQuery,
          headers: IfNoneMatchHeaders,
          response: {
            200: Type.Array(ServiceRecord),
            304: NotModified,
            ...errorResponses,
            ...conflictResponse,
          },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'records:read');
        const principal = request.principal!;
        const filter = toFilter(request.query);
        filter.asOf = await readAsOf(principal.tenantId, request.query.as_of, ['query', 'as_of']);
        const etag = await listings.tag(principal, filter);
        if (answeredNotModified(request, reply, etag)) return reply;
        void reply.type('application/json; charset=utf-8');
        const body = await listings.body(principal, filter, etag, {
          reads: request.method === 'GET',
          // A write counts until the kernel took it.
          held: () => reply.raw.writableLength,
        });
        setNextLink(request, reply, body.next);
        if (body.size !== undefined) void reply.header('content-length', body.size);
        if (body.expensive) history.expensiveReads.hold(principal, reply);
        return reply.send(body.stream as never);
      },
    );

    app.get(
      '/records/count',
      {
        schema: {
          tags,
          security,
          summary: 'RXS: how many records GET /records/ with these filters lists',
          description:
            'The same filters as GET /records/ (also `as_of`), without paging: `{"count": N}`. A topic\'s record count without downloading it.',
          querystring: CountQuery,
          response: { 200: Type.Object({ count: Type.Integer({ minimum: 0 }) }), ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'records:read');
        const filter = toFilter(request.query);
        filter.asOf = await readAsOf(request.principal!.tenantId, request.query.as_of, ['query', 'as_of']);
        return { count: await service.count(request.principal!, filter) };
      },
    );

    app.get(
      '/records/changes',
      {
        schema: {
          tags,
          security,
          summary:
            "RXS: the changes of a revision's listing since a cursor (records changed, ids removed), in the order they happened",
          description:
            'Without `since`: the whole listing and a cursor. With the `cursor` of an earlier answer: the records that joined or changed since (whole, as they are now) and the ids of those that left (deleted, or moved on by a re-approval, which also sets `superseded_by`). `more` says another page waits. The cursor is also in the `RXS-Next-Cursor` header; it is bound to the tenant and the revision, and any other is 422. Streamed, one record per line.',
          querystring: ChangesQuery,
          response: { 200: RecordChangesPage, ...errorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'records:read');
        const { context__knowledge_unit_topic_id: revisionId, since, limit, from } = request.query;
        const page = await feed.page(request.principal!, revisionId, feedStart(since, from), limit);
        const head =
          `{"revision_id":${JSON.stringify(page.revisionId)},"superseded_by":${JSON.stringify(page.supersededBy)},` +
          `"cursor":${JSON.stringify(page.cursor)},"more":${page.more},"complete":${page.complete},"records":`;
        return sendFeedPage(reply, { ...page, lines: page.records }, head);
      },
    );

    app.get(
      '/records/:id',
      {
        schema: {
          tags,
          security,
          summary: 'Get a record (with as_of: as it was at that moment)',
          params: RecordParams,
          querystring: Type.Object({ as_of: Type.Optional(AsOf) }),
          response: { 200: ServiceRecord, ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'records:read');
        const principal = request.principal!;
        const asOf = await readAsOf(principal.tenantId, request.query.as_of, ['query', 'as_of']);
        return service.get(principal, request.params.id, { asOf });
      },
    );

    app.get(
      '/records/:id/versions',
      {
        schema: {
          tags,
          security,
          summary:
            "A record's audit trail, newest first: every version with who, when, why and the whole record (paged; a deleted record's history stays readable)",
          description:
            'A page holds at most `limit` versions and, past its first, at most about 8 MiB of JSON (RXS_PAGE_BYTES), so a page of large records may hold fewer: follow `Link: rel="next"` (`before`) until it is absent. A page of large versions is served a few at a time per server (429 with Retry-After beyond). Streamed, one version per line.',
          params: RecordParams,
          querystring: Type.Object({
            limit: Type.Integer({ minimum: 1, maximum: MAX_VERSIONS_PAGE, default: DEFAULT_VERSIONS_PAGE }),
            before: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 2_147_483_647,
                description: 'The last `n` of the previous page',
              }),
            ),
          }),
          response: { 200: Type.Array(RecordVersion), ...errorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'records:read');
        const principal = request.principal!;
        const page = await history.planVersions(principal, request.params.id, request.query);
        if (isExpensivePage(page.bytes)) history.expensiveReads.hold(principal, reply);
        setNextLink(request, reply, page.next, 'before');
        void reply.type('application/json; charset=utf-8');
        const lines = history.versionLines(principal, request.params.id, page);
        return reply.send(jsonArrayStream(lineChunks(lines)) as never);
      },
    );

    app.get(
      '/records/:id/versions/:n',
      {
        schema: {
          tags,
          security,
          summary: 'One version of a record: the record as that change left it',
          params: VersionParams,
          response: { 200: RecordVersion, ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'records:read');
        return history.getVersion(request.principal!, request.params.id, request.params.n);
      },
    );

    app.post(
      '/records/:id/restore',
      {
        schema: {
          tags,
          security,
          summary: 'Bring a deleted record back as its last version was (same id); its traces stay deleted',
          params: RecordParams,
          body: ChangeReasonBody,
          response: { 200: ServiceRecord, ...errorResponses, ...bodyErrorResponses, ...conflictResponse },
        },
        preValidation: absentBodyAsEmpty,
      },
      async (request) => {
        requirePermission(request.principal!, 'records:write');
        return service.restore(request.principal!, request.params.id, {
          reason: request.body?.change_reason,
        });
      },
    );

    app.post(
      '/records/',
      {
        schema: {
          tags,
          security,
          summary: "Create a record; its data is validated against the KT revision's form schema",
          body: RecordCreate,
          headers: IdempotencyKeyHeaders,
          response: {
            201: ServiceRecord,
            ...errorResponses,
            ...bodyErrorResponses,
            ...conflictResponse,
            ...deletedSinceResponse,
          },
        },
        // A refused shape still gets the form's problems in the same answer (refuseShape).
        attachValidation: true,
      },
      async (request, reply) => {
        if (request.validationError) return refuseShape(request, service);
        requirePermission(request.principal!, 'records:write');
        const principal = request.principal!;
        const idempotency = idempotentRequest(request);
        if (!idempotency) return reply.code(201).send(await service.create(principal, request.body));
        return idempotently(reply, service, principal, idempotency, 201, () =>
          service.create(principal, request.body, idempotency),
        );
      },
    );

    const bulkWrites = ExportSlots.fromEnv(process.env, BULK_WRITE_SLOTS);
    app.post(
      '/records/bulk',
      {
        schema: {
          tags,
          security,
          summary: `RXS: create and change up to ${MAX_BULK_RECORDS} records in one transaction, all or nothing`,
          description: `Each item is a create (what POST /records/ takes) or, with \`_id\`, a change (what PATCH /records/{id} takes), checked exactly as that single write is checked, every item before anything is written; then one transaction writes them all, with their history. The answer lists each item's record in the order of the request (\`created\`: a create; \`replayed\`: answered from the item's own \`idempotency_key\`, nothing written for it). One refused item refuses the whole request and nothing is written: 422 names every refused item by its index (\`loc\` ["body", "records", i, ...]) with its single write's problems; a refusal its single write answers with another status is an item of type \`conflict\` (409: read-only, changed meanwhile, superseded revision), \`not_found\` (404) or \`deleted_since\` (410), with the same sentence. At most ${MAX_BULK_RECORDS} items (422 beyond) within the request body limit (413 beyond). The request's Idempotency-Key keeps the whole answer, as for a single write; a repeat whose records were deleted since is 410, naming them. Bulk writes at once: 4 per server (RXS_BULK_WRITES), 2 per user; 429 with Retry-After beyond.`,
          body: BulkWrite,
          headers: IdempotencyKeyHeaders,
          response: {
            200: BulkWriteAnswer,
            ...errorResponses,
            ...bodyErrorResponses,
            ...deletedSinceResponse,
          },
        },
        // Items are checked one by one (bulk-route.ts): each item's problems under its index.
        attachValidation: true,
      },
      async (request, reply) => {
        const refused = request.validationError;
        if (refused) {
          const envelope = bulkEnvelopeProblems(refused);
          if (envelope.length > 0) throw unprocessable(envelope);
        }
        requirePermission(request.principal!, 'records:write');
        const principal = request.principal!;
        // The key as every keyed write checks it; what the request asks is its items' (bulk.ts).
        const { headers, method, url } = request;
        const key = idempotentRequest({ headers, method, url, body: undefined } as FastifyRequest)?.key;
        // Only a body the schema refused has items of the wrong shape: they are found one by one.
        const checkShape = refused
          ? bulkItemShapes(
              request.compileValidationSchema(BulkRecordCreate, 'body') as never,
              request.compileValidationSchema(BulkRecordUpdate, 'body') as never,
            )
          : undefined;
        const answer = await bulkWrites.run(ExportSlots.userOf(principal), () =>
          answerBulkWrite(service, principal, request.body.records, { key, checkShape }),
        );
        if (answer.replayed) void reply.header('idempotent-replayed', 'true');
        return sendAnswer(reply, 200, answer.body);
      },
    );

    app.patch(
      '/records/:id',
      {
        schema: {
          tags,
          security,
          summary:
            'Change the name and/or data of a record (bumps its version; 409 if read-only or changed meanwhile)',
          params: RecordParams,
          body: RecordUpdate,
          headers: IdempotencyKeyHeaders,
          response: {
            200: ServiceRecord,
            ...errorResponses,
            ...bodyErrorResponses,
            ...conflictResponse,
            ...deletedSinceResponse,
          },
        },
        attachValidation: true,
      },
      async (request, reply) => {
        if (request.validationError) return refuseShape(request, service, request.params.id);
        requirePermission(request.principal!, 'records:write');
        const principal = request.principal!;
        const idempotency = idempotentRequest(request);
        if (!idempotency) return service.update(principal, request.params.id, request.body);
        return idempotently(reply, service, principal, idempotency, 200, () =>
          service.update(principal, request.params.id, request.body, idempotency),
        );
      },
    );

    app.delete(
      '/records/:id',
      {
        schema: {
          tags,
          security,
          summary: 'Delete a record and the traces that touch it (its history stays)',
          params: RecordParams,
          querystring: Type.Object({ change_reason: Type.Optional(ChangeReason) }),
          response: { 204: Type.Null(), ...errorResponses, ...conflictResponse },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'records:write');
        await service.delete(request.principal!, request.params.id, { reason: request.query.change_reason });
        return reply.code(204).send(null);
      },
    );
  };
}

function toFilter(query: ListQuery): RecordFilter {
  const filter: RecordFilter = { limit: query.limit, after: query.after };
  let revisionIds: string[] | undefined;
  if (query.context__knowledge_unit_topic_id !== undefined)
    revisionIds = [query.context__knowledge_unit_topic_id];
  if (query.context__knowledge_unit_topic_id__in !== undefined) {
    const list = splitList(query.context__knowledge_unit_topic_id__in);
    revisionIds = revisionIds ? revisionIds.filter((id) => list.includes(id)) : list;
  }
  if (revisionIds) filter.revisionIds = revisionIds;
  if (query.id__in !== undefined) {
    const ids = splitList(query.id__in);
    const bad = ids.find((id) => !isObjectId(id));
    if (bad !== undefined) {
      throw unprocessable([
        validationItem(['query', 'id__in'], `"${bad}" is not a record id (24 hex characters)`, 'value_error'),
      ]);
    }
    filter.ids = ids;
  }
  if (query.context__global_element_id !== undefined)
    filter.globalElementId = query.context__global_element_id;
  if (query.audit_info__start_date)
    filter.startDate = parseIsoDate(
      query.audit_info__start_date,
      ['query', 'audit_info__start_date'],
      'start',
    );
  if (query.audit_info__end_date)
    filter.endDate = parseIsoDate(query.audit_info__end_date, ['query', 'audit_info__end_date'], 'end');
  filter.includeUpdated = query.audit_info__include_updated ?? false;
  if (query.with_revision) filter.withRevision = true;
  return filter;
}

/** A write with an Idempotency-Key: the kept answer when the key was used (the same request: that answer again, or 410 when its record was deleted since; another: 422), else the write's. */
async function idempotently(
  reply: FastifyReply,
  service: RecordsService,
  principal: Principal,
  request: IdempotentRequest,
  status: number,
  write: () => Promise<ServiceRecord>,
): Promise<FastifyReply> {
  const outcome = await writeOnce(() => service.keptAnswer(principal, request.key), write);
  if ('kept' in outcome) return replayAnswer(reply, request, outcome.kept);
  return sendAnswer(reply, status, JSON.stringify(outcome.written));
}

/**
 * 422 for a request whose shape was refused. For the body, the form's problems with its data join
 * the shape's (an empty name must not hide a wrong priority): one answer names every problem. Only
 * for a caller who may write records; others get the shape's problems, as any refused request.
 */
async function refuseShape(
  request: FastifyRequest,
  service: RecordsService,
  recordId?: string,
): Promise<never> {
  const error = request.validationError!;
  const context = error.validationContext ?? 'body';
  const items = toValidationItems(error.validation as never, context);
  const principal = request.principal!;
  if (context === 'body' && roleAllows(principal.role, 'records:write')) {
    const seen = new Set(items.map((item) => JSON.stringify(item.loc)));
    for (const item of await service.formProblems(principal, request.body, recordId))
      if (!seen.has(JSON.stringify(item.loc))) items.push(item);
  }
  throw unprocessable(items);
}

function splitList(value: string): string[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length > MAX_IDS) {
    throw unprocessable([validationItem(['query'], `At most ${MAX_IDS} ids per list`, 'too_long')]);
  }
  return items;
}
