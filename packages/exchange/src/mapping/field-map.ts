import type { FormComponent, FormSchema } from '@rxs/contract';
import type { ExportedField } from './model.js';
import { disambiguateName, isNonEmptyString, resolveSemanticName, type ResolvedName } from './names.js';
import { componentOptions } from './options.js';
import { isPlainObject, joinPath, splitPath } from './paths.js';

/** The columns of a topic and what was noticed while building them. */
export interface FieldMap {
  /** In schema order (depth first); a dynamiclist carries its item fields in `itemFields`. */
  fields: ExportedField[];
  warnings: string[];
}

/**
 * Builds the semantic field map of a form-js schema.
 *
 * - Every component with a `key` becomes a field, wherever it is nested; components without one
 *   (text, spacers, layout containers) are skipped, as the document says.
 * - A container's `path` (form-js `group`) prefixes its children's data keys; a container without
 *   one keeps them at its own level. A `dynamiclist` is one field (its key is its path) whose
 *   items carry the children as `itemFields`, with keys relative to the item.
 * - Names follow the document's priority; when two keys resolve to the same name, the first in
 *   schema order keeps it and later ones are disambiguated with their key, with a warning.
 */
export function buildFieldMap(schema: FormSchema): FieldMap {
  const warnings: string[] = [];
  const scope = new FieldScope(warnings, '');
  collect(schema?.components, '', scope, warnings);
  return { fields: scope.finish(), warnings };
}

/** Adds the columns a record revealed (see `mapRecord`), keeping the map's order. */
export function extendFieldMap(map: FieldMap, newFields: readonly ExportedField[]): FieldMap {
  return newFields.length === 0 ? map : { fields: [...map.fields, ...newFields], warnings: map.warnings };
}

function collect(components: unknown, prefix: string, scope: FieldScope, warnings: string[]): void {
  if (!Array.isArray(components)) return;
  for (const item of components) {
    if (!isPlainObject(item)) continue;
    const component = item as FormComponent;

    if (component.type === 'dynamiclist') {
      const path = isNonEmptyString(component.path)
        ? component.path
        : isNonEmptyString(component.key)
          ? component.key
          : '';
      if (path === '') {
        // Without a path form-js has nowhere to store the items; treat it as a plain layout group.
        warnings.push(
          `A dynamiclist${describe(component)} has no path; its fields are read as if they were not in a list.`,
        );
        collect(component.components, prefix, scope, warnings);
        continue;
      }
      const key = joinPath(prefix, path);
      const items = new FieldScope(warnings, ` in the list "${key}"`);
      collect(component.components, '', items, warnings);
      scope.add(fieldOf(component, key), resolveSemanticName(component, path), items.finish());
      continue;
    }

    if (Array.isArray(component.components)) {
      // Layout containers are not fields themselves, even if they carry a key.
      const childPrefix = isNonEmptyString(component.path) ? joinPath(prefix, component.path) : prefix;
      collect(component.components, childPrefix, scope, warnings);
      continue;
    }

    if (!isNonEmptyString(component.key)) continue;
    const key = joinPath(prefix, component.key);
    scope.add(fieldOf(component, key), resolveSemanticName(component, key));
  }
}

function fieldOf(component: FormComponent, key: string): Omit<ExportedField, 'name' | 'source'> {
  const field: Omit<ExportedField, 'name' | 'source'> = { key };
  if (isNonEmptyString(component.type)) field.type = component.type;
  if (isNonEmptyString(component.label)) field.label = component.label;
  const options = componentOptions(component);
  if (options) field.options = options;
  return field;
}

function describe(component: FormComponent): string {
  if (isNonEmptyString(component.label)) return ` ("${component.label}")`;
  if (isNonEmptyString(component.id)) return ` (${component.id})`;
  return '';
}

/** The fields of one naming scope: the topic itself, or the items of one dynamiclist. */
class FieldScope {
  private readonly fields: ExportedField[] = [];
  private readonly keys = new Set<string>();
  private readonly names = new Map<string, string>();

  constructor(
    private readonly warnings: string[],
    private readonly where: string,
  ) {}

  add(
    base: Omit<ExportedField, 'name' | 'source'>,
    resolved: ResolvedName,
    itemFields?: ExportedField[],
  ): void {
    if (this.keys.has(base.key)) {
      // Two components bound to the same data key show the same value: one column is enough.
      this.warnings.push(
        `Form key "${base.key}"${this.where} is used by more than one component; the first one is exported.`,
      );
      return;
    }
    let name = resolved.name;
    const holder = this.names.get(name);
    if (holder !== undefined) {
      name = disambiguateName(resolved.name, base.key, new Set(this.names.keys()));
      this.warnings.push(
        `Form keys "${holder}" and "${base.key}"${this.where} both resolve to the name "${resolved.name}"; ` +
          `"${base.key}" is exported as "${name}".`,
      );
    }
    this.keys.add(base.key);
    this.names.set(name, base.key);
    const field: ExportedField = { ...base, name, source: resolved.source };
    if (itemFields) field.itemFields = itemFields;
    this.fields.push(field);
  }

  /** Returns the fields, warning where one key lies inside another's value (a.b inside a). */
  finish(): ExportedField[] {
    for (const field of this.fields) {
      const segments = splitPath(field.key);
      for (let length = segments.length - 1; length > 0; length--) {
        const outer = segments.slice(0, length).join('.');
        if (this.keys.has(outer)) {
          this.warnings.push(
            `Form key "${field.key}"${this.where} lies inside the value of "${outer}"; it is exported as part of "${outer}".`,
          );
          break;
        }
      }
    }
    return this.fields;
  }
}
