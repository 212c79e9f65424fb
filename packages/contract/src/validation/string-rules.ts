import { preview } from './describe.js';
import { bound, report, rulesOf, type Field } from './field.js';

/**
 * The text rules of `validate`, checked as form-js checks them on submit: only on a non-empty
 * string; lengths count the text without leading and trailing spaces; `pattern` is a JavaScript
 * regular expression tested anywhere in the text (form-js does not anchor it).
 */
export function checkText(field: Field, text: string): void {
  if (text === '') return;
  const rules = rulesOf(field.component);
  const length = text.trim().length;
  const minLength = bound(rules.minLength);
  if (minLength !== undefined && length < minLength) {
    report(
      field,
      'string_too_short',
      `must have at least ${minLength} characters (not counting leading and trailing spaces), not ${length}`,
    );
  }
  const maxLength = bound(rules.maxLength);
  if (maxLength !== undefined && length > maxLength) {
    report(
      field,
      'string_too_long',
      `must have at most ${maxLength} characters (not counting leading and trailing spaces), not ${length}`,
    );
  }
  if (typeof rules.pattern === 'string' && rules.pattern !== '') {
    const pattern = compile(rules.pattern);
    if (pattern && !pattern.test(text)) {
      report(
        field,
        'string_pattern_mismatch',
        `must match the pattern ${rules.pattern}, not ${preview(text)}`,
      );
    }
  }
  if (rules.validationType === 'email' && !EMAIL.test(text)) {
    report(field, 'email_format', `must be an e-mail address such as name@example.com, not ${preview(text)}`);
  }
  if (rules.validationType === 'phone' && !PHONE.test(text)) {
    report(
      field,
      'phone_format',
      `must be an international phone number: + or 00, the country code and the number, digits only, such as +4930664040900; not ${preview(text)}`,
    );
  }
}

/**
 * E-mail, deliberately simple: something without spaces or `@`, one `@`, then a domain of one or
 * more dot-separated labels (form-js accepts a domain without a dot too).
 */
export const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)*$/;

/**
 * Phone, deliberately simple: the international form form-js asks for — `+` or `00`, a country
 * code that does not start with 0, and the number, 7 to 24 digits in all, no spaces or dashes.
 */
export const PHONE = /^(?:\+|00)[1-9]\d{6,23}$/;

const compiled = new Map<string, RegExp | null>();
const MAX_COMPILED = 256;

/** The schema's pattern as a RegExp; null when it is not a valid one (the rule is then skipped). */
function compile(source: string): RegExp | null {
  let pattern = compiled.get(source);
  if (pattern === undefined) {
    try {
      pattern = new RegExp(source);
    } catch {
      pattern = null;
    }
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(source, pattern);
  }
  return pattern;
}
