import { createHash } from 'node:crypto';
import { canonicalJson } from '@rxs/contract/plain';

/** A short fingerprint of a JSON value (sha256 of its canonical form, hex). */
export function jsonHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** Code-unit order of ids, the order the records service lists `_id`s in. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
