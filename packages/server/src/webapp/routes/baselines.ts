import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  BaselineCreate,
  BaselineRefusalCreate,
  BaselineSignatureCreate,
  ObjectId,
  roleAllows,
  type Baseline,
  type Permission,
} from '@rxs/contract';
import { clientAddressResolver, type ClientAddressOf } from '../../auth/client-address.js';
import type { Principal } from '../../auth/principal.js';
import {
  BaselineCompareQuery,
  BaselineListQuery,
  type BaselineComparison,
  type BaselineList,
  type BaselineSignerChoices,
  type BaselineSignerView,
  type BaselineTopic,
  type BaselineView,
  type TopicComparison,
} from '@rxs/web-api';
import { baselineTopics, compareTopicRecords, DifferencePage, pairTopics } from '../baseline-compare.js';
import { signedIn, type WebContext } from '../context.js';
import { ExportSlots } from '../../http/export-slots.js';
import { unlessMissing } from '../missing.js';
import { RevisionMaps } from '../record-values.js';

const PAGE = 100;

/** Where each required signer stands, from the signatures and the refusal the baseline carries. */
function signerViews(baseline: Baseline): BaselineSignerView[] {
  return baseline.required_signers.map((signer) => {
    const signature = baseline.signatures.find((s) => s.user_id === signer.user_id);
    const refusal = baseline.refusal?.user_id === signer.user_id ? baseline.refusal : null;
    return {
      userId: signer.user_id,
      email: signer.email,
      meaning: signer.meaning,
      state: signature ? 'signed' : refusal ? 'refused' : 'waiting',
      at: signature?.signed_at ?? refusal?.refused_at ?? null,
      reason: signature?.reason ?? refusal?.reason ?? null,
    };
  });
}

/**
 * Baselines in the web app: create or propose, list, one, sign or refuse, and the comparison of two
 * (or of one and now). Signing and refusing are the API's service methods, which check the password
 * the signer re-enters.
 */
export function baselineRoutes(
  context: WebContext,
  clientAddress: ClientAddressOf = clientAddressResolver(),
): FastifyPluginAsync {
  const { baselines, techdoc, records, accounts } = context.services;

  const topicsOf = (principal: Principal, baseline: Baseline) => baselineTopics(techdoc, principal, baseline);

  async function views(principal: Principal, items: Baseline[]): Promise<BaselineView[]> {
    const users = new Map((await accounts.listUsers(principal.tenantId)).map((u) => [u.id, u.email]));
    const names = new Map(items.map((b) => [b._id, b.name]));
    const nameOf = async (id: string) =>
      names.get(id) ?? (await unlessMissing(baselines.get(principal, id)))?.name ?? id;
    return Promise.all(
      items.map(async (baseline) => ({
        id: baseline._id,
        name: baseline.name,
        description: baseline.description,
        at: baseline.at,
        createdAt: baseline.created_at,
        createdBy: users.get(baseline.created_by) ?? baseline.created_by,
        topics: await topicsOf(principal, baseline),
        status: baseline.status,
        releasedAt: baseline.released_at,
        supersedes: baseline.supersedes
          ? { id: baseline.supersedes, name: await nameOf(baseline.supersedes) }
          : null,
        signers: signerViews(baseline),
      })),
    );
  }

  /**
   * The sides of each topic: the first baseline's revisions as of its moment, and the second's (or,
   * for now, the current revision of each of the first baseline's topics), matched by history id,
   * which survives re-approvals.
   */
  async function compare(
    principal: Principal,
    fromId: string,
    toId: string,
    offset: number,
  ): Promise<BaselineComparison> {
    const from = await baselines.get(principal, fromId);
    const to = toId === 'now' ? undefined : await baselines.get(principal, toId);
    const fromTopics = await topicsOf(principal, from);
    const sideOf = (moment: string | undefined) => (topic: BaselineTopic) => ({ ...topic, asOf: moment });
    const toTopics = to
      ? (await topicsOf(principal, to)).map(sideOf(to.at))
      : // Now: the current revision of each of the first baseline's topics that is still there.
        (
          await Promise.all(
            fromTopics.map(async (topic) => {
              const current = await unlessMissing(techdoc.getRevision(principal, topic.revisionId));
              return current
                ? [
                    {
                      historyId: topic.historyId,
                      revisionId: current.latest_revision_id ?? current._id,
                      name: current.knowledge_topic_name,
                      asOf: undefined,
                    },
                  ]
                : [];
            }),
          )
        ).flat();
    const maps = new RevisionMaps(techdoc, principal);
    const topics: TopicComparison[] = [];
    const page = new DifferencePage(offset);
    for (const { historyId, name, status, from: before, to: after } of pairTopics(
      fromTopics.map(sideOf(from.at)),
      toTopics,
    ))
      topics.push(
        await compareTopicRecords(records, principal, maps, { historyId, name, status }, before, after, page),
      );
    const now = new Date().toISOString();
    return {
      from: { id: from._id, name: from.name, at: from.at },
      to: to ? { id: to._id, name: to.name, at: to.at } : { id: null, name: 'now', at: now },
      topics,
      limit: page.limit,
      offset,
      next: page.next,
    };
  }

  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/baselines',
      {
        config: { permission: 'kt:read' },
        schema: { querystring: BaselineListQuery },
      },
      async (request): Promise<BaselineList> => {
        const { principal } = signedIn(request);
        const page = await baselines.list(principal, { limit: PAGE, after: request.query.after });
        return { items: await views(principal, page.items), next: page.next ?? null };
      },
    );

    app.post(
      '/baselines',
      { config: { permission: 'kt:write' }, schema: { body: BaselineCreate } },
      async (request, reply): Promise<BaselineView> => {
        const { principal } = signedIn(request);
        const created = await baselines.create(principal, request.body);
        reply.code(201);
        return (await views(principal, [created]))[0]!;
      },
    );

    app.get(
      '/baselines/signers',
      { config: { permission: 'kt:write' } },
      async (request): Promise<BaselineSignerChoices> => {
        const { principal } = signedIn(request);
        const users = await accounts.listUsers(principal.tenantId);
        return {
          users: users.map((user) => ({
            id: user.id,
            email: user.email,
            name: user.name,
            role: user.role,
            mayApprove: roleAllows(user.role, 'kt:approve'),
          })),
        };
      },
    );

    const BaselineParams = Type.Object({ id: ObjectId });

    app.post(
      '/baselines/:id/signatures',
      {
        config: { permission: 'kt:read' },
        schema: { params: BaselineParams, body: BaselineSignatureCreate },
      },
      async (request, reply): Promise<BaselineView> => {
        const { principal } = signedIn(request);
        const signed = await baselines.sign(
          principal,
          request.params.id,
          request.body,
          clientAddress(request),
        );
        reply.code(201);
        return (await views(principal, [signed]))[0]!;
      },
    );

    app.post(
      '/baselines/:id/refusals',
      { config: { permission: 'kt:read' }, schema: { params: BaselineParams, body: BaselineRefusalCreate } },
      async (request, reply): Promise<BaselineView> => {
        const { principal } = signedIn(request);
        const refused = await baselines.refuse(
          principal,
          request.params.id,
          request.body,
          clientAddress(request),
        );
        reply.code(201);
        return (await views(principal, [refused]))[0]!;
      },
    );

    app.get(
      '/baselines/compare',
      {
        config: { permission: ['kt:read', 'records:read'] satisfies Permission[] },
        schema: { querystring: BaselineCompareQuery },
      },
      async (request): Promise<BaselineComparison> => {
        const { principal } = signedIn(request);
        const { from, to, offset } = request.query;
        // A comparison reads every record of both sides: it takes one of the expensive-read slots.
        return context.exportSlots.run(ExportSlots.userOf(principal), () =>
          compare(principal, from, to, offset),
        );
      },
    );

    app.get(
      '/baselines/:id',
      { config: { permission: 'kt:read' }, schema: { params: BaselineParams } },
      async (request): Promise<BaselineView> => {
        const { principal } = signedIn(request);
        return (await views(principal, [await baselines.get(principal, request.params.id)]))[0]!;
      },
    );
  };
}
