import type { Storage } from '../../storage/database.js';
import { entityTag } from '../../http/conditional.js';
import type { RecordFilter } from './filter.js';

/** Raised when the JSON text of listings changes (a field, an order): tags given before stop matching. */
const LISTING_FORMAT = 1;

/**
 * The ETag of a records listing, from the tenant, the listing's filter and how often the records
 * under the revisions it covers have changed (storage/migrations/004_listing_tags.ts), without
 * reading a record: a change of a record under a listed revision (create, change, delete, restore,
 * the move of a re-approval) changes it; reads, traces, topics and other revisions do not. A
 * listing without a revision filter covers all of the tenant's revisions. A filtered listing (dates,
 * ids, a page) changes its tag with any change under its revisions, also one outside the filter.
 */
export async function recordListingTag(
  storage: Storage,
  tenantId: string,
  filter: RecordFilter,
  /** With `with_revision`: the listed revisions as `GET /kt/{id}` shows them, which the tag then covers. */
  revisions?: unknown[],
): Promise<string> {
  const scopes = filter.revisionIds?.length ? [...new Set(filter.revisionIds)].sort() : undefined;
  let query = storage.db
    .selectFrom('record_listing_tags')
    .select(['kt_revision_id', 'changes'])
    .where('tenant_id', '=', tenantId);
  if (scopes) query = query.where('kt_revision_id', 'in', scopes);
  const rows = await query.orderBy('kt_revision_id').execute();
  const changes = new Map(rows.map((row) => [row.kt_revision_id, Number(row.changes)]));
  const counted = scopes
    ? scopes.map((id) => [id, changes.get(id) ?? 0])
    : rows.map((row) => [row.kt_revision_id, Number(row.changes)]);
  const { revisionIds, ids, globalElementId, startDate, endDate, includeUpdated, after, limit, asOf } =
    filter;
  return entityTag([
    LISTING_FORMAT,
    tenantId,
    revisionIds ?? null,
    ids ?? null,
    startDate ?? null,
    endDate ?? null,
    includeUpdated ?? false,
    after ?? null,
    limit ?? null,
    asOf ?? null,
    counted,
    ...(revisions ? [revisions] : []),
    // An object, never an array: it cannot be taken for `revisions`, and other listings keep their tags.
    ...(globalElementId !== undefined ? [{ globalElementId }] : []),
  ]);
}
