import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { TRACE_MODEL_WRITE_PERMISSION } from '@rxs/contract';
import { TraceModelPut, type TraceModel } from '@rxs/web-api';
import { signedIn, type WebContext } from '../context.js';

/**
 * The tenant's trace model in Settings: read by every signed-in user (all roles read traces),
 * replaced whole by those who may change it. The version read is sent back with the change, so a
 * model changed meanwhile is the service's 409, never overwritten.
 */
export function traceModelRoutes(context: WebContext): FastifyPluginAsync {
  const { tracer } = context.services;
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get('/trace-model', { config: { permission: 'traces:read' } }, async (request): Promise<TraceModel> =>
      tracer.model.get(signedIn(request).principal),
    );

    app.put(
      '/trace-model',
      { config: { permission: TRACE_MODEL_WRITE_PERMISSION }, schema: { body: TraceModelPut } },
      async (request): Promise<TraceModel> => tracer.model.replace(signedIn(request).principal, request.body),
    );
  };
}
