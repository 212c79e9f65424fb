import type { Kysely, Transaction } from 'kysely';
import { eventLoopSlices } from '@rxs/exchange/export';
import { RECORD_ROW_COLUMNS, recordJson } from './record-json.js';
import { insertRows, marker, runTemplate, templateOf } from './row-inserts.js';
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

/** The `_id` of an answer that is a record: the service writes it first (record-json.ts). */
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
  const row = await db
    .selectFrom('idempotency_keys')
    .select(KEPT_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .where('created_at', '>=', cutoff())
    .executeTakeFirst();
  if (!row) return undefined;
  const versions = await recordVersions(db, tenantId, [row]);
  const kept = keptAnswer(row, versions);
  const recordId = answeredRecord(row);
  if (recordId === undefined) return kept;
  const deleted = await deletionOf(db, tenantId, recordId);
  return deleted ? { ...kept, deleted } : kept;
}

/** The columns of a kept answer. */
export const KEPT_COLUMNS = ['fingerprint', 'status', 'body', 'record_id', 'record_n'] as const;

/** A kept answer as stored: its text, or the record version it is. */
export interface KeptRow {
  fingerprint: string;
  status: number;
  body: string;
  record_id: string | null;
  record_n: number | null;
}

/** The record a successful answer is, if it is one. */
export function answeredRecord(row: KeptRow): string | undefined {
  if (row.status >= 300) return undefined;
  return row.record_id ?? RECORD_ANSWER.exec(row.body)?.[1];
}

const versionKey = (recordId: string, n: number) => `${recordId} ${n}`;

/**
 * The record versions these kept answers are, as `recordJson` texts by `versionKey`: read in a few
 * statements for all. History is never changed or deleted (migration 003), so each is there.
 */
export async function recordVersions(
  db: Kysely<Database>,
  tenantId: string,
  rows: readonly KeptRow[],
): Promise<Map<string, string>> {
  const wanted = new Set<string>();
  const ids = new Set<string>();
  for (const row of rows) {
    if (row.record_id === null || row.record_n === null) continue;
    wanted.add(versionKey(row.record_id, Number(row.record_n)));
    ids.add(row.record_id);
  }
  const texts = new Map<string, string>();
  for (const slice of slices([...ids])) {
    const versions = await db
      .selectFrom('record_versions')
      .select(['record_id', 'n', ...RECORD_ROW_COLUMNS])
      .where('tenant_id', '=', tenantId)
      .where('record_id', 'in', slice)
      .execute();
    for (const { record_id: id, n, ...columns } of versions) {
      const at = versionKey(id, Number(n));
      if (wanted.has(at)) texts.set(at, recordJson({ id, ...columns }));
    }
  }
  return texts;
}

/** A kept answer with its text: the stored text, or its record version's (`recordVersions`). */
export function keptAnswer(row: KeptRow, versions: ReadonlyMap<string, string>): KeptAnswer {
  const { fingerprint, status, record_id: recordId, record_n: n } = row;
  if (recordId === null || n === null) return { fingerprint, status, body: row.body };
  const body = versions.get(versionKey(recordId, Number(n)));
  if (body === undefined)
    throw new Error(`The version ${n} of record ${recordId} a kept answer is was not found.`);
  return { fingerprint, status, body };
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

/**
 * One answer to keep: the key's request, and the answer's status and JSON text, or instead of the
 * text the record version written in this transaction that the answer is as `recordJson` gives it
 * (kept as a reference to it: the version holds the same text).
 */
export type AnswerToKeep = { request: IdempotentRequest; status: number } & (
  { body: string } | { recordVersion: { recordId: string; n: number } }
);

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
  for (const slice of statementBatches(answers, (answer) => ('body' in answer ? answer.body.length : 0))) {
    const forgetExpired = templateOf(trx, `forget-expired:${slice.length}`, () =>
      trx
        .deleteFrom('idempotency_keys')
        .where('tenant_id', '=', marker(0))
        .where('created_at', '<', marker(1))
        .where(
          'key',
          'in',
          slice.map((_, i) => marker(2 + i)),
        )
        .compile(),
    );
    await runTemplate(trx, forgetExpired, [tenantId, expired, ...slice.map((answer) => answer.request.key)]);
    await insertRows(
      trx,
      'idempotency_keys',
      KEY_COLUMNS,
      slice.map((answer) => [
        tenantId,
        answer.request.key,
        answer.request.fingerprint,
        answer.status,
        at,
        ...('body' in answer
          ? [answer.body, null, null]
          : ['', answer.recordVersion.recordId, answer.recordVersion.n]),
      ]),
    );
    await turn();
  }
  await sweepExpired(trx, expired);
}

/** The columns of a kept answer, in the order keepAnswers gives their values. */
const KEY_COLUMNS = [
  'tenant_id',
  'key',
  'fingerprint',
  'status',
  'created_at',
  'body',
  'record_id',
  'record_n',
] as const;

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
