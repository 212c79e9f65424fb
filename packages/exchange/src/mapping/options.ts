import type { FormComponent } from '@rxs/contract';
import type { ExportedField } from './model.js';

/** Component types whose values come from a fixed list of options. */
export const OPTION_TYPES: ReadonlySet<string> = new Set(['select', 'radio', 'checklist', 'taglist']);

/** Types whose value is a list of selected options. */
export const MULTI_VALUE_TYPES: ReadonlySet<string> = new Set(['checklist', 'taglist']);

export type FieldOption = NonNullable<ExportedField['options']>[number];

/**
 * The static options of a select, radio, checklist or taglist. Options loaded at run time
 * (`valuesKey`) are not part of the schema, so there are none to record.
 */
export function componentOptions(component: FormComponent): FieldOption[] | undefined {
  if (!OPTION_TYPES.has(component.type ?? '') || !Array.isArray(component.values)) return undefined;
  const options: FieldOption[] = [];
  for (const entry of component.values as unknown[]) {
    if (entry === null || typeof entry !== 'object' || !('value' in entry)) continue;
    const { value, label } = entry as { value: unknown; label?: unknown };
    options.push({ value, label: typeof label === 'string' && label !== '' ? label : String(value) });
  }
  return options;
}

/** Shows option values by their labels; values that are not options stay as they are. */
export function labelValue(field: ExportedField, value: unknown): unknown {
  const options = field.options;
  if (!options || !OPTION_TYPES.has(field.type ?? '')) return value;
  const labelOf = (v: unknown) => options.find((option) => option.value === v)?.label ?? v;
  return Array.isArray(value) ? value.map(labelOf) : labelOf(value);
}
