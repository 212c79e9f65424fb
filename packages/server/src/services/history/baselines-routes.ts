import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  Baseline,
  BaselineCreate,
  BaselineEvent,
  BaselineRefusalCreate,
  BaselineSignatureCreate,
  MAX_BASELINE_NAME,
  ObjectId,
} from '@rxs/contract';
import { clientAddressResolver, type ClientAddressOf } from '../../auth/client-address.js';
import { requirePermission } from '../../auth/principal.js';
import { setNextLink } from '../../http/pagination.js';
import { apiKeySecurity, bodyErrorResponses, conflictResponse, errorResponses } from '../../http/schemas.js';
import type { BaselinesService } from './baselines.js';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;

/** How a signature or refusal can be turned down, for the OpenAPI document. */
const decisionErrors = {
  403: Type.Object(
    { detail: Type.String() },
    { description: 'Wrong password, you were not asked to sign, or your role may not sign as `approved`' },
  ),
  409: Type.Object(
    { detail: Type.String() },
    { description: 'The baseline is released or refused already, or you decided on it already' },
  ),
};

/**
 * Baselines (served with techdoc): `/baselines/...`. Never deleted; a baseline with signers is
 * proposed until they have signed, and a released or refused one never changes.
 */
export function baselinesRoutes(
  service: BaselinesService,
  clientAddress: ClientAddressOf = clientAddressResolver(),
): FastifyPluginAsync {
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
            'Name a moment over some KT revisions (e.g. v1.0). An export of the baseline is the export as of its moment; it never changes. RXS: with `signers` it is proposed, and released once each has signed',
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

    const BaselineParams = Type.Object({ baseline_id: ObjectId });

    app.post(
      '/baselines/:baseline_id/signatures',
      {
        schema: {
          tags,
          security,
          summary:
            'RXS: sign a proposed baseline you were asked to sign, with the meaning asked of you and your web password; the last required signature releases it',
          params: BaselineParams,
          body: BaselineSignatureCreate,
          response: { 201: Baseline, ...errorResponses, ...bodyErrorResponses, ...decisionErrors },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'kt:read');
        const baseline = await service.sign(
          request.principal!,
          request.params.baseline_id,
          request.body,
          clientAddress(request),
        );
        return reply.code(201).send(baseline);
      },
    );

    app.post(
      '/baselines/:baseline_id/refusals',
      {
        schema: {
          tags,
          security,
          summary:
            'RXS: refuse a proposed baseline you were asked to sign, with a reason and your web password; the proposal is then over (propose a new one that supersedes it)',
          params: BaselineParams,
          body: BaselineRefusalCreate,
          response: { 201: Baseline, ...errorResponses, ...bodyErrorResponses, ...decisionErrors },
        },
      },
      async (request, reply) => {
        requirePermission(request.principal!, 'kt:read');
        const baseline = await service.refuse(
          request.principal!,
          request.params.baseline_id,
          request.body,
          clientAddress(request),
        );
        return reply.code(201).send(baseline);
      },
    );

    app.get(
      '/baselines/:baseline_id/history',
      {
        schema: {
          tags,
          security,
          summary: 'RXS: every step of a baseline (proposed, signed, refused, released), oldest first',
          params: BaselineParams,
          response: { 200: Type.Array(BaselineEvent), ...errorResponses },
        },
      },
      async (request) => {
        requirePermission(request.principal!, 'kt:read');
        return service.history(request.principal!, request.params.baseline_id);
      },
    );

    app.get(
      '/baselines/:baseline_id',
      {
        schema: {
          tags,
          security,
          summary: 'Get a baseline. RXS: with its status, required signers, signatures and refusal',
          params: BaselineParams,
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
