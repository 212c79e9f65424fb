import type { FormComponent } from '../form.js';
import type { Loc } from './data-path.js';
import { fieldName } from './describe.js';
import type { Problems } from './problems.js';

/** One keyed component and the value found for it: what every rule looks at. */
export interface Field {
  component: FormComponent;
  /** The component's form key, as written in the schema (`a.b` for a nested path). */
  key: string;
  /** Where the value sits, from the location prefix down (indexes of dynamic lists included). */
  loc: Loc;
  value: unknown;
  problems: Problems;
}

/** Reports a problem of this field at its own location. */
export function report(field: Field, type: string, detail: string, loc: Loc = field.loc): void {
  field.problems.add(loc, `${fieldName(field.component, field.key)} ${detail}`, type);
}

/** The `validate` object of a component, or an empty one. */
export function rulesOf(component: FormComponent): NonNullable<FormComponent['validate']> {
  const rules = component.validate;
  return typeof rules === 'object' && rules !== null && !Array.isArray(rules) ? rules : {};
}

/** A schema bound (`min`, `maxLength`, ...) as a finite number; form-js writes numbers, text is tolerated. */
export function bound(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
}
