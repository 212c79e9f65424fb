import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  KnowledgeTopicCreate,
  KnowledgeTopicUpdate,
  ObjectId,
  type Approval,
  type FormSchema,
  type KnowledgeTopicRevision,
} from '@rxs/contract';
import { buildFieldMap } from '@rxs/exchange/export';
import { clientAddressResolver, type ClientAddressOf } from '../../auth/client-address.js';
import type { Principal } from '../../auth/principal.js';
import { forbidden, notFound } from '../../http/errors.js';
import {
  ApprovalImpactBody,
  ApproveBody,
  TopicPageQuery,
  type ApprovalImpact,
  type ApprovalResult,
  type RevisionSummary,
  type TopicDetail,
  type TopicList,
  type TopicSummary,
} from '@rxs/web-api';
import { absentBodyAsEmpty } from '../../http/json-body.js';
import { validateRecordData } from '@rxs/contract/validation';

/** Records named in an approval's impact; the count covers all. */
const MAX_IMPACT_EXAMPLES = 20;
import { signedIn, type WebContext } from '../context.js';
import { ExportSlots } from '../../http/export-slots.js';
import { unlessMissing } from '../missing.js';
import { recordsInPages } from '../record-pages.js';
import { toColumns } from '../record-table.js';
import { confirmOwnPassword } from './session.js';

const IdParams = Type.Object({ id: ObjectId });
const TOPIC_PAGE = 100;
/** Revisions of one topic read at most; a topic with more shows its newest this many. */
const MAX_REVISIONS = 500;

/** Knowledge topics: the list, one topic with its ids and history, drafts and approvals. */
export function topicRoutes(
  context: WebContext,
  clientAddress: ClientAddressOf = clientAddressResolver(),
): FastifyPluginAsync {
  const { techdoc, records } = context.services;
  const { queries } = context;

  async function revisionsOf(principal: Principal, historyId: string): Promise<KnowledgeTopicRevision[]> {
    const page = await techdoc.list(principal, {
      knowledge_topic_history_id: historyId,
      limit: MAX_REVISIONS,
    });
    return page.items;
  }

  /** The approval of an approved revision; none when its approver is not recorded (older data). */
  async function approvalOf(principal: Principal, revisionId: string): Promise<Approval | null> {
    return (await unlessMissing(techdoc.getApproval(principal, revisionId))) ?? null;
  }

  async function topicDetail(principal: Principal, historyId: string): Promise<TopicDetail> {
    const revisions = await revisionsOf(principal, historyId);
    const any = revisions[0];
    if (!any) throw notFound(`Knowledge topic ${historyId} was not found.`);
    // Both facts come from the history row, the same on every revision.
    const currentId = any.latest_revision_id;
    const newestId = any.latest_or_latest_approved_revision_id;
    const byId = new Map(revisions.map((r) => [r._id, r]));
    const current = byId.get(currentId) ?? any;
    const approvedCurrent = current.status === 'approved' ? current._id : null;
    const newest = byId.get(newestId);
    const counts = await queries.recordCounts(
      principal.tenantId,
      revisions.map((r) => r._id),
    );
    const summaries: RevisionSummary[] = revisions
      .map((r) => ({
        id: r._id,
        version: r.version,
        status: r.status,
        createdAt: r.audit_info.timestamp_created,
        createdBy: r.audit_info.user_id_created,
        approvedAt: r.audit_info.direct_approval_published_at,
        approvedBy: r.audit_info.direct_approval_published_by,
        isCurrent: r._id === approvedCurrent,
        recordCount: counts.get(r._id) ?? 0,
      }))
      .reverse();
    return {
      historyId,
      name: (newest ?? current).knowledge_topic_name,
      type: current.type,
      currentRevisionId: approvedCurrent,
      draftRevisionId: newest?.status === 'draft' ? newest._id : null,
      revision: current,
      fields: toColumns(buildFieldMap(current.knowledge_topic_schema).fields),
      revisions: summaries,
      recordCount: approvedCurrent ? (counts.get(approvedCurrent) ?? 0) : 0,
      approval: approvedCurrent ? await approvalOf(principal, approvedCurrent) : null,
    };
  }

  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/topics',
      {
        config: { permission: 'kt:read' },
        schema: { querystring: TopicPageQuery },
      },
      async (request): Promise<TopicList> => {
        const { principal } = signedIn(request);
        const page = await techdoc.list(principal, {
          current: true,
          name: request.query.q?.trim() || undefined,
          after: request.query.after,
          limit: TOPIC_PAGE,
        });
        const counts = await queries.recordCounts(
          principal.tenantId,
          page.items.map((r) => r._id),
        );
        const items: TopicSummary[] = page.items.map((r) => {
          const approved = r.status === 'approved';
          const hasDraft = !approved || r.latest_or_latest_approved_revision_id !== r._id;
          return {
            historyId: r.knowledge_topic_history_id,
            name: r.knowledge_topic_name,
            type: r.type,
            currentRevisionId: approved ? r._id : null,
            currentVersion: approved ? r.version : null,
            draftRevisionId: hasDraft ? r.latest_or_latest_approved_revision_id : null,
            recordCount: approved ? (counts.get(r._id) ?? 0) : 0,
            updatedAt: r.audit_info.timestamp_last_updated ?? r.audit_info.timestamp_created,
          };
        });
        items.sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }));
        return { items, next: page.next ?? null };
      },
    );

    app.get(
      '/topics/:id',
      { config: { permission: 'kt:read' }, schema: { params: IdParams } },
      async (request): Promise<TopicDetail> => {
        const { principal } = signedIn(request);
        return topicDetail(principal, request.params.id);
      },
    );

    app.post(
      '/topics',
      { config: { permission: 'kt:write' }, schema: { body: KnowledgeTopicCreate } },
      async (request, reply) => {
        const { principal } = signedIn(request);
        reply.code(201);
        return techdoc.create(principal, request.body);
      },
    );

    app.get(
      '/revisions/:id',
      { config: { permission: 'kt:read' }, schema: { params: IdParams } },
      async (request) => {
        const { principal } = signedIn(request);
        return techdoc.getRevision(principal, request.params.id);
      },
    );

    app.patch(
      '/revisions/:id',
      { config: { permission: 'kt:write' }, schema: { params: IdParams, body: KnowledgeTopicUpdate } },
      async (request) => {
        const { principal } = signedIn(request);
        return techdoc.update(principal, request.params.id, request.body);
      },
    );

    app.post(
      '/revisions/:id/draft',
      { config: { permission: 'kt:write' }, schema: { params: IdParams } },
      async (request, reply) => {
        const { principal } = signedIn(request);
        reply.code(201);
        return techdoc.openDraft(principal, request.params.id);
      },
    );

    app.get(
      '/revisions/:id/approval',
      { config: { permission: 'kt:read' }, schema: { params: IdParams } },
      async (request) => {
        const { principal } = signedIn(request);
        return techdoc.getApproval(principal, request.params.id);
      },
    );

    app.post(
      '/revisions/:id/impact',
      {
        config: { permission: 'kt:read' },
        schema: {
          params: IdParams,
          body: ApprovalImpactBody,
        },
        preValidation: absentBodyAsEmpty,
      },
      async (request): Promise<ApprovalImpact> => {
        const { principal } = signedIn(request);
        const draft = await techdoc.getRevision(principal, request.params.id);
        const schema = request.body.knowledge_topic_schema ?? draft.knowledge_topic_schema;
        // It reads every record of the topic: one of the expensive-read slots.
        return context.exportSlots.run(ExportSlots.userOf(principal), () =>
          approvalImpact(principal, draft.knowledge_topic_history_id, schema),
        );
      },
    );

    /**
     * What approving `schema` would do to the topic's records: each record of its current revision
     * checked against it, as a save would check it, so a required field added to the form is seen
     * before the records stop saving, not after. The records are read a few MB at a time, and the
     * listing gives the event loop a turn every few milliseconds of reading and checking.
     */
    async function approvalImpact(
      principal: Principal,
      historyId: string,
      schema: FormSchema,
    ): Promise<ApprovalImpact> {
      // The revision the records live under: the history's current one, when it is approved.
      const revisions = await revisionsOf(principal, historyId);
      const currentId = revisions[0]?.latest_revision_id;
      const current = revisions.find((r) => r._id === currentId && r.status === 'approved');
      const impact: ApprovalImpact = { checked: 0, failing: 0, examples: [] };
      if (!current) return impact;
      for await (const record of recordsInPages(records, principal, { revisionIds: [current._id] })) {
        impact.checked++;
        const problems = validateRecordData(schema, record.data ?? {});
        if (problems.length === 0) continue;
        impact.failing++;
        if (impact.examples.length < MAX_IMPACT_EXAMPLES)
          impact.examples.push({ id: record._id, name: record.name, problems: problems.map((p) => p.msg) });
      }
      return impact;
    }

    app.post(
      '/revisions/:id/approve',
      {
        config: { permission: 'kt:approve' },
        schema: {
          params: IdParams,
          body: ApproveBody,
        },
      },
      async (request, reply): Promise<ApprovalResult> => {
        const { principal } = signedIn(request);
        if (!(await confirmOwnPassword(context, request, reply, request.body.password, clientAddress))) {
          throw forbidden(
            'The password is wrong, so nothing was approved. Enter the password you sign in with to sign the approval.',
          );
        }
        const draft = await techdoc.getRevision(principal, request.params.id);
        const before = await revisionsOf(principal, draft.knowledge_topic_history_id);
        const previous = before.find((r) => r._id === draft.latest_revision_id && r.status === 'approved');
        const revision = await techdoc.approve(principal, draft._id, {
          meaning: request.body.meaning,
          reason: request.body.reason,
          signature: 'password',
        });
        const counts = await queries.recordCounts(principal.tenantId, [revision._id]);
        return {
          revision,
          previousRevisionId: previous?._id ?? null,
          recordsMoved: previous ? (counts.get(revision._id) ?? 0) : 0,
        };
      },
    );
  };
}
