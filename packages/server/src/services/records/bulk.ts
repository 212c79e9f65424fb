import type { BulkWriteAnswer, ValidationErrorItem } from '@rxs/contract';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { eventLoopSlices } from '@rxs/exchange/export';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import { keptFor, writeOnce } from '../../http/idempotency.js';
import { isUniqueViolation } from '../../storage/constraints.js';
import type { IdempotentRequest, KeptAnswer, RecordDeletion } from '../../storage/idempotency-keys.js';
import type { RecordsService } from './service.js';
import { bulkFingerprint, itemFingerprint } from './bulk-items.js';

/**
 * `POST /records/bulk` as the route and the web app's in-process import client answer it: the
 * writes in one transaction (RecordsService.bulkWrite), under the request's Idempotency-Key when
 * it has one.
 */

/** The status of a repeat whose records were deleted since, as for a single write's key. */
const DELETED_SINCE = 410;
/** Records a 410 names one by one. */
const NAMED = 10;
/**
 * Attempts of a request whose items' keys a concurrent request kept first (a unique violation
 * rolls the whole batch back): the next attempt answers those items from their keys.
 */
const ATTEMPTS = 3;

export interface BulkAnswer {
  /** The answer's JSON, as kept: a replay is the first answer byte for byte. */
  body: string;
  /** Answered from the request's Idempotency-Key: nothing was written. */
  replayed: boolean;
}

/**
 * Answers a bulk request: the kept answer when its key was used (422 for another request, 410 when
 * records it wrote were deleted since), else the writes' answer.
 */
export async function answerBulkWrite(
  service: RecordsService,
  principal: Principal,
  items: readonly unknown[],
  options: {
    /** The request's Idempotency-Key, if it has one. */
    key?: string;
    checkShape?: (item: unknown, index: number) => ValidationErrorItem[];
  } = {},
): Promise<BulkAnswer> {
  // The route read and parsed the body (megabytes of JSON) in this same turn of the event loop:
  // other requests get their turn before the items' work begins.
  await nextTurn();
  const turn = eventLoopSlices();
  // The request's key needs every item's fingerprint; without it, only items with keys of their
  // own need theirs (the service takes them then).
  let fingerprints: string[] | undefined;
  let idempotency: IdempotentRequest | undefined;
  if (options.key !== undefined) {
    fingerprints = [];
    for (const item of items) {
      fingerprints.push(itemFingerprint(item));
      await turn();
    }
    idempotency = { key: options.key, fingerprint: bulkFingerprint(items, fingerprints) };
  }
  const write = () =>
    service.bulkWrite(principal, items, { idempotency, checkShape: options.checkShape, fingerprints, turn });
  for (let attempt = 1; ; attempt++) {
    try {
      if (!idempotency) return { body: await write(), replayed: false };
      const outcome = await writeOnce(() => service.keptAnswer(principal, idempotency.key), write);
      if ('written' in outcome) return { body: outcome.written, replayed: false };
      return { body: await keptBulkAnswer(service, principal, idempotency, outcome.kept), replayed: true };
    } catch (error) {
      if (attempt >= ATTEMPTS || !isUniqueViolation(error)) throw error;
    }
  }
}

/**
 * The kept answer of a bulk request, as `keptFor` allows it, unless records it created or changed
 * have been deleted since: it would say they are there, so 410, naming them, and nothing is written.
 */
async function keptBulkAnswer(
  service: RecordsService,
  principal: Principal,
  request: IdempotentRequest,
  kept: KeptAnswer,
): Promise<string> {
  const { body, status } = keptFor(request, kept);
  if (status !== 200) return body;
  const results = (JSON.parse(body) as BulkWriteAnswer).records;
  const deletions = await service.deletedRecords(
    principal,
    results.map((result) => result._id),
  );
  if (deletions.size === 0) return body;
  const gone = results
    .map((result, index) => ({ index, deletion: deletions.get(result._id) }))
    .filter((entry): entry is { index: number; deletion: RecordDeletion } => entry.deletion !== undefined);
  throw new HttpError(DELETED_SINCE, deletedSinceDetail(request.key, gone));
}

function deletedSinceDetail(
  key: string,
  gone: readonly { index: number; deletion: RecordDeletion }[],
): string {
  const named = gone.slice(0, NAMED).map(({ index, deletion }) => {
    const { recordId, at, by, reason } = deletion;
    return `${recordId} (item ${index}) on ${at}${by === null ? '' : ` by ${by}`}${reason === null ? '' : ` (reason: "${reason}")`}`;
  });
  const more = gone.length > NAMED ? ` and ${gone.length - NAMED} more` : '';
  const one = gone.length === 1;
  return (
    `${one ? 'Record' : 'Records'} ${named.join(', ')}${more}, which this request created or changed under Idempotency-Key "${key}", ${one ? 'was' : 'were'} deleted since: nothing was written. ` +
    `Restore ${one ? 'it' : 'them'} (POST /records/{id}/restore), or send the request with a new Idempotency-Key: ` +
    'items with an idempotency_key of their own are then answered from it, and those whose record was deleted are refused (deleted_since).'
  );
}
