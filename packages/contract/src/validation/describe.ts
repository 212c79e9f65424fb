import type { FormComponent } from '../form.js';

/** Wording of the messages: what a user reads to find and fix the field. */

const MAX_LABEL = 80;
const MAX_PREVIEW = 60;
const MAX_LISTED_VALUES = 20;

/**
 * A text as a message quotes it: at most `max` characters, "…" in place of what is cut, never
 * between the two halves of a surrogate pair. The cut is a copy: V8 makes a slice of a long string
 * a view that keeps the whole string alive, so a kept cut of a 2 MB value would keep the 2 MB.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 2] ?? '') ? max - 2 : max - 1;
  // Split into code units and joined again: the same text (lone surrogates too), in new memory.
  return `${text.slice(0, end).split('').join('')}…`;
}

/** The label a user sees: `label`, or the date/time labels of a datetime field. */
export function labelOf(component: FormComponent): string | undefined {
  for (const candidate of [component.label, component['dateLabel'], component['timeLabel']]) {
    if (typeof candidate === 'string' && candidate.trim() !== '') return clip(candidate.trim(), MAX_LABEL);
  }
  return undefined;
}

/** `Field "Priority" (priority)`, or `Field "priority"` when the component has no label. */
export function fieldName(component: FormComponent, key: string): string {
  const label = labelOf(component);
  return label === undefined
    ? `Field "${clip(key, MAX_LABEL)}"`
    : `Field "${label}" (${clip(key, MAX_LABEL)})`;
}

/** `"Priority"`, or `"priority"` without a label: the short form inside a sentence. */
export function shortName(component: FormComponent, key: string): string {
  return `"${labelOf(component) ?? clip(key, MAX_LABEL)}"`;
}

/** What kind of JSON value this is, with its article: "a string", "a list", ... */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** A short, safe rendering of a submitted value (never walks into lists or objects). */
export function preview(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(clip(value, MAX_PREVIEW));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return kindOf(value);
}

/** `value, low, medium` — the allowed values of a select, radio or checklist. */
export function listValues(values: readonly unknown[]): string {
  const shown = values.slice(0, MAX_LISTED_VALUES).map((value) => clip(String(value), MAX_PREVIEW));
  const rest = values.length - shown.length;
  return rest > 0 ? `${shown.join(', ')}, … (${values.length} in all)` : shown.join(', ');
}
