import type { fragment } from 'xmlbuilder2';
import { xmlSafe } from './cells.js';

/** A node of xmlbuilder2 (the package exports its builders, not their types). */
export type XMLBuilder = ReturnType<typeof fragment>;

/*
 * xmlbuilder2 escapes "<", ">" and quotes, but leaves anything that looks like an entity or a
 * character reference ("&amp;", "&#10;") as it is. Escaping "&" ourselves first keeps user text
 * literal; character references keep tabs and line breaks in attribute values, which parsers
 * would otherwise read back as spaces.
 */

export function xmlAttribute(value: string): string {
  return xmlSafe(value)
    .replace(/&/g, '&amp;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;');
}

export function xmlText(value: string): string {
  return xmlSafe(value).replace(/&/g, '&amp;').replace(/\r/g, '&#13;');
}

/** Attributes for `ele`, each value escaped as above. */
export function xmlAttributes(attributes: Record<string, string | undefined>): Record<string, string> {
  const escaped: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes))
    if (value !== undefined) escaped[name] = xmlAttribute(value);
  return escaped;
}

export function serialize(node: XMLBuilder, level: number): string {
  return `${node.end({ headless: true, prettyPrint: true, wellFormed: true, offset: level })}\n`;
}

const CHILDREN_MARKER = 'rxs-children';

/** Marks where `splitAtMarker` cuts an element open, so its children can be streamed in between. */
export function childrenMarker(node: XMLBuilder): XMLBuilder {
  return node.com(CHILDREN_MARKER);
}

/**
 * Serialises an element that contains the children marker and returns what comes before and after
 * it: the element's start (all its attributes escaped by xmlbuilder2) and its end.
 */
export function splitAtMarker(node: XMLBuilder, level: number): [string, string] {
  const text = serialize(node, level);
  const marker = text.indexOf(`<!--${CHILDREN_MARKER}-->`);
  if (marker < 0) throw new Error('children marker missing');
  const head = text.slice(0, marker).replace(/[ \t]*$/, '');
  const tail = text.slice(marker + CHILDREN_MARKER.length + 7).replace(/^\r?\n/, '');
  return [head, tail];
}

/** A complete attribute value for hand-written XML: quotes and angle brackets escaped too. */
export function attr(value: string): string {
  return xmlAttribute(value).replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Complete element text for hand-written XML. */
export function text(value: string): string {
  return xmlText(value).replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
