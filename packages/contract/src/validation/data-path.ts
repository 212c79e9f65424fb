/**
 * Reading record data along form-js paths without trusting it: only own properties of plain
 * objects are followed, so keys such as `__proto__` or `constructor` never reach a prototype.
 */

export type Loc = (string | number)[];

/** A JSON object (not an array, not null). Record data arrives parsed from JSON. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Paths split once, shared by every validation of the process: a form's few keys are split again
 * for each record it checks. Bounded: past the bound it starts afresh.
 */
const splitPaths = new Map<string, readonly string[]>();
const MAX_SPLIT_PATHS = 10_000;

/** form-js keys and container paths with dots are paths: `a.b` is `{a: {b: ...}}`. Shared: never change it. */
export function splitPath(path: string): readonly string[] {
  let segments = splitPaths.get(path);
  if (!segments) {
    segments = Object.freeze(path.split('.'));
    if (splitPaths.size >= MAX_SPLIT_PATHS) splitPaths.clear();
    splitPaths.set(path, segments);
  }
  return segments;
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
