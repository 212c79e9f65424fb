import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { MAX_SAVED_VIEWS, SavedViewParams, SavedViewPut, type SavedView } from '@rxs/web-api';
import { conflict, notFound, unprocessable, validationItem } from '../../http/errors.js';
import type { TraceabilityViewTable } from '../../storage/schema.js';
import { inTransaction } from '../../storage/transactions.js';
import { signedIn, type WebContext } from '../context.js';

const idList = (text: string | null): string[] | null =>
  text === null ? null : (JSON.parse(text) as string[]);

function savedView(row: Omit<TraceabilityViewTable, 'tenant_id'>): SavedView {
  return {
    name: row.name,
    roles: idList(row.role_ids),
    revisions: idList(row.revision_ids),
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}

/**
 * The traceability page's saved views (`/api/traceability/views`): a name for a choice of
 * trace-model roles or of topics, each in its order, kept per tenant. Everyone who reads traces
 * lists them; those who write traces save (a new name, or the same name again to replace it) and
 * delete them. Names are the key, compared as saved (leading and trailing spaces refused).
 */
export function traceabilityViewRoutes(context: WebContext): FastifyPluginAsync {
  const db = context.services.storage.db;
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/traceability/views',
      { config: { permission: 'traces:read' } },
      async (request): Promise<SavedView[]> => {
        const rows = await db
          .selectFrom('traceability_views')
          .select(['name', 'role_ids', 'revision_ids', 'updated_at', 'updated_by'])
          .where('tenant_id', '=', signedIn(request).principal.tenantId)
          .orderBy('name')
          .execute();
        return rows.map(savedView);
      },
    );

    app.put(
      '/traceability/views/:name',
      { config: { permission: 'traces:write' }, schema: { params: SavedViewParams, body: SavedViewPut } },
      async (request, reply): Promise<SavedView> => {
        const { principal } = signedIn(request);
        const { name } = request.params;
        const { roles, revisions } = request.body;
        if (name.trim() !== name)
          throw unprocessable([
            validationItem(
              ['path', 'name'],
              'A view name neither starts nor ends with a space',
              'value_error',
            ),
          ]);
        if ((roles === undefined) === (revisions === undefined))
          throw unprocessable([
            validationItem(
              ['body'],
              'A view shows either roles or topics (revisions): name one of the two',
              'value_error',
            ),
          ]);
        const row = {
          tenant_id: principal.tenantId,
          name,
          role_ids: roles === undefined ? null : JSON.stringify(roles),
          revision_ids: revisions === undefined ? null : JSON.stringify(revisions),
          updated_at: new Date().toISOString(),
          updated_by: principal.userId,
        };
        const created = await inTransaction(db, async (trx) => {
          const exists = await trx
            .selectFrom('traceability_views')
            .select('name')
            .where('tenant_id', '=', principal.tenantId)
            .where('name', '=', name)
            .executeTakeFirst();
          if (!exists) {
            const count = await trx
              .selectFrom('traceability_views')
              .select((eb) => eb.fn.countAll<number | string>().as('count'))
              .where('tenant_id', '=', principal.tenantId)
              .executeTakeFirstOrThrow();
            if (Number(count.count) >= MAX_SAVED_VIEWS)
              throw conflict(
                `This tenant already has ${MAX_SAVED_VIEWS} saved views, the most it keeps; delete one first.`,
              );
          }
          // An upsert, so two saves of one new name at once both end as one view (the later one).
          await trx
            .insertInto('traceability_views')
            .values(row)
            .onConflict((oc) =>
              oc.columns(['tenant_id', 'name']).doUpdateSet({
                role_ids: row.role_ids,
                revision_ids: row.revision_ids,
                updated_at: row.updated_at,
                updated_by: row.updated_by,
              }),
            )
            .execute();
          return !exists;
        });
        reply.code(created ? 201 : 200);
        return savedView(row);
      },
    );

    app.delete(
      '/traceability/views/:name',
      { config: { permission: 'traces:write' }, schema: { params: SavedViewParams } },
      async (request, reply) => {
        const { principal } = signedIn(request);
        const deleted = await db
          .deleteFrom('traceability_views')
          .where('tenant_id', '=', principal.tenantId)
          .where('name', '=', request.params.name)
          .executeTakeFirst();
        if (Number(deleted.numDeletedRows) === 0)
          throw notFound(`There is no saved view named "${request.params.name}".`);
        return reply.code(204).send();
      },
    );
  };
}
