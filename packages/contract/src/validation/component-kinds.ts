import type { FormComponent } from '../form.js';

/**
 * What a form-js component stores, by `type`:
 * - `string`: text (textfield, textarea, datetime — form-js stores dates and times as ISO text);
 * - `number`: a number (a numeric string when the field has `serializeToString`);
 * - `boolean`: true or false (checkbox);
 * - `single`: one of the options (select, radio);
 * - `multi`: a list of options (checklist, taglist);
 * - `display`: nothing (text, image, button, ...): no rules at all;
 * - `free`: any value (expression, filepicker, custom or unknown types): only the generic
 *   `validate` rules that fit the value apply, as form-js applies them to every keyed field.
 */
export type ValueKind = 'string' | 'number' | 'boolean' | 'single' | 'multi' | 'display' | 'free';

const KINDS: ReadonlyMap<string, ValueKind> = new Map<string, ValueKind>([
  ['textfield', 'string'],
  ['textarea', 'string'],
  ['datetime', 'string'],
  ['number', 'number'],
  ['checkbox', 'boolean'],
  ['select', 'single'],
  ['radio', 'single'],
  ['checklist', 'multi'],
  ['taglist', 'multi'],
  ['text', 'display'],
  ['html', 'display'],
  ['image', 'display'],
  ['button', 'display'],
  ['separator', 'display'],
  ['spacer', 'display'],
  ['iframe', 'display'],
  ['table', 'display'],
  ['documentPreview', 'display'],
  ['default', 'display'],
]);

export function valueKind(component: FormComponent): ValueKind {
  return (typeof component.type === 'string' && KINDS.get(component.type)) || 'free';
}

/**
 * A dynamic list repeats its children once per entry of the array at its `path`. form-js
 * repeats a `dynamiclist` when `isRepeating` is set; schemas written by its editor always set it,
 * so only an explicit `isRepeating: false` turns the repetition off here.
 */
export function isRepeating(component: FormComponent): boolean {
  return component.type === 'dynamiclist' && component['isRepeating'] !== false;
}

/**
 * The options of a select, radio, checklist or taglist when they are fixed in the schema; undefined
 * when they are dynamic (`valuesKey`, `valuesExpression`), absent, empty or not plain values, so
 * no allowed-values check can be made.
 */
export function staticOptions(component: FormComponent): unknown[] | undefined {
  const dynamic = (name: string) => typeof component[name] === 'string' && component[name] !== '';
  if (dynamic('valuesKey') || dynamic('valuesExpression')) return undefined;
  if (!Array.isArray(component.values)) return undefined;
  const options: unknown[] = [];
  for (const entry of component.values as unknown[]) {
    if (typeof entry !== 'object' || entry === null || !Object.hasOwn(entry, 'value')) continue;
    const value = (entry as { value: unknown }).value;
    if (typeof value === 'object' && value !== null) return undefined;
    options.push(value);
  }
  // An empty option list is a schema still being written: nothing to compare against.
  return options.length > 0 ? options : undefined;
}
