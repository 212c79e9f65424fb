import type { Kysely } from 'kysely';

/**
 * An idempotency key's answer may be kept as the record version it is instead of its text: a bulk
 * item's create answers its record as first written (`recordJson` of that row), which its version
 * in `record_versions` holds as written, so `record_id` and `record_n` name it and `body` stays
 * empty ('') — a record's answer then costs a reference, not a second copy of the record. Answers
 * kept before, and all others, keep their text in `body` and NULL here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('record_id', 'text').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('record_n', 'integer').execute();
}
