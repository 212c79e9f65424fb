/**
 * One voice: form-js checks a field as the user types and says "Field must have minimum value of
 * 1."; the service checks the same rules on save and says 'Field "Risk score" (risk_score) must be
 * at least 1, not 0'. The browser's messages are rewritten here in the service's words
 * (services/records/validation on the server), so a field never changes its wording on save.
 * Messages this file does not know pass through unchanged.
 */

interface FieldLike {
  key?: string;
  label?: string;
  type?: string;
}

const MAX_LABEL = 80;
const MAX_PREVIEW = 60;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** `Field "Risk score" (risk_score)`, or `Field "risk_score"` without a label: as the service names it. */
export function fieldName(field: FieldLike): string {
  const key = clip(field.key ?? '', MAX_LABEL);
  const label = field.label?.trim();
  return label ? `Field "${clip(label, MAX_LABEL)}" (${key})` : `Field "${key}"`;
}

/** A value inside a message: text quoted and clipped, numbers as they are. */
function preview(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(clip(value, MAX_PREVIEW));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return 'a value';
}

const shown = (value: unknown) =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : preview(value);

/** One form-js message in the service's words, or as it was. */
export function inServerWords(field: FieldLike, value: unknown, message: string): string {
  const name = fieldName(field);
  const text = typeof value === 'string' ? value : '';
  let match: RegExpExecArray | null;
  if (message === 'Field is required.')
    return field.type === 'checkbox' ? `${name} is required: it must be checked` : `${name} is required`;
  if ((match = /^Field must have minimum value of (.+)\.$/.exec(message)))
    return `${name} must be at least ${match[1]}, not ${shown(value)}`;
  if ((match = /^Field must have maximum value of (.+)\.$/.exec(message)))
    return `${name} must be at most ${match[1]}, not ${shown(value)}`;
  if ((match = /^Field must have minimum length of (.+)\.$/.exec(message)))
    return `${name} must have at least ${match[1]} characters (not counting leading and trailing spaces), not ${text.trim().length}`;
  if ((match = /^Field must have maximum length of (.+)\.$/.exec(message)))
    return `${name} must have at most ${match[1]} characters (not counting leading and trailing spaces), not ${text.trim().length}`;
  if ((match = /^Field must match pattern (.+)\.$/.exec(message)))
    return `${name} must match the pattern ${match[1]}, not ${preview(value)}`;
  if (message === 'Field must be a valid email.')
    return `${name} must be an e-mail address such as name@example.com, not ${preview(value)}`;
  return message;
}
