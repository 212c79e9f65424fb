import { sql, type RawBuilder } from 'kysely';
import type { SqlSyntax, Storage } from '../../storage/database.js';
import { CHUNK_BYTES } from '../../http/json-array-stream.js';
import { eventLoopSlices } from '@rxs/exchange/export';
import { ITEM_OVERHEAD_BYTES } from '../../http/page-bytes.js';
import { auditDateCondition, type RecordFilter } from './filter.js';
import { recordJsonSql } from './repository.js';

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
 * About the bytes of a stored record's JSON (of a `record_versions` or `records` row under
 * `alias`), without reading its values (SQLite's octet_length() takes a text's length from the row
 * header, so a 2 MB record costs no page read). What pages are cut by before they are read.
 */
export function storedRecordBytes(syntax: SqlSyntax, alias: string): RawBuilder<number> {
  const column = (name: string) => syntax.asText(sql.ref(`${alias}.${name}`));
  const length = (name: string) => sql`coalesce(octet_length(${column(name)}), 0)`;
  return sql<number>`(${length('name')} + ${length('form')} + ${length('data')} + ${length('context')} + ${ITEM_OVERHEAD_BYTES})`;
}

/**
 * The records of a listing as they were at `asOf`, without a selection yet: for each record, its
 * latest version at or before that moment, unless that version is its deletion. Every filter of the
 * listing applies to the record as it was then (its revision id then, its audit dates then),
 * ordered by id for keyset paging.
 */
function asOfRows(storage: Storage, tenantId: string, filter: RecordFilter, asOf: string) {
  // `at` stays out of the planner's index choice (SqlSyntax.unindexed): the listing walks the as-of
  // index (tenant, revision, record, n) in id order and streams; the inner lookup uses the primary key.
  const unindexed = storage.syntax.unindexed;
  let query = storage.db
    .selectFrom('record_versions as v')
    .where('v.tenant_id', '=', tenantId)
    .where(sql<boolean>`${unindexed('v.at')} <= ${asOf}`)
    .where('v.action', '!=', 'deleted')
    // The latest version at that moment. Version numbers of a record id never repeat, even across
    // tenants (see insertRecords), so the record id alone finds them.
    .where(
      'v.n',
      '=',
      sql<number>`(SELECT max(w.n) FROM record_versions w WHERE w.record_id = v.record_id AND ${unindexed('w.at')} <= ${asOf})`,
    )
    .orderBy('v.record_id');
  if (filter.revisionIds) query = query.where('v.kt_revision_id', 'in', filter.revisionIds);
  if (filter.ids) query = query.where('v.record_id', 'in', filter.ids);
  if (filter.globalElementId !== undefined)
    query = query.where(
      storage.syntax.jsonTextOf('v.context', 'global_element_id'),
      '=',
      filter.globalElementId,
    );
  if (filter.after) query = query.where('v.record_id', '>', filter.after);
  if (filter.startDate || filter.endDate)
    query = query.where((eb) => auditDateCondition(eb, filter, 'v.created_at', 'v.updated_at'));
  if (filter.limit !== undefined) query = query.limit(filter.limit);
  return query;
}

/** The as-of rows with the columns of `records` rows, so listings serialise them as usual. */
export function recordsAsOfQuery(storage: Storage, tenantId: string, filter: RecordFilter, asOf: string) {
  return asOfRows(storage, tenantId, filter, asOf).select(RECORD_COLUMNS);
}

/** The ids of the as-of rows with about the bytes of each one's JSON (storedRecordBytes), in order. */
export function recordsAsOfSizes(storage: Storage, tenantId: string, filter: RecordFilter, asOf: string) {
  return asOfRows(storage, tenantId, filter, asOf).select([
    'v.record_id as id',
    storedRecordBytes(storage.syntax, 'v').as('bytes'),
  ]);
}

/**
 * The JSON lines (`recordJson`'s, built by the database) of the as-of rows, `count` of them at most,
 * from one statement (one snapshot), fetched as rows that may weigh megabytes
 * (Storage.largeRowsPerFetch), in batches of about CHUNK_BYTES (one line when a line is larger):
 * memory holds a batch, never the listing, whatever the records weigh. The event loop gets a turn
 * every few milliseconds.
 */
export async function* recordsAsOfLines(
  storage: Storage,
  tenantId: string,
  filter: RecordFilter,
  asOf: string,
  count = Infinity,
): AsyncGenerator<string[]> {
  if (count <= 0) return;
  const known = {
    tenantId,
    revisionId: filter.revisionIds?.length === 1 ? filter.revisionIds[0] : undefined,
  };
  const line = recordJsonSql(storage.syntax, '', known);
  const limit = Number.isFinite(count) ? count : undefined;
  const query = storage.db
    .selectFrom(recordsAsOfQuery(storage, tenantId, { ...filter, limit }, asOf).as('r'))
    .select(line.as('line'))
    .orderBy('id')
    .compile();
  const turn = eventLoopSlices();
  let batch: string[] = [];
  let bytes = 0;
  for await (const rows of storage.streamBatches<{ line: string }>(query, storage.largeRowsPerFetch)) {
    for (const row of rows) {
      batch.push(row.line);
      bytes += row.line.length;
    }
    if (bytes >= CHUNK_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    const pause = turn();
    if (pause) await pause;
  }
  if (batch.length > 0) yield batch;
}
