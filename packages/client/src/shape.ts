/**
 * Shape checks of answers: each returns what is wrong ("is not a record (a JSON object)") or
 * undefined. They guard against answering servers that are not RXS (a proxy page, another API).
 */
export type ShapeCheck = (value: unknown) => string | undefined;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export const expectObject =
  (what: string): ShapeCheck =>
  (value) =>
    isObject(value) ? undefined : `is not ${what} (a JSON object)`;

export const expectArray =
  (what: string): ShapeCheck =>
  (value) =>
    Array.isArray(value) ? undefined : `is not ${what} (a JSON array)`;

/** An object holding an object under `key` (e.g. the batch listing's `results`). */
export const expectObjectWith =
  (what: string, key: string): ShapeCheck =>
  (value) =>
    isObject(value) && isObject(value[key]) ? undefined : `is not ${what} (a JSON object with "${key}")`;

/** A page of a changes feed: an object with a `cursor`, its items under `items`, and `removed` ids. */
export const expectChangesPage =
  (what: string, items: string): ShapeCheck =>
  (value) =>
    isObject(value) &&
    typeof value.cursor === 'string' &&
    Array.isArray(value[items]) &&
    Array.isArray(value.removed)
      ? undefined
      : `is not ${what} (a JSON object with "cursor", "${items}" and "removed")`;
