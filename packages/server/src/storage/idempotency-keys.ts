import type { Kysely, Transaction } from 'kysely';
import { eventLoopSlices } from '@rxs/exchange/export';
import type { Database } from './schema.js';
import { statementBatches } from './statement-batches.js';

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
  /** The record the answer is, when it has been deleted since (its last version is a deletion). */
  deleted?: RecordDeletion;
}

/** Which record was deleted, when, by whom and why, as its history says. */
export interface RecordDeletion {
  recordId: string;
  at: string;
  /** The deleting user's e-mail (null for a user no longer known). */
  by: string | null;
  reason: string | null;
}

/** The `_id` of an answer that is a record: the service writes it first (repository.ts recordJson). */
export const RECORD_ANSWER = /^\{"_id":"([0-9a-f]{24})"/;

export const cutoff = (now = Date.now()) => new Date(now - IDEMPOTENCY_KEY_HOURS * 3_600_000).toISOString();

/**
 * The answer kept for a key within its 24 hours, or undefined; with `deleted` when the answer is a
 * record of the tenant whose last version is its deletion. Every change of a record appends its
 * version in the change's own transaction (records-write.ts), so that one read of the newest
 * version says whether the record is there now: a replay answers as of that read.
 */
export async function findAnswer(
  db: Kysely<Database>,
  tenantId: string,
  key: string,
): Promise<KeptAnswer | undefined> {
  const kept = await db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status', 'body'])
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .where('created_at', '>=', cutoff())
    .executeTakeFirst();
  const recordId = kept && kept.status < 300 ? RECORD_ANSWER.exec(kept.body)?.[1] : undefined;
  if (!kept || recordId === undefined) return kept;
  const deleted = await deletionOf(db, tenantId, recordId);
  return deleted ? { ...kept, deleted } : kept;
}

/** The record's deletion when its newest version is one (it is not there now), else undefined. */
export async function deletionOf(
  db: Kysely<Database>,
  tenantId: string,
  recordId: string,
): Promise<RecordDeletion | undefined> {
  const last = await db
    .selectFrom('record_versions as v')
    .leftJoin('users as u', 'u.id', 'v.actor_user_id')
    .select(['v.action', 'v.at', 'v.reason', 'u.email'])
    .where('v.tenant_id', '=', tenantId)
    .where('v.record_id', '=', recordId)
    .orderBy('v.n', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (last?.action !== 'deleted') return undefined;
  return { recordId, at: last.at, by: last.email, reason: last.reason };
}

/** Keys (and record ids) per `IN (...)` list: well under SQLite's bound parameters. */
const LIST_BATCH = 500;

/** The items in lists short enough for one `IN (...)` each. */
export function* slices<T>(items: readonly T[]): Generator<T[]> {
  for (let start = 0; start < items.length; start += LIST_BATCH) yield items.slice(start, start + LIST_BATCH);
}

/** One answer to keep: the key's request, and the answer's status and JSON text. */
export interface AnswerToKeep {
  request: IdempotentRequest;
  status: number;
  body: string;
}

/**
 * Keeps answers under their keys, in the transaction of the change they answer: both commit or
 * neither. A key already kept (a concurrent request with the same key committed first) makes the
 * insert fail with a unique violation, which rolls the change back; the caller then answers the
 * kept one. Expired keys go first: these keys', so they can be used again, and a few others'.
 * One write's answer or a batch's (`POST /records/bulk`) alike: a few statements for all, each of
 * bounded size, with a turn of the event loop (`turn`, shared with the caller's work) between
 * them when one is due.
 */
export async function keepAnswers(
  trx: Transaction<Database>,
  tenantId: string,
  answers: readonly AnswerToKeep[],
  at: string,
  turn = eventLoopSlices(),
): Promise<void> {
  if (answers.length === 0) return;
  const expired = cutoff(Date.parse(at));
  for (const slice of statementBatches(answers, (answer) => answer.body.length)) {
    await trx
      .deleteFrom('idempotency_keys')
      .where('tenant_id', '=', tenantId)
      .where(
        'key',
        'in',
        slice.map((answer) => answer.request.key),
      )
      .where('created_at', '<', expired)
      .execute();
    await trx
      .insertInto('idempotency_keys')
      .values(
        slice.map(({ request, status, body }) => ({
          tenant_id: tenantId,
          key: request.key,
          fingerprint: request.fingerprint,
          status,
          body,
          created_at: at,
        })),
      )
      .execute();
    await turn();
  }
  await sweepExpired(trx, expired);
}

/** Removes a few keys of any tenant kept since before `expired`, so the table does not grow. */
export async function sweepExpired(trx: Transaction<Database>, expired: string): Promise<void> {
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
}
