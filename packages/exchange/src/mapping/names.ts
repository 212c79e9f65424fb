import type { FormComponent } from '@rxs/contract';
import type { NameSource } from './model.js';

export interface ResolvedName {
  name: string;
  source: NameSource;
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/**
 * The document's priority, exactly: `properties["service-key"]` if present and non-empty, else
 * `label` if present and non-empty, else the form key (for a dynamiclist, its path).
 */
export function resolveSemanticName(component: FormComponent, formKey: string): ResolvedName {
  const properties = component.properties;
  const serviceKey =
    properties !== null && typeof properties === 'object' ? properties['service-key'] : undefined;
  if (isNonEmptyString(serviceKey)) return { name: serviceKey, source: 'service-key' };
  if (isNonEmptyString(component.label)) return { name: component.label, source: 'label' };
  return { name: formKey, source: 'key' };
}

/**
 * A name for `key` when `name` is already held: "Name (textfield_abc)", then
 * "Name (textfield_abc) 2", ... Depends only on its inputs, so the same schema always yields the
 * same names.
 */
export function disambiguateName(name: string, key: string, taken: ReadonlySet<string>): string {
  const base = `${name} (${key})`;
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base} ${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
