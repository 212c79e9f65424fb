/** Turns values into text for formats whose cells or attributes are strings. */

const isScalar = (value: unknown) => value === null || typeof value !== 'object';

/**
 * One value as text: scalars as themselves, a list of scalars (a checklist) joined with "; ",
 * objects and lists of objects (dynamiclists) as compact JSON. Absent and null are empty.
 */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (isScalar(value)) return String(value);
  if (Array.isArray(value) && value.every(isScalar)) {
    return value.map((item) => (item === null || item === undefined ? '' : String(item))).join('; ');
  }
  return JSON.stringify(value);
}

// Characters XML 1.0 does not allow, lone surrogates included (matched as code points with /u).
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Replaces characters an XML file cannot hold (control characters, lone surrogates) with U+FFFD. */
export function xmlSafe(text: string): string {
  return text.replace(NOT_XML_CHAR, '\uFFFD');
}
