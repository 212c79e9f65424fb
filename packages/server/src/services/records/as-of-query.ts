import { sql } from 'kysely';
import type { Storage } from '../../storage/database.js';
import { unindexed } from '../../storage/unindexed.js';
import { auditDateCondition, type RecordFilter } from './filter.js';

/** The columns of a record row, taken from its version (a version holds the whole record). */
const RECORD_COLUMNS = [
  'v.record_id as id',
  'v.tenant_id',
  'v.kt_revision_id',
  'v.name',
  'v.form',
  'v.version',
  'v.data',
  'v.read_only',
  'v.context',
  'v.created_by',
  'v.created_at',
  'v.updated_by',
  'v.updated_at',
  'v.last_action',
] as const;

/**
 * The records of a listing as they were at `asOf`: for each record, its latest version at or
 * before that moment, unless that version is its deletion. Every filter of the listing applies to
 * the record as it was then (its revision id then, its audit dates then), ordered by id for
 * keyset paging. Rows have the shape of `records` rows, so listings serialise them as usual.
 */
export function recordsAsOfQuery(storage: Storage, tenantId: string, filter: RecordFilter, asOf: string) {
  // `at` stays out of SQLite's index choice (see unindexed): the listing walks the as-of index
  // (tenant, revision, record, n) in id order and streams; the inner lookup uses the primary key.
  let query = storage.db
    .selectFrom('record_versions as v')
    .select(RECORD_COLUMNS)
    .where('v.tenant_id', '=', tenantId)
    .where(sql<boolean>`${unindexed(storage, 'v.at')} <= ${asOf}`)
    .where('v.action', '!=', 'deleted')
    // The latest version at that moment. Version numbers of a record id never repeat, even across
    // tenants (see insertRecords), so the record id alone finds them.
    .where(
      'v.n',
      '=',
      sql<number>`(SELECT max(w.n) FROM record_versions w WHERE w.record_id = v.record_id AND ${unindexed(storage, 'w.at')} <= ${asOf})`,
    )
    .orderBy('v.record_id');
  if (filter.revisionIds) query = query.where('v.kt_revision_id', 'in', filter.revisionIds);
  if (filter.ids) query = query.where('v.record_id', 'in', filter.ids);
  if (filter.after) query = query.where('v.record_id', '>', filter.after);
  if (filter.startDate || filter.endDate)
    query = query.where((eb) => auditDateCondition(eb, filter, 'v.created_at', 'v.updated_at'));
  if (filter.limit !== undefined) query = query.limit(filter.limit);
  return query;
}
