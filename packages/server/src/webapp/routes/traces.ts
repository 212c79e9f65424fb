import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ObjectId, TraceCreate, TraceReview } from '@rxs/contract';
import { absentBodyAsEmpty } from '../../http/json-body.js';
import type { LinkView } from '@rxs/web-api';
import { signedIn, type WebContext } from '../context.js';
import { RecordIdentities } from '../record-identities.js';

const IdParams = Type.Object({ id: ObjectId });

/**
 * Traces on a record page: its direct links (one hop, either direction; the record at the other end
 * with its topic, readable id and title, so the page can name each link by its role), add, review
 * and remove.
 */
export function traceRoutes(context: WebContext): FastifyPluginAsync {
  const { tracer, records, techdoc } = context.services;
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/records/:id/links',
      { config: { permission: 'traces:read' }, schema: { params: IdParams } },
      async (request): Promise<LinkView[]> => {
        const { principal } = signedIn(request);
        const id = request.params.id;
        await records.get(principal, id); // 404 for an unknown record, not an empty list
        const graph = await tracer.batchList(principal, {
          nodes: [{ node_id: id, node_type: 'Record', version: '' }],
          n_hops: 1,
          mode: 'legacy_connected_nodes',
        });
        const edges = graph.results[id]?.edges ?? [];
        const otherIds = edges.map((e) => (e.source === id ? e.target : e.source));
        const hits = await context.queries.recordHits(principal.tenantId, otherIds);
        const identities = RecordIdentities.now(techdoc, records, principal);
        // One linked record read at a time: a record may have thousands of links, each to a record
        // of megabytes, and only its readable id and title are kept.
        const links: LinkView[] = [];
        for (const edge of edges) {
          const outgoing = edge.source === id;
          const other = outgoing ? edge.target_node : edge.source_node;
          const hit = hits.get(other.node_id);
          const identity = hit
            ? await identities.of(hit.id, hit.revisionId)
            : { readableId: null, title: null };
          links.push({
            traceId: edge._id,
            direction: outgoing ? 'outgoing' : 'incoming',
            relationType: edge.relation_type[0]!,
            suspect: edge.outdated,
            node: {
              id: other.node_id,
              type: other.type,
              name: hit?.name ?? null,
              historyId: hit?.historyId ?? null,
              topicName: hit?.topicName ?? null,
              ...identity,
              deleted: other.type === 'Record' && !hit,
            },
          });
        }
        return links;
      },
    );

    app.post(
      '/traces',
      { config: { permission: 'traces:write' }, schema: { body: TraceCreate } },
      async (request, reply) => {
        const { principal } = signedIn(request);
        reply.code(201);
        return tracer.create(principal, request.body);
      },
    );

    app.post(
      '/traces/:id/review',
      {
        config: { permission: 'traces:write' },
        schema: { params: IdParams, body: TraceReview },
        preValidation: absentBodyAsEmpty,
      },
      async (request) => {
        const { principal } = signedIn(request);
        return tracer.review(principal, request.params.id, request.body.comment);
      },
    );

    app.delete(
      '/traces/:id',
      { config: { permission: 'traces:write' }, schema: { params: IdParams } },
      async (request, reply) => {
        const { principal } = signedIn(request);
        await tracer.delete(principal, request.params.id);
        return reply.code(204).send();
      },
    );
  };
}
