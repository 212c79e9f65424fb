import { stringify } from 'csv-stringify/sync';

/**
 * CSV text by RFC 4180, as csv-stringify writes it with `CSV_OPTIONS`, without its per-row set-up:
 * cells are joined with commas and rows end with CRLF. A cell is quoted when it holds a quote, a
 * comma, a line feed or a carriage return anywhere (a lone LF or CR too: Python's csv, LibreOffice
 * and Excel all end a row at either); quotes are doubled. Every other cell, leading and trailing
 * spaces included, is written as it is. Text starting with =, +, -, @, tab, CR (or their full-width
 * forms) gets a leading apostrophe so spreadsheets never run it; numbers do not. Inside text, a
 * semicolon, tab or line break before =, +, -, @ (after any quotes and apostrophes) gets an
 * apostrophe after it too (`protectedText`).
 */
export const CSV_OPTIONS = {
  record_delimiter: 'windows',
  escape_formulas: true,
  quoted_match: /[\r\n]/,
} as const;

const NEEDS_QUOTES = /[",\r\n]/;

/** Whether text starting with this character gets the apostrophe (numbers aside). */
function isFormulaStart(code: number): boolean {
  switch (code) {
    case 0x3d: // =
    case 0x2b: // +
    case 0x2d: // -
    case 0x40: // @
    case 0x09: // tab
    case 0x0d: // CR
    case 0xff1d:
    case 0xff0b:
    case 0xff0d:
    case 0xff20:
      return true;
    default:
      return false;
  }
}

const APOSTROPHE = 0x27;

/**
 * Whether text gets a leading apostrophe: a formula start, after any apostrophes of its own (the
 * importer takes one off text that has one more, csv-source.ts).
 */
export function needsApostrophe(text: string): boolean {
  let i = 0;
  while (text.charCodeAt(i) === APOSTROPHE) i++;
  return i < text.length && isFormulaStart(text.charCodeAt(i));
}

/**
 * A semicolon, tab or line break before a formula start, after any quotes and apostrophes. A
 * spreadsheet told to split at semicolons or tabs (LibreOffice's and Excel's import dialog, the
 * default in many locales) starts a cell after each of them even inside quotes, and one that
 * splits at either ends the row at a quoted line break: each is a cell start there. Commas are not:
 * a reader that splits at commas reads the quotes. Tab and CR are formula starts only at the start
 * of text: inside it, each starts a cell or row of its own and is checked as such.
 */
const INNER_CELL_START = /[;\t\r\n](?=["']*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/g;
/** What `protectedText` writes for one: an apostrophe after it. */
const PROTECTED_CELL_START = /([;\t\r\n])'(?=["']*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/g;

/**
 * Text as the CSV holds it: an apostrophe before a formula start at its start (`needsApostrophe`)
 * and after each semicolon, tab or line break followed by one (INNER_CELL_START), so that no cell a
 * spreadsheet makes of it starts a formula, whichever separator it splits at. `restoredText` gives
 * the text back.
 */
export function protectedText(text: string): string {
  const inner = text.replace(INNER_CELL_START, "$&'");
  return needsApostrophe(text) ? `'${inner}` : inner;
}

/**
 * The text `protectedText` was given: one apostrophe fewer at the start of text that starts with
 * apostrophes before a formula start, and after each semicolon, tab or line break followed by
 * apostrophes before one. Unambiguous, as the writer adds one to text that already has some.
 */
export function restoredText(text: string): string {
  // Most cells: nothing `protectedText` adds.
  if (!text.includes("'")) return text;
  const inner = text.replace(PROTECTED_CELL_START, '$1');
  return inner.startsWith("'") && needsApostrophe(inner.slice(1)) ? inner.slice(1) : inner;
}

/** One text cell as it appears in the row. */
export function csvText(text: string): string {
  if (text === '') return '';
  let value = protectedText(text);
  if (NEEDS_QUOTES.test(text)) value = `"${value.replaceAll('"', '""')}"`;
  return value;
}

/** Whether a cell is of a kind `csvText` writes (others go through csv-stringify itself). */
function isPlainCell(cell: unknown): cell is string | number | null | undefined {
  return typeof cell === 'string' || typeof cell === 'number' || cell === undefined || cell === null;
}

/** One cell: text as `csvText`, numbers as themselves, absent and null as nothing. */
export function csvCellText(cell: string | number | null | undefined): string {
  if (typeof cell === 'string') return csvText(cell);
  if (typeof cell === 'number') return `${cell}`;
  return '';
}

/**
 * For csv-stringify, which adds the apostrophe at the start itself: text protected inside, and
 * with apostrophes of its own before a formula start, one more.
 */
function withOwnApostrophe(cell: unknown): unknown {
  if (typeof cell !== 'string') return cell;
  const inner = cell.replace(INNER_CELL_START, "$&'");
  return cell.charCodeAt(0) === APOSTROPHE && needsApostrophe(cell) ? `'${inner}` : inner;
}

/** A whole row, CRLF included. */
export function csvRow(cells: readonly unknown[]): string {
  let row = '';
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    if (!isPlainCell(cell)) return stringify([cells.map(withOwnApostrophe)], CSV_OPTIONS);
    if (i > 0) row += ',';
    row += csvCellText(cell);
  }
  return `${row}\r\n`;
}

/**
 * Splits CSV text written by `csvRow` back into rows of cells, each cell kept exactly as written
 * (quotes and apostrophes included), so rows can be rearranged without changing a byte of any
 * cell. Text may arrive in pieces; `push` returns the rows completed so far.
 */
export class CsvRowSplitter {
  private rest = '';

  push(text: string): string[][] {
    const input = this.rest + text;
    const rows: string[][] = [];
    let position = 0;
    for (;;) {
      const row = readRow(input, position);
      if (!row) break;
      rows.push(row.cells);
      position = row.next;
    }
    this.rest = input.slice(position);
    return rows;
  }

  /** Whether text is left over that is not a whole row (a damaged file). */
  get pending(): boolean {
    return this.rest !== '';
  }
}

/** The row starting at `start`, or undefined when `text` ends before the row does. */
function readRow(text: string, start: number): { cells: string[]; next: number } | undefined {
  const cells: string[] = [];
  let position = start;
  for (;;) {
    let end: number;
    if (text.charCodeAt(position) === 0x22) {
      // Quoted: up to the quote that is not doubled.
      end = position + 1;
      for (;;) {
        const quote = text.indexOf('"', end);
        if (quote < 0) return undefined;
        if (text.charCodeAt(quote + 1) === 0x22) {
          end = quote + 2;
          continue;
        }
        if (quote + 1 >= text.length) return undefined;
        end = quote + 1;
        break;
      }
    } else {
      // Unquoted: holds neither a comma nor CRLF.
      const comma = text.indexOf(',', position);
      const crlf = text.indexOf('\r\n', position);
      if (crlf < 0) return undefined;
      end = comma >= 0 && comma < crlf ? comma : crlf;
    }
    cells.push(text.slice(position, end));
    if (text.charCodeAt(end) === 0x2c) {
      position = end + 1;
      continue;
    }
    if (end + 1 >= text.length) return undefined;
    // CRLF ends the row.
    return { cells, next: end + 2 };
  }
}
