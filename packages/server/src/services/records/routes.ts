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
          response: { 200: Type.Array(ServiceRecord), ...errorResponses, ...conflictResponse },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'records:read');
        const filter = toFilter(request.query);
        await service.assertPagingCurrent(request.principal!, filter);
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
          response: { 201: ServiceRecord, ...errorResponses, ...bodyErrorResponses, ...conflictResponse },
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

/**
 * ISO 8601 as RXS accepts it: a calendar date, or a date-time with minutes, optional seconds and
 * fraction, and an optional zone (none means UTC, as stored timestamps are).
 */
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|z|[+-]\d{2}:?\d{2})?)?$/;

/** A date (whole day) or date-time as the ISO text stored timestamps compare against. */
function isoDate(value: string, name: string, edge: 'start' | 'end'): string {
  const invalid = (why: string) =>
    unprocessable([
      validationItem(
        ['query', name],
        `"${value}" is not an ISO 8601 date or date-time${why}: use e.g. 2024-05-31 or 2024-05-31T12:00:00Z`,
        'datetime_parsing',
      ),
    ]);
  const match = ISO_DATE_TIME.exec(value);
  if (!match) throw invalid('');
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  // Date.UTC rolls 2020-02-30 over to March: a real calendar date reads back the same.
  const calendar = new Date(Date.UTC(y, mo - 1, d));
  calendar.setUTCFullYear(y);
  if (calendar.getUTCMonth() !== mo - 1 || calendar.getUTCDate() !== d) throw invalid(' (no such day)');
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59))
    throw invalid(' (no such time)');
  const zoneText =
    zone === undefined || zone === 'z'
      ? 'Z'
      : zone.length === 5
        ? `${zone.slice(0, 3)}:${zone.slice(3)}`
        : zone;
  if (zoneText !== 'Z' && (Number(zoneText.slice(1, 3)) > 23 || Number(zoneText.slice(4)) > 59))
    throw invalid(' (no such zone offset)');
  const millis = (fraction ?? '.000').slice(1, 4).padEnd(3, '0');
  const text =
    hour === undefined
      ? `${year}-${month}-${day}T00:00:00.000Z`
      : `${year}-${month}-${day}T${hour}:${minute}:${second ?? '00'}.${millis}${zoneText}`;
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) throw invalid('');
  const end = new Date(hour === undefined && edge === 'end' ? parsed + 86_400_000 - 1 : parsed);
  // Stored timestamps are compared as text, which holds only for four-digit years.
  const endYear = end.getUTCFullYear();
  if (endYear < 1 || endYear > 9999) {
    throw unprocessable([
      validationItem(['query', name], `"${value}" is outside the years 0001 to 9999`, 'datetime_range'),
    ]);
  }
  return end.toISOString();
}
