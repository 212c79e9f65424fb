import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import {
  answeredRecord,
  cutoff,
  deletionOf,
  KEPT_COLUMNS,
  keptAnswer,
  recordVersions,
  slices,
  type KeptAnswer,
  type KeptRow,
  type RecordDeletion,
} from './idempotency-keys.js';

/**
 * Idempotency keys read many at a time, for a batch of writes each under its own key
 * (`POST /records/bulk`): the same table and the same rules as one key (idempotency-keys.ts, which
 * also keeps their answers), in a few statements for the whole batch instead of a few for each write.
 */

/**
 * The answers kept for these keys within their 24 hours, by key, each as `findAnswer` gives it:
 * with `deleted` when the answer is a record of the tenant that has been deleted since.
 */
export async function findAnswers(
  db: Kysely<Database>,
  tenantId: string,
  keys: readonly string[],
): Promise<Map<string, KeptAnswer>> {
  const stored = new Map<string, KeptRow>();
  const since = cutoff();
  for (const slice of slices([...new Set(keys)])) {
    const rows = await db
      .selectFrom('idempotency_keys')
      .select(['key', ...KEPT_COLUMNS])
      .where('tenant_id', '=', tenantId)
      .where('key', 'in', slice)
      .where('created_at', '>=', since)
      .execute();
    for (const { key, ...kept } of rows) stored.set(key, kept);
  }
  const versions = await recordVersions(db, tenantId, [...stored.values()]);
  const found = new Map<string, KeptAnswer>();
  const recordOf = new Map<string, string>();
  for (const [key, row] of stored) {
    found.set(key, keptAnswer(row, versions));
    const recordId = answeredRecord(row);
    if (recordId !== undefined) recordOf.set(key, recordId);
  }
  const deletions = await deletionsOf(db, tenantId, [...new Set(recordOf.values())]);
  for (const [key, recordId] of recordOf) {
    const deleted = deletions.get(recordId);
    if (deleted) found.set(key, { ...found.get(key)!, deleted });
  }
  return found;
}

/**
 * The deletions of those of these records that are not there now, by record id. One read of the
 * present ids for all; only a record that is gone costs a read of its newest version.
 */
export async function deletionsOf(
  db: Kysely<Database>,
  tenantId: string,
  recordIds: readonly string[],
): Promise<Map<string, RecordDeletion>> {
  const present = new Set<string>();
  for (const slice of slices(recordIds)) {
    const rows = await db
      .selectFrom('records')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', slice)
      .execute();
    for (const row of rows) present.add(row.id);
  }
  const deletions = new Map<string, RecordDeletion>();
  for (const recordId of recordIds) {
    if (present.has(recordId)) continue;
    const deleted = await deletionOf(db, tenantId, recordId);
    if (deleted) deletions.set(recordId, deleted);
  }
  return deletions;
}
