import { createHash } from 'node:crypto';
import { RxsApiError } from '@rxs/client';

/**
 * Rows an earlier import created whose records were deleted since: how both import writers (one
 * row at a time, or in batches) recognise them and create them anew under keys of their own.
 */

/** Times a row is created anew after its record was deleted, each time under the next derived key. */
export const MAX_RECREATIONS = 10;

/**
 * The key of a row's `generation`th creation anew: derived from its first key alone, so that every
 * run asks the same keys in the same order, and a record created anew is answered again, not made twice.
 */
export function recreationKey(idempotencyKey: string, generation: number): string {
  const hash = createHash('sha256').update(`${idempotencyKey}\nrecreated ${generation}`).digest('hex');
  return `rxs-import-${hash.slice(0, 40)}`;
}

/**
 * A write the service did not make because its key was used before for a record deleted since (the
 * client's `RecordDeletedSinceError`, or an in-process client's error of that status).
 */
export const deletedSince = (error: unknown): error is RxsApiError =>
  error instanceof RxsApiError && error.status === 410;
