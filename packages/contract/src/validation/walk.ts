import type { FormComponent } from '../form.js';
import { isRepeating } from './component-kinds.js';
import { hideExpressionOf, type ConditionScope, type HideConditions } from './conditions.js';
import { isPlainObject, resolvePath, splitPath, type Loc } from './data-path.js';
import { fieldName, kindOf, shortName } from './describe.js';
import { checkField, fieldRulesOf, isUnset, type FieldRules } from './field-rules.js';
import type { Problems } from './problems.js';

/** Containers nested deeper than this in a schema are not followed (no stack overflow on a hostile schema). */
export const MAX_SCHEMA_DEPTH = 64;

/** Where the walk is: the object keys resolve in, its location, and the FEEL scope. */
export interface Scope extends ConditionScope {
  data: Record<string, unknown>;
  loc: Loc;
}

export interface Walk {
  problems: Problems;
  conditions: HideConditions;
}

/**
 * A component as the walk reads it, worked out from the schema once (compileComponents) instead of
 * for every record: what it is, its `conditional.hide` expression, its path split. Components that
 * are disabled, or are no component at all, are left out, as the walk skips them; one that is
 * neither a container nor keyed stays when it has a condition, since evaluating it spends the
 * validation's FEEL budget as form-js's walk would.
 */
export type CompiledComponent = {
  component: FormComponent;
  /** Its `conditional.hide` expression (the text after "="), when it has one. */
  hide: string | undefined;
} & (
  | { shape: 'list'; pathText: string; path: readonly string[]; children: CompiledComponent[] }
  | { shape: 'group'; path: readonly string[]; children: CompiledComponent[] }
  | { shape: 'field'; key: string; segments: readonly string[]; rules: FieldRules }
  | { shape: 'none' }
);

/**
 * The components of one scope, in schema order, as walkComponents checks them; containers nested
 * deeper than MAX_SCHEMA_DEPTH have no children. Valid while the schema is not changed.
 */
export function compileComponents(components: unknown, depth = 0): CompiledComponent[] {
  const compiled: CompiledComponent[] = [];
  if (!Array.isArray(components) || depth > MAX_SCHEMA_DEPTH) return compiled;
  for (const item of components) {
    if (!isPlainObject(item)) continue;
    const component = item as FormComponent;
    if (component['disabled'] === true) continue;
    const hide = hideExpressionOf(component);
    if (isRepeating(component) && typeof component.path === 'string' && component.path !== '') {
      const children = compileComponents(component.components, depth + 1);
      compiled.push({
        component,
        hide,
        shape: 'list',
        pathText: component.path,
        path: splitPath(component.path),
        children,
      });
    } else if (Array.isArray(component.components)) {
      const path =
        typeof component.path === 'string' && component.path !== '' ? splitPath(component.path) : [];
      compiled.push({
        component,
        hide,
        shape: 'group',
        path,
        children: compileComponents(component.components, depth + 1),
      });
    } else if (typeof component.key === 'string' && component.key !== '') {
      compiled.push({
        component,
        hide,
        shape: 'field',
        key: component.key,
        segments: splitPath(component.key),
        rules: fieldRulesOf(component),
      });
    } else if (hide !== undefined) compiled.push({ component, hide, shape: 'none' });
  }
  return compiled;
}

/**
 * Checks the components of one scope in schema order, as form-js validates on submit: disabled
 * components and those hidden by their `conditional` (with everything inside them) are skipped;
 * containers with a `path` nest their children's data under it; a dynamic list repeats its
 * children for every entry of its array.
 */
export function walkComponents(components: readonly CompiledComponent[], scope: Scope, walk: Walk): void {
  for (const compiled of components) {
    if (walk.problems.full) return;
    const { component, hide } = compiled;
    if (hide !== undefined && !passesUnchecked(compiled, scope)) {
      if (walk.conditions.isHidden(component, hide, scope, scope.loc)) continue;
    }
    if (compiled.shape === 'list') walkList(compiled, scope, walk);
    else if (compiled.shape === 'group') walkGroup(compiled, scope, walk);
    else if (compiled.shape === 'field') {
      const value = valueAt(scope, compiled.segments, walk);
      if (value.found) {
        checkField(
          {
            component,
            key: compiled.key,
            // Locations are never changed (Problems copies what it keeps): at the top scope the
            // segments are the location, with nothing to copy for each record.
            loc: scope.loc.length === 0 ? (compiled.segments as Loc) : [...scope.loc, ...compiled.segments],
            value: value.value,
            problems: walk.problems,
          },
          compiled.rules,
        );
      }
    }
  }
}

/**
 * Whether a conditional component passes the walk whether it is hidden or not, so that its
 * condition need not be evaluated: a field that is not required and holds nothing (checkField
 * checks nothing of it), as most "please specify" fields of most records. The FEEL work saved is
 * most of a form's validation.
 */
function passesUnchecked(compiled: CompiledComponent, scope: Scope): boolean {
  if (compiled.shape !== 'field' || compiled.rules.required) return false;
  const resolved = resolvePath(scope.data, compiled.segments);
  return resolved.ok && isUnset(resolved.value);
}

/** A group: with a `path`, its children read and write the object at that path. */
function walkGroup(
  { component, path, children }: CompiledComponent & { shape: 'group' },
  scope: Scope,
  walk: Walk,
): void {
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
  walkComponents(children, { ...scope, data, loc: [...scope.loc, ...path] }, walk);
}

/** A dynamic list: an array of entry objects, each checked against the children in its own scope. */
function walkList(
  { component, pathText, path, children }: CompiledComponent & { shape: 'list' },
  scope: Scope,
  walk: Walk,
): void {
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
      children,
      {
        data: entry,
        loc: [...loc, index],
        thisData: entry,
        parentData: scope.thisData,
        indexes: [...scope.indexes, index + 1],
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
