import {
  keptOutline,
  outlineProblems,
  type OutlineEntry,
  type RecordOutline,
  type RecordOutlinePut,
  type ValidationErrorItem,
} from '@rxs/contract';
import type { Principal } from '../../auth/principal.js';
import { notFound, unprocessable, validationItem } from '../../http/errors.js';
import type { Storage } from '../../storage/database.js';
import { nowIso } from '../../storage/ids.js';
import {
  readOutlineEntries,
  readOutlineHead,
  recordTopics,
  writeOutline,
} from '../../storage/record-outline.js';
import { inTransaction } from '../../storage/transactions.js';

/** Problems a refused outline lists; past them one item counts the rest, so a 422 stays small. */
const LISTED_PROBLEMS = 1000;

/**
 * Topics' document outlines (`/records/outline/{knowledge_topic_history_id}`, contract/outline.ts):
 * read by whoever reads records, replaced whole by whoever writes them. An outline names records of
 * its topic only; reads leave out the entries of records deleted since (each left-out entry's
 * descendants one level up), which stay stored, so a restored record is back in its place.
 */
export class RecordOutlineService {
  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db;
  }

  /** The outline of a topic of the tenant: no entries and nulls before the first `PUT`; 404 for no topic of the tenant. */
  async get(principal: Principal, topicHistoryId: string): Promise<RecordOutline> {
    const { tenantId } = principal;
    await this.requireTopic(tenantId, topicHistoryId);
    const head = await readOutlineHead(this.db, tenantId, topicHistoryId);
    const stored = head ? await readOutlineEntries(this.db, tenantId, topicHistoryId) : [];
    return {
      knowledge_topic_history_id: topicHistoryId,
      entries: keptOutline(stored, (entry) => entry.live).map(({ record_id, level }) => ({
        record_id,
        level,
      })),
      updated_at: head?.updated_at ?? null,
      updated_by: head?.updated_by ?? null,
    };
  }

  /**
   * Replaces a topic's outline whole (the last of two changes at once wins). Every problem is one
   * 422 item naming its entry: a level skipped, a record named twice, an id that is no record of the
   * topic in the tenant (deleted, another topic's, another tenant's).
   */
  async replace(
    principal: Principal,
    topicHistoryId: string,
    input: RecordOutlinePut,
  ): Promise<RecordOutline> {
    const { tenantId } = principal;
    await this.requireTopic(tenantId, topicHistoryId);
    const problems: ValidationErrorItem[] = [];
    const named = input.knowledge_topic_history_id;
    if (named !== undefined && named !== topicHistoryId)
      problems.push(
        validationItem(
          ['body', 'knowledge_topic_history_id'],
          `The outline sent is the outline of topic ${named}, not of ${topicHistoryId} (the path): send it to /records/outline/${named}, or leave knowledge_topic_history_id out.`,
          'value_error',
        ),
      );
    problems.push(...outlineProblems(input.entries));
    problems.push(...(await this.recordProblems(tenantId, topicHistoryId, input.entries)));
    if (problems.length > 0) throw unprocessable(listed(problems));
    await inTransaction(this.db, (trx) =>
      writeOutline(
        trx,
        {
          tenant_id: tenantId,
          topic_history_id: topicHistoryId,
          updated_at: nowIso(),
          updated_by: principal.userId,
        },
        input.entries.map(({ record_id, level }) => ({ record_id, level })),
      ),
    );
    return this.get(principal, topicHistoryId);
  }

  /** Each entry whose record is no record of the topic in the tenant, as a 422 item. */
  private async recordProblems(
    tenantId: string,
    topicHistoryId: string,
    entries: readonly OutlineEntry[],
  ): Promise<ValidationErrorItem[]> {
    const topics = await recordTopics(this.db, tenantId, [
      ...new Set(entries.map((entry) => entry.record_id)),
    ]);
    const problems: ValidationErrorItem[] = [];
    entries.forEach(({ record_id: id }, index) => {
      const topic = topics.get(id);
      if (topic === topicHistoryId) return;
      problems.push(
        validationItem(
          ['body', 'entries', index, 'record_id'],
          topic === undefined
            ? `No record has the id ${id} in your tenant (a deleted record is in no outline until it is restored).`
            : topic === null
              ? `Record ${id} is under no knowledge topic; an outline names records of its topic.`
              : `Record ${id} is a record of another knowledge topic (history id ${topic}); an outline names records of its topic.`,
          'not_found',
        ),
      );
    });
    return problems;
  }

  /** 404 unless the id is the history id of a topic of the tenant (saying so for a revision id). */
  private async requireTopic(tenantId: string, topicHistoryId: string): Promise<void> {
    const topic = await this.db
      .selectFrom('kt_histories')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', topicHistoryId)
      .executeTakeFirst();
    if (topic) return;
    const revision = await this.db
      .selectFrom('kt_revisions')
      .select('history_id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', topicHistoryId)
      .executeTakeFirst();
    throw notFound(
      revision
        ? `${topicHistoryId} is a revision id; an outline is its topic's, named by the topic's history id ${revision.history_id} (/records/outline/${revision.history_id}), so that it stays through re-approvals.`
        : `No knowledge topic has the history id ${topicHistoryId} in your tenant.`,
    );
  }
}

/** The problems up to LISTED_PROBLEMS, then one item counting the rest. */
function listed(problems: ValidationErrorItem[]): ValidationErrorItem[] {
  if (problems.length <= LISTED_PROBLEMS) return problems;
  return [
    ...problems.slice(0, LISTED_PROBLEMS),
    validationItem(
      ['body', 'entries'],
      `… and ${problems.length - LISTED_PROBLEMS} more problems: fix these and send the outline again to see them.`,
      'too_many_problems',
    ),
  ];
}
