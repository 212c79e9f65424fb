import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { isObjectId, ObjectId, RecordCreate, RecordUpdate, ServiceRecord } from '@rxs/sdk';
import { requirePermission } from '../../auth/principal.js';
import { unprocessable, validationItem } from '../../http/errors.js';
import { jsonArrayStream, jsonArrayText } from '../../http/json-array-stream.js';
import { setNextLink } from '../../http/pagination.js';
import {
  apiKeySecurity,
  bodyErrorResponses,
  conflictResponse,
  errorResponses,
  RecordParams,
} from '../../http/schemas.js';
import type { RecordFilter, RecordsService } from './service.js';

const MAX_IDS = 1000;

const ListQuery = Type.Object({
  context__knowledge_unit_topic_id: Type.Optional(
    Type.String({ maxLength: 100, description: 'KT revision id; a wrong id (e.g. a history id) gives []' }),
  ),
  context__knowledge_unit_topic_id__in: Type.Optional(
    Type.String({ maxLength: 25 * MAX_IDS, description: 'Comma separated KT revision ids' }),
  ),
  id__in: Type.Optional(Type.String({ maxLength: 25 * MAX_IDS, description: 'Comma separated record ids' })),
  audit_info__start_date: Type.Optional(Type.String({ maxLength: 40, description: 'ISO date or date-time' })),
  audit_info__end_date: Type.Optional(Type.String({ maxLength: 40, description: 'ISO date or date-time' })),
  audit_info__include_updated: Type.Optional(
    Type.Boolean({ description: 'Match the date range on the last update too, not only creation' }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size; omit to stream all matches' }),
  ),
  after: Type.Optional({ ...ObjectId, description: 'The last `_id` of the previous page' }),
});
type ListQuery = (typeof ListQuery)['static'];

/** records: `/records/...`. */
export function recordsRoutes(service: RecordsService): FastifyPluginAsync {
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
          querystring: ListQuery,
          response: { 200: Type.Array(ServiceRecord), ...errorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'records:read');
        const filter = toFilter(request.query);
        void reply.type('application/json; charset=utf-8');
        if (filter.limit !== undefined) {
          const page = await service.page(request.principal!, { ...filter, limit: filter.limit });
          setNextLink(request, reply, page.next);
          // Raw JSON text: the records are already serialised, one per line.
          return reply.send(jsonArrayText(page.lines) as never);
        }
        return reply.send(jsonArrayStream(service.streamJsonChunks(request.principal!, filter)) as never);
      },
    );

    app.get(
      '/records/:id',
      {
        schema: {
          tags,
          security,
          summary: 'Get a record',
          params: RecordParams,
          response: { 200: ServiceRecord, ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'records:read');
        return service.get(request.principal!, request.params.id);
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
          response: { 201: ServiceRecord, ...errorResponses, ...bodyErrorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'records:write');
        return reply.code(201).send(await service.create(request.principal!, request.body));
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
          response: { 200: ServiceRecord, ...errorResponses, ...bodyErrorResponses, ...conflictResponse },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'records:write');
        return service.update(request.principal!, request.params.id, request.body);
      },
    );

    app.delete(
      '/records/:id',
      {
        schema: {
          tags,
          security,
          summary: 'Delete a record and the traces that touch it',
          params: RecordParams,
          response: { 204: Type.Null(), ...errorResponses, ...conflictResponse },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'records:write');
        await service.delete(request.principal!, request.params.id);
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
  if (query.audit_info__start_date)
    filter.startDate = isoDate(query.audit_info__start_date, 'audit_info__start_date', 'start');
  if (query.audit_info__end_date)
    filter.endDate = isoDate(query.audit_info__end_date, 'audit_info__end_date', 'end');
  filter.includeUpdated = query.audit_info__include_updated ?? false;
  return filter;
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

/** A date (whole day) or date-time as the ISO text stored timestamps compare against. */
function isoDate(value: string, name: string, edge: 'start' | 'end'): string {
  const dayOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const parsed = Date.parse(dayOnly ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(parsed)) {
    throw unprocessable([
      validationItem(['query', name], `"${value}" is not an ISO date or date-time`, 'datetime_parsing'),
    ]);
  }
  const end = new Date(dayOnly && edge === 'end' ? parsed + 86_400_000 - 1 : parsed);
  // Stored timestamps are compared as text, which holds only for four-digit years.
  const year = end.getUTCFullYear();
  if (year < 1 || year > 9999) {
    throw unprocessable([
      validationItem(['query', name], `"${value}" is outside the years 0001 to 9999`, 'datetime_range'),
    ]);
  }
  return end.toISOString();
}
