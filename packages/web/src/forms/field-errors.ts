import type { ValidationErrorItem } from '@rxs/web-api';

/** What form-js knows of each rendered keyed field (its `formFieldInstanceRegistry`). */
export interface FieldInstance {
  id: string;
  valuePath: (string | number)[];
  indexes?: Record<string, number>;
}

/** form-js's error state: messages by field id, nested by list index inside dynamic lists. */
export type FormErrors = Record<string, unknown>;

export interface PlacedErrors {
  errors: FormErrors;
  /** Problems no rendered field matches (hidden fields, the record name, the body shape). */
  unplaced: ValidationErrorItem[];
}

function setPath(target: Record<string, unknown>, path: (string | number)[], messages: string[]): void {
  let node = target;
  path.forEach((segment, index) => {
    const key = String(segment);
    if (index === path.length - 1) {
      const existing = node[key];
      node[key] = Array.isArray(existing) ? [...(existing as string[]), ...messages] : messages;
      return;
    }
    const next = node[key];
    if (!next || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  });
}

function startsWith(path: readonly (string | number)[], prefix: readonly (string | number)[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => String(segment) === String(path[i]));
}

/**
 * Places the server's 422 items on the form-js fields they concern: an item's `loc` below
 * `["body", "data"]` is a data path, and the field whose value path is its longest prefix gets the
 * message (a checklist entry's problem lands on the checklist).
 */
export function placeServerErrors(
  items: readonly ValidationErrorItem[],
  instances: readonly FieldInstance[],
  dataLoc: readonly (string | number)[] = ['body', 'data'],
): PlacedErrors {
  const errors: FormErrors = {};
  const unplaced: ValidationErrorItem[] = [];
  for (const item of items) {
    const path = startsWith(item.loc, dataLoc) ? item.loc.slice(dataLoc.length) : undefined;
    let best: FieldInstance | undefined;
    if (path && path.length > 0) {
      for (const instance of instances) {
        if (instance.valuePath.length === 0 || !startsWith(path, instance.valuePath)) continue;
        if (!best || instance.valuePath.length > best.valuePath.length) best = instance;
      }
    }
    if (!best) {
      unplaced.push(item);
      continue;
    }
    setPath(errors, [best.id, ...Object.values(best.indexes ?? {})], [item.msg]);
  }
  return { errors, unplaced };
}
