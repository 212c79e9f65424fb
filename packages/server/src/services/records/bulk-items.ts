import type { BulkRecordCreate, BulkRecordUpdate, ValidationErrorItem } from '@rxs/contract';
import { isBulkUpdate } from '@rxs/contract';
import { createHash } from 'node:crypto';
import { HttpError, unprocessable, validationItem } from '../../http/errors.js';
import { requestFingerprint } from '../../http/idempotency.js';

/**
 * The refusals of a bulk request's items (`POST /records/bulk`): each is the refusal its single
 * write would get, named by the item's place, `["body", "records", index, ...]`, in one 422.
 */

/** An item whose shape was checked (or that an in-process caller built): a create or an update. */
export type BulkItemShape = BulkRecordCreate | BulkRecordUpdate;

/** The kind a refusal of another status becomes as an item of the 422. */
const KIND_OF_STATUS: Record<number, string> = {
  404: 'not_found',
  409: 'conflict',
  410: 'deleted_since',
};

/**
 * A single write's refusal as the problems of item `index`: its 422 items with their `loc` moved
 * under the item (a header's, the Idempotency-Key, is the item's `idempotency_key`), any other
 * status one item of its kind with the same sentence.
 */
export function itemProblems(index: number, error: HttpError): ValidationErrorItem[] {
  const at = ['body', 'records', index];
  if (typeof error.detail === 'string')
    return [validationItem(at, error.detail, KIND_OF_STATUS[error.statusCode] ?? 'refused')];
  return error.detail.map((item) => {
    const [part, ...rest] = item.loc;
    const loc = part === 'body' ? [...at, ...rest] : part === 'header' ? [...at, 'idempotency_key'] : at;
    return { ...item, loc };
  });
}

/** A refusal met while writing: as it is for a single write, for a bulk item the 422 naming it. */
export function itemError(index: number | undefined, error: HttpError): HttpError {
  return index === undefined ? error : unprocessable(itemProblems(index, error));
}

/**
 * Items that cannot share one transaction: two changes of one record (the second would meet the
 * version the first wrote), and two items under one `idempotency_key`.
 */
export function duplicateProblems(
  items: readonly { index: number; item: BulkItemShape }[],
): ValidationErrorItem[] {
  const problems: ValidationErrorItem[] = [];
  const records = new Map<string, number>();
  const keys = new Map<string, number>();
  for (const { index, item } of items) {
    if (isBulkUpdate(item)) {
      const first = records.get(item._id);
      if (first === undefined) records.set(item._id, index);
      else
        problems.push(
          validationItem(
            ['body', 'records', index, '_id'],
            `Record ${item._id} is changed by item ${first} already: a request changes a record once. Merge the two changes.`,
            'duplicate_record',
          ),
        );
    }
    const key = item.idempotency_key;
    if (key === undefined) continue;
    const first = keys.get(key);
    if (first === undefined) keys.set(key, index);
    else
      problems.push(
        validationItem(
          ['body', 'records', index, 'idempotency_key'],
          `Item ${first} has the idempotency_key "${key}" already: each item needs its own.`,
          'idempotency_key_duplicate',
        ),
      );
  }
  return problems;
}

/** Problems listed whole, in all; past them, only an item's first (every refused item stays named). */
const LISTED_PROBLEMS = 2000;

/**
 * The problems in item order, bounded: all of them up to LISTED_PROBLEMS, past that one for each
 * further refused item, so that a batch of bad items answers a bounded 422 that still names every
 * refused item.
 */
export function listedProblems(problems: readonly ValidationErrorItem[]): ValidationErrorItem[] {
  const indexOf = (problem: ValidationErrorItem) =>
    typeof problem.loc[2] === 'number' && problem.loc[1] === 'records' ? problem.loc[2] : -1;
  const ordered = problems
    .map((problem, order) => ({ problem, order }))
    .sort((a, b) => indexOf(a.problem) - indexOf(b.problem) || a.order - b.order)
    .map(({ problem }) => problem);
  if (ordered.length <= LISTED_PROBLEMS) return ordered;
  const listed = ordered.slice(0, LISTED_PROBLEMS);
  const named = new Set(listed.map(indexOf));
  let left = 0;
  for (const problem of ordered.slice(LISTED_PROBLEMS)) {
    const index = indexOf(problem);
    if (named.has(index)) left++;
    else {
      named.add(index);
      listed.push(problem);
    }
  }
  if (left > 0)
    listed.push(
      validationItem(
        ['body', 'records'],
        `… and ${left} more problems of the items named: fix these and send the request again to see them.`,
        'too_many_problems',
      ),
    );
  return listed;
}

/**
 * What an item asks, as its single write's Idempotency-Key keeps it: `POST /records/` or `PATCH
 * /records/{_id}` with the item's body, so a key used by a single write and by a bulk item answers
 * both alike. An item that is no object is fingerprinted as it is (its request is refused anyway).
 */
export function itemFingerprint(item: unknown): string {
  if (item === null || typeof item !== 'object' || Array.isArray(item))
    return requestFingerprint('POST', '/records/', item);
  const { idempotency_key: _key, ...body } = item as BulkItemShape;
  if (!isBulkUpdate(item as BulkItemShape)) return requestFingerprint('POST', '/records/', body);
  const { _id, ...change } = body as BulkRecordUpdate;
  return requestFingerprint('PATCH', `/records/${_id}`, change);
}

/**
 * What a whole bulk request asks, as its Idempotency-Key keeps it: its items' fingerprints and
 * keys, in order (a key is visible ASCII without spaces, so the text is unambiguous). Equal for the
 * same items, whatever the order of their keys, and made of what the items' own keys need anyway:
 * the body is read once.
 */
export function bulkFingerprint(items: readonly unknown[], fingerprints: readonly string[]): string {
  const hash = createHash('sha256').update('POST /records/bulk\n');
  for (const [index, item] of items.entries()) {
    const key = (item as { idempotency_key?: unknown } | null)?.idempotency_key;
    hash.update(`${fingerprints[index]} ${typeof key === 'string' ? key : ''}\n`);
  }
  return hash.digest('base64url');
}
