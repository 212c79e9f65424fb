/**
 * User text as a document shows it: every character stays, and those that would not be seen or
 * that documents cannot hold become a visible mark. Line breaks (LF, CR, CRLF) and tabs keep their
 * meaning; other control characters, noncharacters and lone surrogates become "[U+XXXX]".
 */

/** C0 and C1 controls but tab and line feed (carriage returns are line breaks first), DEL, noncharacters, lone surrogates. */
const INVISIBLE =
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\uFDD0-\uFDEF\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function codePointMark(codePoint: number): string {
  return `[U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}]`;
}

export function visibleText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(INVISIBLE, (char) => codePointMark(char.charCodeAt(0)));
}

/** The text's lines, each shown as a paragraph line of its own. */
export function visibleLines(text: string): string[] {
  return visibleText(text).split('\n');
}
