import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from '@rxs/contract/plain';
import { isUniqueViolation } from '../storage/constraints.js';
import type { IdempotentRequest, KeptAnswer, RecordDeletion } from '../storage/idempotency-keys.js';
import { HttpError, unprocessable, validationItem } from './errors.js';

/**
 * `Idempotency-Key` (the convention of Stripe and the IETF draft): a client that may send a write
 * twice (a retry after a timeout, a CI job run again) names it with a key of its own; the first
 * successful answer is kept 24 hours (storage/idempotency-keys.ts), and the same key with the same
 * request gets that answer again without writing; with another request, 422. A kept answer that
 * is a record deleted since is not given again (it would say the record is there): 410, naming the
 * deletion, and nothing is written.
 */

/** The status of a repeat whose record was deleted since: only ever answered to a keyed write. */
const RECORD_DELETED_SINCE = 410;

/** For the OpenAPI document of the writes that take an Idempotency-Key. */
export const deletedSinceResponse = {
  [RECORD_DELETED_SINCE]: Type.Object(
    { detail: Type.String() },
    {
      description:
        'RXS: this Idempotency-Key was used for this request before, but the record it created or changed has been deleted since: nothing was written, and `detail` says when and by whom. Restore the record (POST /records/{id}/restore) or send the request with a new key',
    },
  ),
};

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's key and what it asks (method, path, body in canonical JSON), or undefined without one. */
export function idempotentRequest(request: FastifyRequest): IdempotentRequest | undefined {
  const given = request.headers['idempotency-key'];
  if (given === undefined) return undefined;
  const key = Array.isArray(given) ? given.join(',') : given;
  if (!KEY.test(key))
    throw unprocessable([
      validationItem(
        ['header', 'idempotency-key'],
        'Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces), e.g. a UUID.',
        'value_error',
      ),
    ]);
  return { key, fingerprint: requestFingerprint(request.method, request.url.split('?')[0]!, request.body) };
}

/** What a write asks, as kept with its key: method, path and body in canonical JSON. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body ?? null)}`)
    .digest('base64url');
}

/**
 * A write with an Idempotency-Key: the kept answer when the key was used, else the write, whose
 * answer the service keeps in its transaction. A concurrent request with the same key that
 * committed first makes the write roll back on the key: its answer is then the one kept.
 */
export async function writeOnce<T>(
  keptAnswer: () => Promise<KeptAnswer | undefined>,
  write: () => Promise<T>,
): Promise<{ kept: KeptAnswer } | { written: T }> {
  const kept = await keptAnswer();
  if (kept) return { kept };
  try {
    return { written: await write() };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const first = await keptAnswer();
    if (!first) throw error;
    return { kept: first };
  }
}

/**
 * The kept answer when it answers this request; 422 when the key was used for another; 410 when
 * the answer is a record deleted since.
 */
export function keptFor(request: IdempotentRequest, kept: KeptAnswer): KeptAnswer {
  if (kept.fingerprint !== request.fingerprint)
    throw unprocessable([
      validationItem(
        ['header', 'idempotency-key'],
        `Idempotency-Key "${request.key}" was used within the last 24 hours for another request (another record, or another body). Use a new key for a new request.`,
        'idempotency_key_reused',
      ),
    ]);
  if (kept.deleted) throw deletedSince(request.key, kept.status, kept.deleted);
  return kept;
}

function deletedSince(key: string, status: number, deletion: RecordDeletion): HttpError {
  const { recordId, at, by, reason } = deletion;
  const who = `${by === null ? '' : ` by ${by}`}${reason === null ? '' : ` (reason: "${reason}")`}`;
  const advice =
    status === 201
      ? 'to bring it back with its history, or send the request with a new Idempotency-Key to create a new record'
      : 'and send the change with a new Idempotency-Key';
  return new HttpError(
    RECORD_DELETED_SINCE,
    `Record ${recordId}, which this request ${status === 201 ? 'created' : 'changed'} under Idempotency-Key "${key}", was deleted on ${at}${who}: nothing was written. Restore it (POST /records/${recordId}/restore) ${advice}.`,
  );
}

/** Answers with the kept answer to the key, or as `keptFor` refuses it. */
export function replayAnswer(
  reply: FastifyReply,
  request: IdempotentRequest,
  kept: KeptAnswer,
): FastifyReply {
  keptFor(request, kept);
  return sendAnswer(reply, kept.status, kept.body).header('idempotent-replayed', 'true');
}

/** An answer as kept: its JSON text, sent as is, so a replay is the first answer byte for byte. */
export function sendAnswer(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}
