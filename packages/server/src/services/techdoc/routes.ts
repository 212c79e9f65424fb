import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  APPROVAL_MEANINGS,
  Approval,
  AsOf,
  ChangeReason,
  KnowledgeTopicCreate,
  KnowledgeTopicRevision,
  KnowledgeTopicStatus,
  KnowledgeTopicUpdate,
  ObjectId,
} from '@rxs/contract';
import { requirePermission } from '../../auth/principal.js';
import { setNextLink } from '../../http/pagination.js';
import { absentBodyAsEmpty } from '../../http/json-body.js';
import { answeredNotModified, entityTag } from '../../http/conditional.js';
import {
  apiKeySecurity,
  bodyErrorResponses,
  conflictResponse,
  errorResponses,
  IfNoneMatchHeaders,
  NotModified,
  RevisionParams,
} from '../../http/schemas.js';
import type { AsOfReader } from '../history/as-of.js';
import type { TechdocService } from './service.js';

const ApproveBody = Type.Object(
  {
    meaning: Type.Optional(Type.Union(APPROVAL_MEANINGS.map((m) => Type.Literal(m)))),
    reason: Type.Optional(ChangeReason),
  },
  { additionalProperties: false },
);

const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;

/** techdoc: `/kt/...`. */
export function techdocRoutes(service: TechdocService, readAsOf: AsOfReader): FastifyPluginAsync {
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['techdoc'];
    const security = apiKeySecurity;

    app.get(
      '/kt/',
      {
        schema: {
          tags,
          security,
          summary: 'List knowledge topic revisions (paginated; never unbounded)',
          querystring: Type.Object({
            knowledge_topic_history_id: Type.Optional(ObjectId),
            status: Type.Optional(KnowledgeTopicStatus),
            name: Type.Optional(
              Type.String({ maxLength: 200, description: 'Case-insensitive part of the name' }),
            ),
            product_history_id: Type.Optional(ObjectId),
            knowledge_unit_history_id: Type.Optional(ObjectId),
            current: Type.Optional(Type.Boolean({ description: "Only each topic's current revision" })),
            limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE }),
            after: Type.Optional(ObjectId),
          }),
          response: { 200: Type.Array(KnowledgeTopicRevision), ...errorResponses },
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
      '/kt/:kt_revision_id',
      {
        schema: {
          tags,
          security,
          summary:
            'Get a knowledge topic revision by revision id (a history id is 404); with as_of, as it was at that moment',
          description:
            'Conditional: the answer carries a strong ETag; send it back in If-None-Match and an unchanged revision answers 304 without a body.',
          params: RevisionParams,
          querystring: Type.Object({ as_of: Type.Optional(AsOf) }),
          headers: IfNoneMatchHeaders,
          response: { 200: KnowledgeTopicRevision, 304: NotModified, ...errorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'kt:read');
        const principal = request.principal!;
        const asOf = await readAsOf(principal.tenantId, request.query.as_of, ['query', 'as_of']);
        const revision = await service.getRevision(principal, request.params.kt_revision_id, { asOf });
        // The tag of what is answered: any change of the revision (or of its topic's current revision
        // and status, which it shows) changes it.
        if (answeredNotModified(request, reply, entityTag([principal.tenantId, revision]))) return reply;
        return revision;
      },
    );

    app.get(
      '/kt/:kt_revision_id/approval',
      {
        schema: {
          tags,
          security,
          summary:
            'Who approved a revision, when, what the approval means and how it was signed (404 for a draft)',
          params: RevisionParams,
          response: { 200: Approval, ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'kt:read');
        return service.getApproval(request.principal!, request.params.kt_revision_id);
      },
    );

    app.post(
      '/kt/',
      {
        schema: {
          tags,
          security,
          summary: 'Create a knowledge topic as a draft revision',
          description:
            'Takes `{knowledge_topic_name, type, knowledge_topic_schema}`; the reference shape `{knowledge_topic: {...}, knowledge_unit_history_id}` is accepted too.',
          body: KnowledgeTopicCreate,
          response: { 201: KnowledgeTopicRevision, ...errorResponses, ...bodyErrorResponses },
        },
        preValidation: async (request) => {
          request.body = unwrapReferenceCreate(request.body) as typeof request.body;
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'kt:write');
        return reply.code(201).send(await service.create(request.principal!, request.body));
      },
    );

    app.patch(
      '/kt/:kt_revision_id',
      {
        schema: {
          tags,
          security,
          summary: 'Edit a draft revision (approved revisions are immutable: 409)',
          params: RevisionParams,
          body: KnowledgeTopicUpdate,
          response: {
            200: KnowledgeTopicRevision,
            ...errorResponses,
            ...bodyErrorResponses,
            ...conflictResponse,
          },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'kt:write');
        return service.update(request.principal!, request.params.kt_revision_id, request.body);
      },
    );

    app.post(
      '/kt/:kt_revision_id/draft',
      {
        schema: {
          tags,
          security,
          summary: 'Open a new draft revision from a revision',
          params: RevisionParams,
          response: { 201: KnowledgeTopicRevision, ...errorResponses },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'kt:write');
        return reply
          .code(201)
          .send(await service.openDraft(request.principal!, request.params.kt_revision_id));
      },
    );

    app.post(
      '/kt/:kt_revision_id/approve',
      {
        schema: {
          tags,
          security,
          summary:
            "Approve a draft; on re-approval the topic's records move to it. The optional body says what the approval means and why; the API key of the call is the signature",
          params: RevisionParams,
          body: ApproveBody,
          response: {
            200: KnowledgeTopicRevision,
            ...errorResponses,
            ...bodyErrorResponses,
            ...conflictResponse,
          },
        },
        preValidation: absentBodyAsEmpty,
      },
      async (request) => {
        requirePermission(request.principal!, 'kt:approve');
        return service.approve(request.principal!, request.params.kt_revision_id, {
          meaning: request.body?.meaning ?? 'approved',
          reason: request.body?.reason,
          signature: 'api-key',
        });
      },
    );
  };
}

/** The reference OpenAPI wraps the topic in `knowledge_topic`; take the fields we use from it. */
function unwrapReferenceCreate(body: unknown): unknown {
  if (!body || typeof body !== 'object' || !('knowledge_topic' in body)) return body;
  const topic = (body as { knowledge_topic: unknown }).knowledge_topic;
  if (!topic || typeof topic !== 'object') return body;
  const { knowledge_topic_name, type, knowledge_topic_schema } = topic as Record<string, unknown>;
  return { knowledge_topic_name, type, knowledge_topic_schema };
}
