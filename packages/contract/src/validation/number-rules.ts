import { parseDecimal, nearestMultiples } from './decimal.js';
import { bound, report, rulesOf, type Field } from './field.js';

/**
 * The number rules form-js checks on submit: `validate.min`/`max`, and for number fields
 * `decimalDigits` and `increment`. `text` is the number as written (JSON or the serialized string).
 */
export function checkNumber(field: Field, number: number, text: string): void {
  const rules = rulesOf(field.component);
  const min = bound(rules.min);
  if (min !== undefined && number < min)
    report(field, 'greater_than_equal', `must be at least ${min}, not ${text}`);
  const max = bound(rules.max);
  if (max !== undefined && number > max)
    report(field, 'less_than_equal', `must be at most ${max}, not ${text}`);
  if (field.component.type !== 'number') return;

  const value = parseDecimal(text);
  if (!value) return;
  const places = bound(field.component['decimalDigits']);
  if (places !== undefined && places >= 0 && value.scale > places) {
    report(
      field,
      'decimal_max_places',
      places === 0
        ? `must be a whole number, not ${text}`
        : `must have at most ${places} decimal places, not ${value.scale}`,
    );
  }
  const incrementSource = field.component['increment'];
  const step =
    typeof incrementSource === 'number' || typeof incrementSource === 'string'
      ? parseDecimal(String(incrementSource).trim())
      : undefined;
  if (step && step.digits > 0n) {
    const nearest = nearestMultiples(value, step);
    if (nearest) {
      report(
        field,
        'multiple_of',
        `must be a multiple of ${String(incrementSource).trim()}: the nearest valid values are ${nearest[0]} and ${nearest[1]}, not ${text}`,
      );
    }
  }
}
