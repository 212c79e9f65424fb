import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  MAX_TRACE_ROLES,
  TRACE_MODEL_WRITE_PERMISSION,
  TraceModel,
  TraceModelPut,
  TraceModelVersion,
} from '@rxs/contract';
import { requirePermission } from '../../auth/principal.js';
import { apiKeySecurity, bodyErrorResponses, conflictResponse, errorResponses } from '../../http/schemas.js';
import type { TraceModelService } from './trace-model.js';

const MAX_HISTORY_PAGE = 100;
const TraceModelHistoryQuery = Type.Object({
  limit: Type.Integer({
    minimum: 1,
    maximum: MAX_HISTORY_PAGE,
    default: 20,
    description: 'Versions per page',
  }),
  before: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Only versions older than this one (the next page)' }),
  ),
});

/**
 * RXS `/trace-model` (tracer): the tenant's trace model. Every answer is bounded by the model's own
 * bounds (MAX_TRACE_ROLES roles, names of bounded length; history pages of MAX_HISTORY_PAGE versions),
 * so these routes need no slot or byte budget of their own.
 */
export function traceModelRoutes(service: TraceModelService): FastifyPluginAsync {
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['tracer'];
    const security = apiKeySecurity;

    app.get(
      '/trace-model',
      {
        schema: {
          tags,
          security,
          summary: "RXS: the tenant's trace model: what a trace between two topics means",
          description:
            'Each role names the traces of one relation type from records of one topic to records of another ("Verification Tests verify System Requirements"), ' +
            "with a forward and a backward name, its topics by history id (their current name and revision beside), and which end is the trace's source. " +
            'Traces keep their `relation_type`; the model only names them. Version 0 and no roles before the first change.',
          response: { 200: TraceModel, ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'traces:read');
        return service.get(request.principal!);
      },
    );

    app.put(
      '/trace-model',
      {
        schema: {
          tags,
          security,
          summary: "RXS: replace the tenant's trace model (owners and admins)",
          description:
            `The whole model (at most ${MAX_TRACE_ROLES} roles), based on \`version\` as read: when the model changed since, 409. ` +
            'Every problem is one 422 item: a role id used twice, a blank name, a name that does not tell the roles of a topic pair apart, ' +
            'two roles naming the same traces (same source topic, target topic and relation type), a topic that is no topic of the tenant. ' +
            "Each change is a version of the model's history (GET /trace-model/history); sending the model as it is changes nothing. " +
            'Names shown beside topics, `updated_at` and `updated_by` may be sent back as read; they are ignored.',
          body: TraceModelPut,
          response: { 200: TraceModel, ...errorResponses, ...bodyErrorResponses, ...conflictResponse },
        },
      },
      async (request) => {
        requirePermission(request.principal!, TRACE_MODEL_WRITE_PERMISSION);
        return service.replace(request.principal!, request.body);
      },
    );

    app.get(
      '/trace-model/history',
      {
        schema: {
          tags,
          security,
          summary: "RXS: the trace model's versions, newest first: who, when, why, what changed",
          description: `At most \`limit\` versions (${MAX_HISTORY_PAGE} the most); the next page with \`before\` set to the oldest version shown.`,
          querystring: TraceModelHistoryQuery,
          response: { 200: Type.Array(TraceModelVersion), ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'traces:read');
        return service.history(request.principal!, request.query.limit, request.query.before);
      },
    );
  };
}
