/**
 * Values as JSON holds them, compared and written whatever the order of object keys: what the
 * sync state compares, and what idempotency keys are made of (equal values give equal text).
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Deep equality of JSON values: arrays by position, objects by their own keys in any order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (const key of keys) if (!Object.hasOwn(b, key) || !jsonEqual(a[key], b[key])) return false;
    return true;
  }
  return false;
}

/**
 * JSON with object keys sorted at every level: equal values give equal text. Built by appending to
 * one string (no arrays of members to filter, map and join): idempotency fingerprints run this over
 * every item of a bulk write.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value ?? null);
  if (Array.isArray(value)) {
    let text = '[';
    // As `join` writes them: an item without JSON text (a function) is empty.
    for (let i = 0; i < value.length; i++)
      text += `${i === 0 ? '' : ','}${canonicalJson(value[i] ?? null) ?? ''}`;
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  let text = '{';
  for (const key of Object.keys(object).sort()) {
    const member = object[key];
    if (member === undefined) continue;
    text += `${text.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${text}}`;
}

/** A value as `canonicalJson` writes a value that is no object: null for what JSON has no text for. */
function asJsonScalar(value: unknown): unknown {
  if (value === undefined || (typeof value === 'number' && !Number.isFinite(value))) return null;
  // -0 and 0 are both "0".
  return value === 0 ? 0 : value;
}

/** The members `canonicalJson` writes of an object: those not undefined. */
function writtenMembers(object: Record<string, unknown>): number {
  let count = 0;
  for (const key of Object.keys(object)) if (object[key] !== undefined) count++;
  return count;
}

/**
 * Whether `canonicalJson(a) === canonicalJson(b)`, without writing either (a re-import compares
 * every row with its record): members that are undefined left out, undefined and non-finite
 * numbers as null, arrays by position, objects by their own keys in any order. For the values JSON
 * and form data hold (no functions, symbols or bigints).
 */
export function sameCanonicalJson(a: unknown, b: unknown): boolean {
  const aIsObject = a !== null && typeof a === 'object';
  const bIsObject = b !== null && typeof b === 'object';
  if (!aIsObject || !bIsObject) return !aIsObject && !bIsObject && asJsonScalar(a) === asJsonScalar(b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameCanonicalJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const first = a as Record<string, unknown>;
  const second = b as Record<string, unknown>;
  if (writtenMembers(first) !== writtenMembers(second)) return false;
  for (const key of Object.keys(first)) {
    const member = first[key];
    if (member === undefined) continue;
    if (!Object.hasOwn(second, key) || second[key] === undefined || !sameCanonicalJson(member, second[key]))
      return false;
  }
  return true;
}
