import type { Kysely } from 'kysely';

/**
 * Idempotency keys (`Idempotency-Key` on `POST /records/` and `PATCH /records/{id}`): the first
 * successful answer to a key, written in the transaction of the change it answers, so a retry after
 * a crash or a lost answer finds it and never writes twice. Kept 24 hours.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    /** What was asked: method, path and body (http/idempotency.ts). */
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['tenant_id', 'key'])
    .execute();
  await db.schema
    .createIndex('idempotency_keys_by_age')
    .on('idempotency_keys')
    .column('created_at')
    .execute();
}
