import { sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';

/**
 * The next auto-number of a topic and name prefix, in the caller's transaction: an atomic increment
 * of the counter (storage/migrations/008_record_numbers.ts), so concurrent creates never share a
 * number and a deleted record's number is never given again. The first number of a prefix follows
 * the highest `PREFIX-N` already among the topic's record names (records numbered before the
 * counter existed, or named by hand).
 */
export async function nextRecordNumber(
  trx: Transaction<Database>,
  tenantId: string,
  historyId: string,
  prefix: string,
): Promise<number> {
  const counter = await trx
    .selectFrom('record_numbers')
    .select('last')
    .where('tenant_id', '=', tenantId)
    .where('history_id', '=', historyId)
    .where('prefix', '=', prefix)
    .executeTakeFirst();
  const seed = counter ? 0 : await highestInUse(trx, tenantId, historyId, prefix);
  const taken = await trx
    .insertInto('record_numbers')
    .values({ tenant_id: tenantId, history_id: historyId, prefix, last: seed + 1 })
    .onConflict((conflict) =>
      conflict
        .columns(['tenant_id', 'history_id', 'prefix'])
        .doUpdateSet({ last: sql<number>`record_numbers.last + 1` }),
    )
    .returning('last')
    .executeTakeFirstOrThrow();
  return Number(taken.last);
}

/** The highest N of the topic's records named `PREFIX-N`, or 0. */
async function highestInUse(
  trx: Transaction<Database>,
  tenantId: string,
  historyId: string,
  prefix: string,
): Promise<number> {
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}-%`;
  const rows = await trx
    .selectFrom('records')
    .select('name')
    .where('tenant_id', '=', tenantId)
    .where('kt_revision_id', 'in', (eb) =>
      eb
        .selectFrom('kt_revisions')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('history_id', '=', historyId),
    )
    .where(sql<boolean>`${sql.ref('name')} like ${pattern} escape '\\'`)
    .execute();
  let highest = 0;
  for (const { name } of rows) {
    const suffix = name.slice(prefix.length + 1);
    if (/^\d{1,15}$/.test(suffix)) highest = Math.max(highest, Number(suffix));
  }
  return highest;
}
