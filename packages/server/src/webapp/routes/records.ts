import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ObjectId, RecordCreate, RecordUpdate } from '@rxs/contract';
import { buildFieldMap } from '@rxs/exchange/export';
import { unprocessable, validationItem } from '../../http/errors.js';
import {
  RecordDeleteQuery,
  RecordSearchQuery,
  RecordTableQuery,
  type RecordDetail,
  type RecordSearchHit,
  type RecordTable,
} from '@rxs/web-api';
import { recordListingTag } from '../../services/records/listing-tag.js';
import { RecordIdentities } from '../record-identities.js';
import { signedIn, type WebContext } from '../context.js';
import { unlessMissing } from '../missing.js';
import { mapRecordRows, MappedRowsCache, queryRecordTable, type SortKey } from '../record-table.js';
import { recordsInPages } from '../record-pages.js';
import { displayValues } from '../record-values.js';

const IdParams = Type.Object({ id: ObjectId });

/** Records: the table of a revision, one record, create, edit, delete, and search by name. */
export function recordRoutes(context: WebContext): FastifyPluginAsync {
  const { techdoc, records, accounts } = context.services;
  const cache = MappedRowsCache.fromEnv();

  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/revisions/:id/records',
      {
        config: { permission: 'records:read' },
        schema: {
          params: IdParams,
          querystring: RecordTableQuery,
        },
      },
      async (request): Promise<RecordTable> => {
        const { principal } = signedIn(request);
        const revision = await techdoc.getRevision(principal, request.params.id);
        const { offset, limit, sort, dir, q } = request.query;
        const query = {
          offset,
          limit,
          sort: parseSort(sort),
          dir,
          search: q,
          filters: parseFilters(request.query.filters),
        };
        const key = `${principal.tenantId}/${revision._id}`;
        // The records' listing tag changes with every write under the revision, read without reading
        // a record; a draft's schema can change too, and the columns with it.
        const listing = { revisionIds: [revision._id] };
        const tag = await recordListingTag(context.services.storage, principal.tenantId, listing);
        const fingerprint = `${revision.audit_info.timestamp_last_updated ?? ''}|${tag}`;
        let mapped = cache.get(key, fingerprint);
        if (!mapped) {
          // Read a few MB at a time: only the rows' clipped cell texts outlive their page.
          mapped = await mapRecordRows(
            revision.knowledge_topic_schema,
            recordsInPages(records, principal, { revisionIds: [revision._id] }),
          );
          cache.set(key, fingerprint, mapped);
        }
        return queryRecordTable(revision._id, mapped, query);
      },
    );

    app.get(
      '/records/search',
      {
        config: { permission: 'records:read' },
        schema: { querystring: RecordSearchQuery },
      },
      async (request): Promise<RecordSearchHit[]> => {
        const { principal } = signedIn(request);
        const hits = await context.queries.searchRecords(
          principal.tenantId,
          request.query.q,
          request.query.limit,
          request.query.topic,
        );
        // Each hit with its readable id and title, as its topic's table shows them: one record read
        // at a time, since each may be megabytes of which only those two values are kept.
        const identities = RecordIdentities.now(techdoc, records, principal);
        const found: RecordSearchHit[] = [];
        for (const hit of hits) found.push({ ...hit, ...(await identities.of(hit.id, hit.revisionId)) });
        return found;
      },
    );

    app.get(
      '/records/:id',
      { config: { permission: 'records:read' }, schema: { params: IdParams } },
      async (request): Promise<RecordDetail> => {
        const { principal } = signedIn(request);
        const record = await records.get(principal, request.params.id);
        const revisionId = record.context.knowledge_unit_topic_id;
        let topic: RecordDetail['topic'] = null;
        let values: RecordDetail['values'] = [];
        if (revisionId) {
          const revision = await unlessMissing(techdoc.getRevision(principal, revisionId));
          if (revision) {
            topic = {
              historyId: revision.knowledge_topic_history_id,
              revisionId: revision._id,
              name: revision.knowledge_topic_name,
              schema: revision.knowledge_topic_schema,
              currentRevisionId: revision.latest_revision_id,
            };
            values = displayValues(record, buildFieldMap(revision.knowledge_topic_schema));
          }
        }
        const users = new Map((await accounts.listUsers(principal.tenantId)).map((u) => [u.id, u.email]));
        const who = (id: string | null | undefined) => (id ? (users.get(id) ?? id) : null);
        return {
          record,
          topic,
          values,
          createdBy: who(record.audit_info.user_id_created),
          updatedBy: who(record.audit_info.user_id_last_updated),
        };
      },
    );

    app.post(
      '/records',
      { config: { permission: 'records:write' }, schema: { body: RecordCreate } },
      async (request, reply) => {
        const { principal } = signedIn(request);
        reply.code(201);
        return records.create(principal, request.body);
      },
    );

    app.patch(
      '/records/:id',
      { config: { permission: 'records:write' }, schema: { params: IdParams, body: RecordUpdate } },
      async (request) => {
        const { principal } = signedIn(request);
        return records.update(principal, request.params.id, request.body);
      },
    );

    app.delete(
      '/records/:id',
      {
        config: { permission: 'records:write' },
        schema: {
          params: IdParams,
          querystring: RecordDeleteQuery,
        },
      },
      async (request, reply) => {
        const { principal } = signedIn(request);
        // The reason is kept on the `deleted` version of the record's history.
        await records.delete(principal, request.params.id, {
          reason: request.query.change_reason?.trim() || null,
        });
        return reply.code(204).send();
      },
    );
  };
}

function parseSort(sort: string): SortKey {
  if (sort === 'id' || sort === 'readable-id' || sort === 'name' || sort === 'created' || sort === 'updated')
    return sort;
  if (sort.startsWith('field:') && sort.length > 'field:'.length) return sort as SortKey;
  throw unprocessable([
    validationItem(
      ['query', 'sort'],
      'Sort by id, readable-id, name, created, updated or field:<column name>',
      'enum',
    ),
  ]);
}

function parseFilters(text: string | undefined): Record<string, string> {
  if (!text) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw unprocessable([
      validationItem(['query', 'filters'], 'A JSON object of column name to text', 'value_error'),
    ]);
  }
  // Names are the user's: no prototype, so `__proto__` is a column name like any other.
  const filters: Record<string, string> = Object.create(null);
  for (const [name, text] of Object.entries(value)) if (typeof text === 'string') filters[name] = text;
  return filters;
}
