import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  MAX_OUTLINE_ENTRIES,
  MAX_OUTLINE_LEVEL,
  ObjectId,
  RecordOutline,
  RecordOutlinePut,
} from '@rxs/contract';
import { requirePermission } from '../../auth/principal.js';
import { apiKeySecurity, bodyErrorResponses, errorResponses } from '../../http/schemas.js';
import type { RecordOutlineService } from './outline.js';

const OutlineParams = Type.Object({
  knowledge_topic_history_id: {
    ...ObjectId,
    description: "The topic's history id (`knowledge_topic_history_id` of GET /kt/{id}), not a revision id",
  },
});

const ORDER_RULE =
  "The topic's records in document order: the outline's entries first, then the topic's records it does not name, by `_id` (the order of GET /records/).";

/**
 * RXS `/records/outline/{knowledge_topic_history_id}` (records): a topic's document outline. An
 * outline holds at most MAX_OUTLINE_ENTRIES entries of bounded size, so its answers and bodies fit
 * the request byte limit and need no slot or page of their own.
 */
export function recordOutlineRoutes(service: RecordOutlineService): FastifyPluginAsync {
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['records'];
    const security = apiKeySecurity;

    app.get(
      '/records/outline/:knowledge_topic_history_id',
      {
        schema: {
          tags,
          security,
          summary: "RXS: a topic's document outline: the order of its records and their levels",
          description:
            `${ORDER_RULE} Each entry is a record of the topic and its level (1 is the top; a record's parent is the nearest entry before it one level up). ` +
            "Entries of records deleted since are left out (their children move one level up) and come back with a restore. Before the first PUT: no entries, `updated_at` and `updated_by` null. 404 when the id is no topic's history id in the caller's tenant.",
          params: OutlineParams,
          response: { 200: RecordOutline, ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'records:read');
        return service.get(request.principal!, request.params.knowledge_topic_history_id);
      },
    );

    app.put(
      '/records/outline/:knowledge_topic_history_id',
      {
        schema: {
          tags,
          security,
          summary: "RXS: replace a topic's document outline",
          description:
            `The whole outline: at most ${MAX_OUTLINE_ENTRIES} entries in document order, each a record of the topic and its level, from 1 (the top) to ${MAX_OUTLINE_LEVEL}. ` +
            'The first entry is at level 1, each entry at most one level below the one before it, each record once. ' +
            'Every problem is one 422 item naming its entry (`loc` ["body", "entries", i, ...]): a level skipped, a record named twice, an id that is no record of the topic (deleted, of another topic). ' +
            `${ORDER_RULE} The answer is the outline as GET answers it; it may be sent back as read (\`updated_at\`, \`updated_by\` are ignored). The last of two changes at once wins.`,
          params: OutlineParams,
          body: RecordOutlinePut,
          response: { 200: RecordOutline, ...errorResponses, ...bodyErrorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'records:write');
        return service.replace(request.principal!, request.params.knowledge_topic_history_id, request.body);
      },
    );
  };
}
