import { staticOptions, valueKind, type ValueKind } from './component-kinds.js';
import { parseDecimal } from './decimal.js';
import { kindOf, listValues, preview, shortName } from './describe.js';
import { report, rulesOf, type Field } from './field.js';
import { checkNumber } from './number-rules.js';
import { checkText } from './string-rules.js';

/** What the rules of a component depend on besides its value, found once per form (fieldRulesOf). */
export interface FieldRules {
  kind: ValueKind;
  /** Its fixed options (staticOptions). */
  options: unknown[] | undefined;
  /** `validate.required`: an unset value of a field without it passes every rule. */
  required: boolean;
}

export function fieldRulesOf(component: Field['component']): FieldRules {
  return {
    kind: valueKind(component),
    options: staticOptions(component),
    required: rulesOf(component).required === true,
  };
}

/**
 * Every rule of one keyed, visible component against its value: required, the type its
 * component stores, the allowed options, then the `validate` rules. One item per problem; a value
 * of the wrong type gets only that item.
 */
export function checkField(field: Field, rules: FieldRules = fieldRulesOf(field.component)): void {
  const { kind, options } = rules;
  if (kind === 'display') return;
  const { value } = field;
  if (rules.required && isEmpty(value, kind)) {
    report(
      field,
      'missing',
      kind === 'boolean' && value === false ? 'is required: it must be checked' : 'is required',
    );
    return;
  }
  if (isUnset(value)) return;
  switch (kind) {
    case 'string':
      if (typeof value !== 'string')
        return report(field, 'string_type', `must be a string, not ${kindOf(value)}`);
      return checkText(field, value);
    case 'number':
      return checkNumberField(field);
    case 'boolean':
      if (typeof value !== 'boolean')
        report(field, 'bool_type', `must be true or false, not ${kindOf(value)}`);
      return;
    case 'single':
      return checkOption(field, value, field.loc, options);
    case 'multi':
      return checkOptions(field, options);
    default:
      // Custom and unknown types: the generic rules that fit the value, as form-js applies them.
      if (typeof value === 'number') checkNumber(field, value, String(value));
      if (typeof value === 'string') checkText(field, value);
  }
}

/** Unset, as for the required check: form-js clears fields to null, and '' means nothing entered. */
export function isUnset(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** form-js: unset, empty text, an empty list, or an unchecked checkbox. */
function isEmpty(value: unknown, kind: ValueKind): boolean {
  return (
    value === undefined ||
    value === null ||
    value === '' ||
    (Array.isArray(value) && value.length === 0) ||
    (kind === 'boolean' && value === false)
  );
}

/** A number, or with `serializeToString` the number written as a string, as form-js stores it. */
function checkNumberField(field: Field): void {
  const { value } = field;
  if (typeof value === 'number') return checkNumber(field, value, String(value));
  if (typeof value === 'string' && field.component['serializeToString'] === true) {
    const text = value.trim();
    const number = Number(text);
    if (text === '' || !parseDecimal(text) || !Number.isFinite(number)) {
      return report(
        field,
        'float_parsing',
        `must be a number written as a string, such as "12.5", not ${preview(value)}`,
      );
    }
    return checkNumber(field, number, text);
  }
  report(field, 'float_type', `must be a number, not ${kindOf(value)}`);
}

/** `options` undefined: dynamic options, nothing to compare against. */
function checkOption(field: Field, value: unknown, loc: Field['loc'], options: unknown[] | undefined): void {
  if (!options || options.includes(value)) return;
  field.problems.add(
    loc,
    `${preview(value)} is not one of the allowed values of ${shortName(field.component, field.key)}: ${listValues(options)}`,
    'enum',
  );
}

/** A checklist or taglist: a list whose every entry is an allowed option (problems at the entry). */
function checkOptions(field: Field, options: unknown[] | undefined): void {
  const { value } = field;
  if (!Array.isArray(value))
    return report(field, 'list_type', `must be a list of values, not ${kindOf(value)}`);
  if (!options) return;
  for (let index = 0; index < value.length && !field.problems.full; index += 1) {
    checkOption(field, value[index], [...field.loc, index], options);
  }
}
