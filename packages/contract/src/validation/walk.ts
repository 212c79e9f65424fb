import type { FormComponent } from '../form.js';
import { isRepeating } from './component-kinds.js';
import type { ConditionScope, HideConditions } from './conditions.js';
import { isPlainObject, resolvePath, splitPath, type Loc } from './data-path.js';
import { fieldName, kindOf, shortName } from './describe.js';
import { checkField } from './field-rules.js';
import type { Problems } from './problems.js';

/** Containers nested deeper than this in a schema are not followed (no stack overflow on a hostile schema). */
export const MAX_SCHEMA_DEPTH = 64;

/** Where the walk is: the object keys resolve in, its location, and the FEEL scope. */
export interface Scope extends ConditionScope {
  data: Record<string, unknown>;
  loc: Loc;
  depth: number;
}

export interface Walk {
  problems: Problems;
  conditions: HideConditions;
}

/**
 * Checks the components of one scope in schema order, as form-js validates on submit: disabled
 * components and those hidden by their `conditional` (with everything inside them) are skipped;
 * containers with a `path` nest their children's data under it; a dynamic list repeats its
 * children for every entry of its array.
 */
export function walkComponents(components: unknown, scope: Scope, walk: Walk): void {
  if (!Array.isArray(components) || scope.depth > MAX_SCHEMA_DEPTH) return;
  for (const item of components) {
    if (walk.problems.full) return;
    if (!isPlainObject(item)) continue;
    const component = item as FormComponent;
    if (component['disabled'] === true) continue;
    if (walk.conditions.isHidden(component, scope, scope.loc)) continue;
    if (isRepeating(component) && typeof component.path === 'string' && component.path !== '') {
      walkList(component, component.path, scope, walk);
    } else if (Array.isArray(component.components)) {
      walkGroup(component, scope, walk);
    } else if (typeof component.key === 'string' && component.key !== '') {
      const segments = splitPath(component.key);
      const value = valueAt(scope, segments, walk);
      if (value.found) {
        checkField({
          component,
          key: component.key,
          loc: [...scope.loc, ...segments],
          value: value.value,
          problems: walk.problems,
        });
      }
    }
  }
}

/** A group: with a `path`, its children read and write the object at that path. */
function walkGroup(component: FormComponent, scope: Scope, walk: Walk): void {
  const path = typeof component.path === 'string' && component.path !== '' ? splitPath(component.path) : [];
  let data = scope.data;
  if (path.length > 0) {
    const value = valueAt(scope, path, walk);
    if (!value.found) return;
    if (value.value !== undefined && value.value !== null && !isPlainObject(value.value)) {
      walk.problems.add(
        [...scope.loc, ...path],
        `${fieldName(component, component.path as string)} must be an object holding the group's fields, not ${kindOf(value.value)}`,
        'dict_type',
      );
      return;
    }
    data = isPlainObject(value.value) ? value.value : {};
  }
  walkComponents(
    component.components,
    { ...scope, data, loc: [...scope.loc, ...path], depth: scope.depth + 1 },
    walk,
  );
}

/** A dynamic list: an array of entry objects, each checked against the children in its own scope. */
function walkList(component: FormComponent, pathText: string, scope: Scope, walk: Walk): void {
  const path = splitPath(pathText);
  const value = valueAt(scope, path, walk);
  if (!value.found || value.value === undefined || value.value === null) return;
  const loc = [...scope.loc, ...path];
  const entries = value.value;
  if (!Array.isArray(entries)) {
    walk.problems.add(
      loc,
      `${fieldName(component, pathText)} must be a list of entries, not ${kindOf(entries)}`,
      'list_type',
    );
    return;
  }
  for (let index = 0; index < entries.length && !walk.problems.full; index += 1) {
    const entry: unknown = entries[index];
    if (!isPlainObject(entry)) {
      walk.problems.add(
        [...loc, index],
        `Entry ${index + 1} of ${shortName(component, pathText)} must be an object of field values, not ${kindOf(entry)}`,
        'dict_type',
      );
      continue;
    }
    walkComponents(
      component.components,
      {
        data: entry,
        loc: [...loc, index],
        thisData: entry,
        parentData: scope.thisData,
        indexes: [...scope.indexes, index + 1],
        depth: scope.depth + 1,
      },
      walk,
    );
  }
}

/**
 * The value at `segments` below the scope's data. When a step on the way holds something other
 * than an object (`{"a": 1}` for the key `a.b`), that step is reported once and `found` is false.
 */
function valueAt(scope: Scope, segments: readonly string[], walk: Walk): { found: boolean; value?: unknown } {
  const resolved = resolvePath(scope.data, segments);
  if (resolved.ok) return { found: true, value: resolved.value };
  const stepPath = segments.slice(0, resolved.at);
  walk.problems.add(
    [...scope.loc, ...stepPath],
    `"${stepPath.join('.')}" must be an object (the form stores "${segments.join('.')}" inside it), not ${kindOf(resolved.found)}`,
    'dict_type',
  );
  return { found: false };
}
