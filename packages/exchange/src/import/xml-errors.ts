import { ImportFileError } from './errors.js';

/** A place in an XML text: line and column from 1, columns in characters, as saxes counts them. */
export interface XmlPosition {
  line: number;
  column: number;
}

/** A saxes error ("12:40: disallowed character.") as its place and its words. */
export function saxesErrorParts(error: Error): { at?: XmlPosition; what: string } {
  const first = error.message.split('\n')[0]!;
  const match = /^(\d+):(\d+): (.*)$/.exec(first);
  if (!match) return { what: first };
  return { at: { line: Number(match[1]), column: Number(match[2]) }, what: match[3]! };
}

/** Comments, CDATA sections and processing instructions: the places an `&` may stand alone. */
const RAW_SECTIONS = [
  ['<!--', '-->'],
  ['<![CDATA[', ']]>'],
  ['<?', '?>'],
] as const;
/** Characters looked at past a character: the longest section opener, a reference's name. */
const LOOKAHEAD = 64;
/** A character or entity reference; its name is checked by the parser. */
const REFERENCE = /^&(?:#[0-9]+|#x[0-9A-Fa-f]+|[^\s&<>"';#][^\s&<>"';]*);/;

const before = (a: XmlPosition, b: XmlPosition) =>
  a.line < b.line || (a.line === b.line && a.column < b.column);

/**
 * Where the text has its first `&` that starts no reference (`&amp;`, `&#160;`), outside
 * comments, CDATA sections and processing instructions, if that is before `until`. saxes reads such
 * an `&` as the start of an entity name up to the next `;`, so it reports the error far after it,
 * often as an element left open at the end of the file: this finds the place a person must fix.
 */
export async function firstBareAmpersand(
  chunks: AsyncIterable<string>,
  until: XmlPosition,
): Promise<XmlPosition | undefined> {
  let line = 1;
  let column = 0;
  let closer: string | undefined;
  let carry = '';
  const scan = (text: string, final: boolean): XmlPosition | 'past' | undefined => {
    let i = 0;
    while (i < text.length && (final || text.length - i >= LOOKAHEAD)) {
      if (!before({ line, column: column + 1 }, until)) return 'past';
      const c = text[i]!;
      if (closer !== undefined) {
        if (text.startsWith(closer, i)) {
          i += closer.length;
          column += closer.length;
          closer = undefined;
          continue;
        }
      } else if (c === '&') {
        if (!REFERENCE.test(text.slice(i, i + LOOKAHEAD))) return { line, column: column + 1 };
      } else if (c === '<') {
        const section = RAW_SECTIONS.find(([open]) => text.startsWith(open, i));
        if (section) {
          i += section[0].length;
          column += section[0].length;
          closer = section[1];
          continue;
        }
      }
      // A line ends at LF, CR LF or a lone CR; a surrogate pair is one character.
      if (c === '\n' || (c === '\r' && text[i + 1] !== '\n')) {
        line++;
        column = 0;
      } else if (c !== '\r' && !(c >= '\uDC00' && c <= '\uDFFF')) column++;
      i++;
    }
    carry = text.slice(i);
    return undefined;
  };
  for await (const chunk of chunks) {
    const found = scan(carry + chunk, false);
    if (found !== undefined) return found === 'past' ? undefined : found;
  }
  const found = scan(carry, true);
  return found === 'past' ? undefined : found;
}

/**
 * A file refused for its DOCTYPE: an XML parser that read the DTD it declares could read other files
 * or addresses its entities name (XXE), or expand nested entities until a short file is gigabytes.
 * The import reads no DTD, and a ReqIF file (its schema an XSD) has no use for one.
 */
export function doctypeRefused(file: string): ImportFileError {
  return new ImportFileError(
    `${file} declares a DOCTYPE (<!DOCTYPE …>): RXS reads no DTD and expands no entity one declares, and a ReqIF file needs neither. Export the file again without a DOCTYPE, or delete the declaration from it.`,
  );
}
