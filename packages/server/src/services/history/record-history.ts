import type { RecordVersion } from '@rxs/sdk';
import type { Selectable } from 'kysely';
import type { Principal } from '../../auth/principal.js';
import { notFound } from '../../http/errors.js';
import type { Storage } from '../../storage/database.js';
import type { RecordVersionTable } from '../../storage/schema.js';
import { toServiceRecord } from '../records/repository.js';

type VersionRow = Selectable<RecordVersionTable> & { user_email: string | null };

/** One version as the API shows it: who, when, why, and the whole record as the change left it. */
function toRecordVersion(row: VersionRow): RecordVersion {
  const { record_id, n, action, at, actor_user_id, actor_key_id, via, reason, user_email, ...record } = row;
  return {
    record_id,
    n: Number(n),
    action: action as RecordVersion['action'],
    at,
    user_id: actor_user_id,
    user_email,
    key_id: actor_key_id,
    via: via as RecordVersion['via'],
    reason,
    record: toServiceRecord({ ...record, id: record_id }),
  };
}

/**
 * The audit trail of records (`GET /records/{id}/versions`): read only, as history is. A deleted
 * record's versions stay readable; another tenant's record is a 404 like any unknown one.
 */
export class RecordHistoryService {
  constructor(private readonly storage: Storage) {}

  private versions(tenantId: string, recordId: string) {
    return this.storage.db
      .selectFrom('record_versions as v')
      .leftJoin('users as u', 'u.id', 'v.actor_user_id')
      .selectAll('v')
      .select('u.email as user_email')
      .where('v.tenant_id', '=', tenantId)
      .where('v.record_id', '=', recordId);
  }

  /** Newest first; `before` is the `n` of the last version of the previous page. */
  async listVersions(
    principal: Principal,
    recordId: string,
    page: { limit: number; before?: number },
  ): Promise<{ items: RecordVersion[]; next?: number }> {
    let query = this.versions(principal.tenantId, recordId)
      .orderBy('v.n', 'desc')
      .limit(page.limit + 1);
    if (page.before !== undefined) query = query.where('v.n', '<', page.before);
    const rows = (await query.execute()) as VersionRow[];
    if (rows.length === 0 && page.before === undefined) throw this.unknown(recordId);
    const items = rows.slice(0, page.limit).map(toRecordVersion);
    return { items, next: rows.length > page.limit ? items[items.length - 1]!.n : undefined };
  }

  async getVersion(principal: Principal, recordId: string, n: number): Promise<RecordVersion> {
    const row = (await this.versions(principal.tenantId, recordId)
      .where('v.n', '=', n)
      .executeTakeFirst()) as VersionRow | undefined;
    if (row) return toRecordVersion(row);
    const any = await this.versions(principal.tenantId, recordId).select('v.n').limit(1).executeTakeFirst();
    if (!any) throw this.unknown(recordId);
    throw notFound(
      `Record ${recordId} has no version ${n}. List its versions with GET /records/${recordId}/versions.`,
    );
  }

  private unknown(recordId: string) {
    return notFound(`Record ${recordId} was not found: it never existed in your tenant.`);
  }
}
