import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Baseline, BaselineCreate, MAX_BASELINE_NAME, ObjectId } from '@rxs/contract';
import { requirePermission } from '../../auth/principal.js';
import { setNextLink } from '../../http/pagination.js';
import { apiKeySecurity, bodyErrorResponses, conflictResponse, errorResponses } from '../../http/schemas.js';
import type { BaselinesService } from './baselines.js';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;

/** Baselines (served with techdoc): `/baselines/...`. Created once, never changed or deleted. */
export function baselinesRoutes(service: BaselinesService): FastifyPluginAsync {
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['baselines'];
    const security = apiKeySecurity;

    app.post(
      '/baselines/',
      {
        schema: {
          tags,
          security,
          summary:
            'Name a moment over some KT revisions (e.g. v1.0). An export of the baseline is the export as of its moment; it never changes',
          body: BaselineCreate,
          response: { 201: Baseline, ...errorResponses, ...bodyErrorResponses, ...conflictResponse },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'kt:write');
        return reply.code(201).send(await service.create(request.principal!, request.body));
      },
    );

    app.get(
      '/baselines/',
      {
        schema: {
          tags,
          security,
          summary: 'List baselines (paginated, by id)',
          querystring: Type.Object({
            name: Type.Optional(Type.String({ maxLength: MAX_BASELINE_NAME, description: 'Exact name' })),
            limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE }),
            after: Type.Optional(ObjectId),
          }),
          response: { 200: Type.Array(Baseline), ...errorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'kt:read');
        const page = await service.list(request.principal!, request.query);
        setNextLink(request, reply, page.next);
        return page.items;
      },
    );

    app.get(
      '/baselines/:baseline_id',
      {
        schema: {
          tags,
          security,
          summary: 'Get a baseline',
          params: Type.Object({ baseline_id: ObjectId }),
          response: { 200: Baseline, ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'kt:read');
        return service.get(request.principal!, request.params.baseline_id);
      },
    );
  };
}
