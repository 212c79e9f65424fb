import { sql } from 'kysely';
import type {
  Approval,
  ApprovalMeaning,
  KnowledgeTopicCreate,
  KnowledgeTopicRevision,
  KnowledgeTopicUpdate,
} from '@rxs/contract';
import type { Principal } from '../../auth/principal.js';
import { conflict, notFound } from '../../http/errors.js';
import type { Storage } from '../../storage/database.js';
import { newObjectId, nowIso } from '../../storage/ids.js';
import { inTransaction } from '../../storage/transactions.js';
import { changeActor } from '../../storage/change-actor.js';
import { moveRecords } from '../../storage/records-write.js';
import { appendRevisionVersion } from '../../storage/revisions-write.js';
import { jsonText } from '../../storage/json.js';
import type { HistoryRow, RevisionRow } from '../../storage/schema.js';
import { toKnowledgeTopicRevision } from './repository.js';

export interface TopicListQuery {
  knowledge_topic_history_id?: string;
  status?: 'draft' | 'approved';
  name?: string;
  product_history_id?: string;
  knowledge_unit_history_id?: string;
  /** Only each topic's current revision. */
  current?: boolean;
  limit: number;
  after?: string;
}

/**
 * Knowledge topics and their revisions. A topic is a history (stable id) with revisions; approving
 * a draft makes it the current revision, and re-approval moves the topic's records to it.
 */
export class TechdocService {
  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db;
  }

  /** A revision now, or with `asOf` as it was then (404 when it did not exist yet). */
  async getRevision(
    principal: Principal,
    revisionId: string,
    options: { asOf?: string } = {},
  ): Promise<KnowledgeTopicRevision> {
    if (options.asOf !== undefined) return this.revisionAsOf(principal.tenantId, revisionId, options.asOf);
    const { revision, history } = await this.loadRevision(principal.tenantId, revisionId);
    return toKnowledgeTopicRevision(revision, history);
  }

  /**
   * The revision as its latest version at `asOf` left it, with its topic's current and latest
   * revision as they were then: so an export as of a moment before a re-approval sees the old
   * revision as current, exactly as an export taken then did.
   */
  private async revisionAsOf(
    tenantId: string,
    revisionId: string,
    asOf: string,
  ): Promise<KnowledgeTopicRevision> {
    const version = await this.revisionVersions(tenantId)
      .selectAll()
      .where('revision_id', '=', revisionId)
      .where('at', '<=', asOf)
      .orderBy('n', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!version) {
      const exists = await this.revisionVersions(tenantId)
        .select('n')
        .where('revision_id', '=', revisionId)
        .executeTakeFirst();
      if (!exists) throw await this.revisionNotFound(tenantId, revisionId);
      throw notFound(`Knowledge topic revision ${revisionId} did not exist yet at ${asOf}.`);
    }
    const {
      revision_id,
      n: _n,
      at: _at,
      action: _action,
      actor_user_id: _u,
      actor_key_id: _k,
      via: _via,
      ...columns
    } = version;
    // The topic's revisions then: the one approved last before that moment (its current revision),
    // and the newest one that existed (drafts included). Revisions carried over by the upgrade to
    // history have an `approved` version only, so "newest" goes by the revision's creation time.
    const ofHistory = () =>
      this.revisionVersions(tenantId)
        .select('revision_id')
        .where('history_id', '=', version.history_id)
        .where('at', '<=', asOf)
        .limit(1);
    const current = await ofHistory()
      .where('action', '=', 'approved')
      .orderBy('at', 'desc')
      .orderBy('revision_id', 'desc')
      .executeTakeFirst();
    const latest = await ofHistory()
      .orderBy('created_at', 'desc')
      .orderBy('revision_id', 'desc')
      .executeTakeFirst();
    return toKnowledgeTopicRevision(
      { ...columns, id: revision_id },
      {
        id: version.history_id,
        tenant_id: tenantId,
        latest_revision_id: latest?.revision_id ?? revision_id,
        current_revision_id: current?.revision_id ?? null,
        lock_version: 0,
      },
    );
  }

  private revisionVersions(tenantId: string) {
    return this.db.selectFrom('kt_revision_versions').where('tenant_id', '=', tenantId);
  }

  /** Who approved a revision, when, what the signature means and how it was given; 404 for a draft. */
  async getApproval(principal: Principal, revisionId: string): Promise<Approval> {
    const { revision } = await this.loadRevision(principal.tenantId, revisionId);
    if (revision.status !== 'approved' || !revision.approved_at || !revision.approved_by) {
      throw notFound(
        `Revision ${revisionId} is not approved (it is a ${revision.status}): it has no approval yet.`,
      );
    }
    const approver = await this.db
      .selectFrom('users')
      .select('email')
      .where('id', '=', revision.approved_by)
      .executeTakeFirst();
    return {
      revision_id: revision.id,
      approved_by: revision.approved_by,
      approved_by_email: approver?.email ?? null,
      approved_at: revision.approved_at,
      meaning: (revision.approval_meaning ?? 'approved') as ApprovalMeaning,
      reason: revision.approval_reason,
      signature: (revision.approval_signature ?? 'none') as Approval['signature'],
    };
  }

  /** Revision and history rows, or the contract's 404 (naming the current revision for a history id). */
  async loadRevision(
    tenantId: string,
    revisionId: string,
  ): Promise<{ revision: RevisionRow; history: HistoryRow }> {
    const revision = await this.db
      .selectFrom('kt_revisions')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', revisionId)
      .executeTakeFirst();
    if (!revision) throw await this.revisionNotFound(tenantId, revisionId);
    const history = await this.db
      .selectFrom('kt_histories')
      .selectAll()
      .where('id', '=', revision.history_id)
      .executeTakeFirstOrThrow();
    return { revision, history };
  }

  /** The 404 for an id that is not a revision of this tenant; mixing history and revision ids is the usual cause. */
  async revisionNotFound(tenantId: string, id: string) {
    const history = await this.db
      .selectFrom('kt_histories')
      .select(['id', 'latest_revision_id', 'current_revision_id'])
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (history) {
      const current = history.current_revision_id ?? history.latest_revision_id;
      return notFound(
        `${id} is the history id of a knowledge topic, not a revision id. Use its current revision id ${current} (GET /kt/${current}, GET /records/?context__knowledge_unit_topic_id=${current}).`,
      );
    }
    return notFound(
      `Knowledge topic revision ${id} was not found. Check that it is a revision id (not a dashboard history id) of your tenant.`,
    );
  }

  async list(
    principal: Principal,
    query: TopicListQuery,
  ): Promise<{ items: KnowledgeTopicRevision[]; next?: string }> {
    let select = this.db
      .selectFrom('kt_revisions')
      .innerJoin('kt_histories', 'kt_histories.id', 'kt_revisions.history_id')
      .selectAll('kt_revisions')
      .select([
        'kt_histories.latest_revision_id as h_latest',
        'kt_histories.current_revision_id as h_current',
        'kt_histories.lock_version as h_lock',
      ])
      .where('kt_revisions.tenant_id', '=', principal.tenantId)
      .orderBy('kt_revisions.id')
      .limit(query.limit + 1);
    if (query.knowledge_topic_history_id)
      select = select.where('kt_revisions.history_id', '=', query.knowledge_topic_history_id);
    if (query.status) select = select.where('kt_revisions.status', '=', query.status);
    if (query.product_history_id)
      select = select.where('kt_revisions.product_history_id', '=', query.product_history_id);
    if (query.knowledge_unit_history_id) {
      select = select.where('kt_revisions.knowledge_unit_history_id', '=', query.knowledge_unit_history_id);
    }
    if (query.name) {
      const pattern = `%${query.name.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      // Substring match, case-insensitive; LIKE's escape character is declared for both engines.
      select = select.where(sql<boolean>`lower(${sql.ref('kt_revisions.name')}) like ${pattern} escape '\\'`);
    }
    if (query.current) {
      select = select.where((eb) =>
        eb.or([
          eb('kt_revisions.id', '=', eb.ref('kt_histories.current_revision_id')),
          eb.and([
            eb('kt_histories.current_revision_id', 'is', null),
            eb('kt_revisions.id', '=', eb.ref('kt_histories.latest_revision_id')),
          ]),
        ]),
      );
    }
    if (query.after) select = select.where('kt_revisions.id', '>', query.after);
    const rows = await select.execute();
    const page = rows.slice(0, query.limit);
    const items = page.map(({ h_latest, h_current, h_lock, ...revision }) =>
      toKnowledgeTopicRevision(revision, {
        id: revision.history_id,
        tenant_id: revision.tenant_id,
        latest_revision_id: h_latest,
        current_revision_id: h_current,
        lock_version: h_lock,
      }),
    );
    return { items, next: rows.length > query.limit ? page[page.length - 1]?.id : undefined };
  }

  async create(principal: Principal, input: KnowledgeTopicCreate): Promise<KnowledgeTopicRevision> {
    const tenant = await this.db
      .selectFrom('tenants')
      .selectAll()
      .where('id', '=', principal.tenantId)
      .executeTakeFirstOrThrow();
    const historyId = newObjectId();
    const revisionId = newObjectId();
    const now = nowIso();
    await inTransaction(this.db, async (trx) => {
      await trx
        .insertInto('kt_histories')
        .values({
          id: historyId,
          tenant_id: tenant.id,
          latest_revision_id: revisionId,
          current_revision_id: null,
        })
        .execute();
      await trx
        .insertInto('kt_revisions')
        .values({
          id: revisionId,
          tenant_id: tenant.id,
          history_id: historyId,
          name: input.knowledge_topic_name.trim(),
          type: input.type,
          version: '1.0',
          status: 'draft',
          schema: JSON.stringify(input.knowledge_topic_schema),
          data: '{}',
          product_history_id: tenant.product_history_id,
          product_version: '0.1',
          knowledge_unit_history_id: tenant.knowledge_unit_history_id,
          knowledge_unit_version: '0.1',
          source_schema_id: null,
          ...newRevisionAudit(principal.userId, now),
        })
        .execute();
      await appendRevisionVersion(trx, tenant.id, revisionId, 'created', changeActor(principal, null, now));
    });
    return this.getRevision(principal, revisionId);
  }

  async update(
    principal: Principal,
    revisionId: string,
    input: KnowledgeTopicUpdate,
  ): Promise<KnowledgeTopicRevision> {
    const { revision } = await this.loadRevision(principal.tenantId, revisionId);
    if (revision.status !== 'draft') {
      throw conflict(
        `Revision ${revisionId} is approved and cannot change. Open a draft with POST /kt/${revisionId}/draft, edit the draft, then approve it.`,
      );
    }
    const changes: Partial<RevisionRow> = {
      updated_by: principal.userId,
      updated_at: nowIso(),
      last_action: 'updated',
    };
    if (input.knowledge_topic_name !== undefined) changes.name = input.knowledge_topic_name.trim();
    if (input.knowledge_topic_schema !== undefined)
      changes.schema = JSON.stringify(input.knowledge_topic_schema);
    if (input.data !== undefined) changes.data = JSON.stringify(input.data);
    await inTransaction(this.db, async (trx) => {
      const result = await trx
        .updateTable('kt_revisions')
        .set(changes as never)
        .where('id', '=', revisionId)
        .where('tenant_id', '=', principal.tenantId)
        .where('status', '=', 'draft')
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n)
        throw conflict(`Revision ${revisionId} was approved meanwhile; open a new draft to edit it.`);
      const actor = changeActor(principal, null, changes.updated_at!);
      await appendRevisionVersion(trx, principal.tenantId, revisionId, 'updated', actor);
    });
    return this.getRevision(principal, revisionId);
  }

  /** Opens a new draft from a revision (copying its name, schema and data) under the same history id. */
  async openDraft(principal: Principal, revisionId: string): Promise<KnowledgeTopicRevision> {
    const { revision, history } = await this.loadRevision(principal.tenantId, revisionId);
    const latest = await this.db
      .selectFrom('kt_revisions')
      .select(['id', 'status', 'version'])
      .where('id', '=', history.latest_revision_id)
      .executeTakeFirstOrThrow();
    if (latest.status === 'draft') {
      throw conflict(
        `The topic already has an open draft, revision ${latest.id}. Edit that draft (PATCH /kt/${latest.id}) and approve it.`,
      );
    }
    const draftId = newObjectId();
    const now = nowIso();
    const version = `${Math.floor(Number.parseFloat(latest.version) || 0) + 1}.0`;
    await inTransaction(this.db, async (trx) => {
      const moved = await trx
        .updateTable('kt_histories')
        .set({ latest_revision_id: draftId, lock_version: history.lock_version + 1 })
        .where('id', '=', history.id)
        .where('lock_version', '=', history.lock_version)
        .executeTakeFirst();
      if (moved.numUpdatedRows === 0n)
        throw conflict('The topic changed meanwhile (another draft or approval). Reload it and retry.');
      await trx
        .insertInto('kt_revisions')
        .values({
          ...revision,
          schema: jsonText(revision.schema),
          data: jsonText(revision.data),
          id: draftId,
          version,
          status: 'draft',
          source_schema_id: revision.id,
          approval_meaning: null,
          approval_reason: null,
          approval_signature: null,
          ...newRevisionAudit(principal.userId, now),
        })
        .execute();
      await appendRevisionVersion(
        trx,
        principal.tenantId,
        draftId,
        'created',
        changeActor(principal, null, now),
      );
    });
    return this.getRevision(principal, draftId);
  }

  /**
   * Approves a draft: it becomes the topic's current revision. On a re-approval the records of the
   * topic's earlier revisions move to it, in the same transaction.
   */
  async approve(
    principal: Principal,
    revisionId: string,
    signature: ApprovalSignature = { meaning: 'approved', signature: 'api-key' },
  ): Promise<KnowledgeTopicRevision> {
    const { revision, history } = await this.loadRevision(principal.tenantId, revisionId);
    if (revision.status !== 'draft') {
      throw conflict(
        `Revision ${revisionId} is already approved. Open a draft (POST /kt/${revisionId}/draft) to change it.`,
      );
    }
    const actor = changeActor(principal, signature.reason);
    const now = actor.at;
    await inTransaction(this.db, async (trx) => {
      const claimed = await trx
        .updateTable('kt_histories')
        .set({ current_revision_id: revisionId, lock_version: history.lock_version + 1 })
        .where('id', '=', history.id)
        .where('lock_version', '=', history.lock_version)
        .executeTakeFirst();
      const approved = await trx
        .updateTable('kt_revisions')
        .set({
          status: 'approved',
          approved_at: now,
          approved_by: principal.userId,
          approval_meaning: signature.meaning,
          approval_reason: actor.reason,
          approval_signature: signature.signature,
        })
        .where('id', '=', revisionId)
        .where('status', '=', 'draft')
        .executeTakeFirst();
      if (claimed.numUpdatedRows === 0n || approved.numUpdatedRows === 0n) {
        throw conflict(
          `Revision ${revisionId} was approved or changed meanwhile. Reload the topic and retry.`,
        );
      }
      await appendRevisionVersion(trx, principal.tenantId, revisionId, 'approved', actor);
      const earlier = await trx
        .selectFrom('kt_revisions')
        .select('id')
        .where('tenant_id', '=', principal.tenantId)
        .where('history_id', '=', history.id)
        .where('id', '!=', revisionId)
        .execute();
      await moveRecords(
        trx,
        principal.tenantId,
        earlier.map((row) => row.id),
        revisionId,
        { ...actor, reason: `re-approval: revision ${revisionId} (${revision.version}) became current` },
      );
    });
    return this.getRevision(principal, revisionId);
  }
}

/** What an approver's signature says and how they proved who they were (see contract/history.ts). */
export interface ApprovalSignature {
  meaning: ApprovalMeaning;
  reason?: string | null;
  signature: 'password' | 'api-key';
}

/** The audit columns of a revision that was just created and is neither edited nor approved yet. */
function newRevisionAudit(userId: string, at: string) {
  return {
    created_by: userId,
    created_at: at,
    updated_by: null,
    updated_at: null,
    last_action: 'created',
    approved_by: null,
    approved_at: null,
  };
}
