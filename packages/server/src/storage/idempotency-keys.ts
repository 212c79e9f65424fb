import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** How long a key's answer is kept: a retry within this time gets it again. */
export const IDEMPOTENCY_KEY_HOURS = 24;

/** A request that carries an `Idempotency-Key`, and what it asked (see http/idempotency.ts). */
export interface IdempotentRequest {
  key: string;
  fingerprint: string;
}

export interface KeptAnswer {
  fingerprint: string;
  status: number;
  body: string;
}

const cutoff = (now = Date.now()) => new Date(now - IDEMPOTENCY_KEY_HOURS * 3_600_000).toISOString();

/** The answer kept for a key within its 24 hours, or undefined. */
export async function findAnswer(
  db: Kysely<Database>,
  tenantId: string,
  key: string,
): Promise<KeptAnswer | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status', 'body'])
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .where('created_at', '>=', cutoff())
    .executeTakeFirst();
}

/**
 * Keeps the answer to a key, in the transaction of the change it answers: both commit or neither.
 * A key already kept (a concurrent request with the same key committed first) makes the insert
 * fail with a unique violation, which rolls the change back; the caller then answers the kept one.
 * Expired keys go first: this key's, so it can be used again, and a few others'.
 */
export async function keepAnswer(
  trx: Transaction<Database>,
  tenantId: string,
  request: IdempotentRequest,
  status: number,
  body: string,
  at: string,
): Promise<void> {
  const expired = cutoff(Date.parse(at));
  await trx
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', tenantId)
    .where('key', '=', request.key)
    .where('created_at', '<', expired)
    .execute();
  await trx
    .deleteFrom('idempotency_keys')
    .where((eb) =>
      eb(
        eb.refTuple('tenant_id', 'key'),
        'in',
        eb
          .selectFrom('idempotency_keys')
          .select(['tenant_id', 'key'])
          .where('created_at', '<', expired)
          .limit(100)
          .$asTuple('tenant_id', 'key'),
      ),
    )
    .execute();
  await trx
    .insertInto('idempotency_keys')
    .values({
      tenant_id: tenantId,
      key: request.key,
      fingerprint: request.fingerprint,
      status,
      body,
      created_at: at,
    })
    .execute();
}
