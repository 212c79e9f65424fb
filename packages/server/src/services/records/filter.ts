import type { ExpressionBuilder, ExpressionWrapper, SqlBool } from 'kysely';

/** What a records listing selects (the query parameters of `GET /records/`). */
export interface RecordFilter {
  revisionIds?: string[];
  ids?: string[];
  /** `context.global_element_id`, exactly: the record's identity in the source it was imported from. */
  globalElementId?: string;
  startDate?: string;
  endDate?: string;
  includeUpdated?: boolean;
  after?: string;
  limit?: number;
  /** Read the records as they were at this moment (normalised ISO text; see history/as-of.ts). */
  asOf?: string;
  /** RXS: the listing's ETag also covers the listed revisions themselves (`with_revision`). */
  withRevision?: boolean;
}

/**
 * The revision of a listing that is exactly one revision's records, now (no other filter, page or
 * moment), or undefined: such a listing is what exports download, and what the listing cache keeps.
 */
export function wholeRevision(filter: RecordFilter): string | undefined {
  const { revisionIds, ids, globalElementId, startDate, endDate, after, limit, asOf } = filter;
  if (
    revisionIds?.length !== 1 ||
    ids ||
    globalElementId !== undefined ||
    startDate ||
    endDate ||
    after ||
    limit !== undefined ||
    asOf
  )
    return undefined;
  return revisionIds[0];
}

/**
 * The audit date range of a listing: creation within it, or (with includeUpdated) the last update
 * too. Columns are named by the caller, so the present listing and the as-of one share it.
 */
export function auditDateCondition<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  filter: RecordFilter,
  created: string,
  updated: string,
): ExpressionWrapper<DB, TB, SqlBool> {
  const { startDate, endDate, includeUpdated } = filter;
  const within = (column: string) =>
    eb.and([
      ...(startDate ? [eb(eb.ref(column as never), '>=', startDate as never)] : []),
      ...(endDate ? [eb(eb.ref(column as never), '<=', endDate as never)] : []),
    ]);
  return includeUpdated ? eb.or([within(created), within(updated)]) : within(created);
}
