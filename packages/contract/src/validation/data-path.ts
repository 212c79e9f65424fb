/**
 * Reading record data along form-js paths without trusting it: only own properties of plain
 * objects are followed, so keys such as `__proto__` or `constructor` never reach a prototype.
 */

export type Loc = (string | number)[];

/** A JSON object (not an array, not null). Record data arrives parsed from JSON. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** form-js keys and container paths with dots are paths: `a.b` is `{a: {b: ...}}`. */
export function splitPath(path: string): string[] {
  return path.split('.');
}

/** The own property `key` of `object`, or undefined. */
export function ownValue(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

export type Resolved =
  /** The value at the path (undefined when absent). */
  | { ok: true; value: unknown }
  /** A step of the path holds something that is not an object: `at` is that step's length. */
  | { ok: false; at: number; found: unknown };

/** Follows `segments` from `object`. An absent or null step ends the walk with `undefined`. */
export function resolvePath(object: Record<string, unknown>, segments: readonly string[]): Resolved {
  let current: unknown = object;
  for (let index = 0; index < segments.length; index += 1) {
    if (current === undefined || current === null) return { ok: true, value: undefined };
    if (!isPlainObject(current)) return { ok: false, at: index, found: current };
    current = ownValue(current, segments[index] as string);
  }
  return { ok: true, value: current };
}
