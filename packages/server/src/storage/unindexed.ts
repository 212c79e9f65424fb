import { sql, type RawBuilder } from 'kysely';
import type { Storage } from './database.js';

/**
 * A column reference SQLite will not choose an index by (a unary `+`, SQLite's documented way).
 * History reads filter on `at <= ?`, and SQLite's planner would take an index on (tenant_id, at) for
 * it: the tenant's whole history, sorted before the first row and scanned again by every inner
 * lookup (minutes at 200 000 records). Kept out of index choice, `at` leaves the planner the
 * indexes that follow the query (revision, record, node). PostgreSQL plans by cost: a plain column.
 */
export function unindexed(
  storage: Pick<Storage, 'dialect'>,
  column: `${string}.${string}`,
): RawBuilder<unknown> {
  const ref = column
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
  return sql.raw(storage.dialect === 'sqlite' ? `+${ref}` : ref);
}
