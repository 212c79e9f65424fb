import {
  isNoChange,
  traceModelChanges,
  traceModelProblems,
  type ChangeAuthor,
  type TraceModel,
  type TraceModelChanges,
  type TraceModelPut,
  type TraceModelVersion,
  type TraceRole,
  type ValidationErrorItem,
} from '@rxs/contract';
import type { Principal } from '../../auth/principal.js';
import { conflict, unprocessable } from '../../http/errors.js';
import { changeActor } from '../../storage/change-actor.js';
import { isUniqueViolation } from '../../storage/constraints.js';
import type { Storage } from '../../storage/database.js';
import { jsonValue } from '../../storage/json.js';
import { inTransaction } from '../../storage/transactions.js';
import {
  newestTraceModelVersion,
  readTraceRoles,
  traceModelVersions,
  writeTraceModel,
  type StoredTraceRole,
} from '../../storage/trace-model.js';

/** What an answer shows beside a topic's history id. */
interface TopicFacts {
  name: string | null;
  currentRevisionId: string | null;
}

function roleOfRow(row: StoredTraceRole, topics?: ReadonlyMap<string, TopicFacts>): TraceRole {
  const end = (historyId: string) => {
    const facts = topics?.get(historyId);
    return topics
      ? {
          topic_history_id: historyId,
          topic_name: facts?.name ?? null,
          current_revision_id: facts?.currentRevisionId ?? null,
        }
      : { topic_history_id: historyId };
  };
  return {
    id: row.id,
    forward_name: row.forward_name,
    backward_name: row.backward_name,
    from: end(row.from_topic_history_id),
    to: end(row.to_topic_history_id),
    trace_source: row.trace_source as TraceRole['trace_source'],
    relation_type: row.relation_type as TraceRole['relation_type'],
  };
}

function rowOfRole(role: TraceRole): StoredTraceRole {
  return {
    id: role.id,
    forward_name: role.forward_name.trim(),
    backward_name: role.backward_name.trim(),
    from_topic_history_id: role.from.topic_history_id,
    to_topic_history_id: role.to.topic_history_id,
    trace_source: role.trace_source,
    relation_type: role.relation_type,
  };
}

const ENDS = ['from', 'to'] as const;

/**
 * The tenant's trace model (`/trace-model`): read by anyone who reads traces, replaced whole by
 * owners and admins, each change a version of its history. Roles refer to topics by history id;
 * answers show each topic's current name and revision beside it, as they are at the moment of asking.
 */
export class TraceModelService {
  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db;
  }

  async get(principal: Principal): Promise<TraceModel> {
    const [rows, newest] = [
      await readTraceRoles(this.db, principal.tenantId),
      await newestTraceModelVersion(this.db, principal.tenantId),
    ];
    const topics = await this.topicFacts(
      principal.tenantId,
      rows.flatMap((row) => [row.from_topic_history_id, row.to_topic_history_id]),
    );
    return {
      version: newest?.version ?? 0,
      roles: rows.map((row) => roleOfRow(row, topics)),
      updated_at: newest?.at ?? null,
      updated_by: newest?.actor_user_id ?? null,
    };
  }

  /**
   * Replaces the whole model, if it is still at `input.version`: every problem of the roles is one
   * 422 item (duplicate ids, names that do not tell roles apart, unknown topics, ...); a model that
   * moved on since is 409. A model equal to the present one (names beside topics aside) changes
   * nothing and adds no version.
   */
  async replace(principal: Principal, input: TraceModelPut): Promise<TraceModel> {
    const { tenantId } = principal;
    const problems = [
      ...traceModelProblems(input.roles),
      ...(await this.topicProblems(tenantId, input.roles)),
    ];
    if (problems.length > 0) throw unprocessable(problems);
    // As stored: names trimmed, nothing beside the topics' ids.
    const after = input.roles.map((role) => roleOfRow(rowOfRole(role)));
    try {
      await inTransaction(this.db, async (trx) => {
        const current = (await newestTraceModelVersion(trx, tenantId))?.version ?? 0;
        if (current !== input.version) throw stale(current, input.version);
        const before = (await readTraceRoles(trx, tenantId)).map((row) => roleOfRow(row));
        const changes = traceModelChanges(before, after);
        if (isNoChange(changes)) return;
        await writeTraceModel(
          trx,
          tenantId,
          current + 1,
          after.map(rowOfRole),
          changes,
          changeActor(principal, input.change_reason),
        );
      });
    } catch (error) {
      if (isUniqueViolation(error))
        throw conflict(
          `The trace model changed meanwhile: another change based on version ${input.version} came first. Read it again (GET /trace-model), apply your change to it and send its version.`,
        );
      throw error;
    }
    return this.get(principal);
  }

  /** The model's versions, newest first: at most `limit`, older than version `before` if given. */
  async history(principal: Principal, limit: number, before?: number): Promise<TraceModelVersion[]> {
    const rows = await traceModelVersions(this.db, principal.tenantId, limit, before);
    return rows.map((row) => ({
      version: row.version,
      changes: jsonValue<TraceModelChanges>(row.changes),
      roles: jsonValue<StoredTraceRole[]>(row.roles).map((stored) => roleOfRow(stored)),
      at: row.at,
      user_id: row.actor_user_id,
      user_email: row.user_email,
      key_id: row.actor_key_id,
      via: row.via as ChangeAuthor['via'],
      reason: row.reason,
    }));
  }

  /** Each role end whose topic is no topic of the tenant, as a 422 item (naming the history id of a revision id given instead). */
  private async topicProblems(tenantId: string, roles: readonly TraceRole[]): Promise<ValidationErrorItem[]> {
    const ids = roles.flatMap((role) => ENDS.map((end) => role[end].topic_history_id));
    const known = await this.topicFacts(tenantId, ids);
    const unknown = [...new Set(ids.filter((id) => !known.has(id)))];
    const historyOfRevision = new Map<string, string>();
    if (unknown.length > 0) {
      const revisions = await this.db
        .selectFrom('kt_revisions')
        .select(['id', 'history_id'])
        .where('tenant_id', '=', tenantId)
        .where('id', 'in', unknown)
        .execute();
      for (const revision of revisions) historyOfRevision.set(revision.id, revision.history_id);
    }
    const problems: ValidationErrorItem[] = [];
    roles.forEach((role, index) => {
      for (const end of ENDS) {
        const id = role[end].topic_history_id;
        if (known.has(id)) continue;
        const history = historyOfRevision.get(id);
        problems.push({
          loc: ['body', 'roles', index, end, 'topic_history_id'],
          msg: history
            ? `${id} is a revision id; a role names its topic by the topic's history id, ${history}, so that a re-approval does not break it.`
            : `No knowledge topic has the history id ${id} in your tenant.`,
          type: 'not_found',
        });
      }
    });
    return problems;
  }

  /** The tenant's topics among `historyIds`, each with its current name and revision. */
  private async topicFacts(
    tenantId: string,
    historyIds: readonly string[],
  ): Promise<Map<string, TopicFacts>> {
    const unique = [...new Set(historyIds)];
    const facts = new Map<string, TopicFacts>();
    if (unique.length === 0) return facts;
    const rows = await this.db
      .selectFrom('kt_histories as h')
      .leftJoin('kt_revisions as c', 'c.id', 'h.current_revision_id')
      .innerJoin('kt_revisions as l', 'l.id', 'h.latest_revision_id')
      .select(['h.id', 'h.current_revision_id', 'c.name as current_name', 'l.name as latest_name'])
      .where('h.tenant_id', '=', tenantId)
      .where('h.id', 'in', unique)
      .execute();
    for (const row of rows)
      facts.set(row.id, {
        name: row.current_name ?? row.latest_name,
        currentRevisionId: row.current_revision_id,
      });
    return facts;
  }
}

function stale(current: number, given: number) {
  return conflict(
    `The trace model is at version ${current}, not ${given}: it changed since you read it. Read it again (GET /trace-model), apply your change to it and send version ${current}.`,
  );
}
