import { eventLoopSlices } from '../event-loop.js';
import { parse } from 'csv-parse';
import { pipeline, Readable } from 'node:stream';
import { restoredText } from '../export/writers/csv-text.js';
import {
  cellTooLarge,
  importLimits,
  limitError,
  sizeText,
  tooManyColumns,
  type ImportLimits,
} from './limits.js';
import { decodeTextFile } from './text-decoding.js';
import { ImportFileError } from './errors.js';
import { FIXED_COLUMNS, type RowSource, type SourceRow } from './source-row.js';

/** csv-parse's codes for a quoted value that is not closed, or closed before the value ends. */
const QUOTE_ERRORS: ReadonlySet<string> = new Set([
  'CSV_QUOTE_NOT_CLOSED',
  'CSV_INVALID_CLOSING_QUOTE',
  'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE',
]);

/**
 * Rows of a CSV file, as `rxs export --format csv` writes it and as spreadsheets save it: comma,
 * semicolon or tab separated (whichever the header uses most), UTF-8 or UTF-16, quoted per RFC
 * 4180. The export's apostrophe before a formula start is taken off again; a cell that is a
 * formula (`=...`) is refused, since the value is what the spreadsheet computed, not the text.
 */
export class CsvSource implements RowSource {
  readonly format = 'csv' as const;
  readonly notes: string[] = [];
  private delimiter: string | undefined;
  private readonly limits: ImportLimits;

  constructor(
    private readonly file: string,
    limits: Partial<ImportLimits> = {},
  ) {
    this.limits = importLimits(limits);
  }

  async *rows(): AsyncGenerator<SourceRow> {
    const delimiter = this.delimiter ?? (this.delimiter = await sniffDelimiter(this.file));
    // pipeline(), not pipe(): a bad byte deep in the file ends the loop below with its error.
    const parser = pipeline(
      Readable.from(boundedShape(decodeTextFile(this.file), delimiter, this.limits, this.file)),
      parse({
        delimiter,
        bom: true,
        relax_column_count: true,
        skip_empty_lines: true,
        info: true,
        max_record_size: this.limits.maxRowBytes,
      }),
      () => {},
    );
    let header: string[] | undefined;
    // Where the record being read starts: the line after the previous one ended.
    let line = 1;
    const turn = eventLoopSlices();
    try {
      for await (const { record: cells, info } of parser as AsyncIterable<{
        record: string[];
        info: { lines: number };
      }>) {
        if (!header) {
          header = checkHeader(cells, this.file);
          if (header.includes('links') && !this.notes.some((n) => n.startsWith('links')))
            this.notes.push('links: traces are not imported (rxs import writes records only).');
        } else yield rowOf(header, cells, `line ${line}`);
        line = info.lines + 1;
        await turn();
      }
    } catch (error) {
      if (error instanceof ImportFileError) throw error;
      const code = (error as { code?: string }).code;
      if (code === 'CSV_MAX_RECORD_SIZE')
        throw limitError(
          'maxRowBytes',
          this.limits.maxRowBytes,
          `${this.file}: the row at line ${(error as { lines?: number }).lines ?? line} holds more than ${sizeText(this.limits.maxRowBytes)} of text, the most one row may hold: a row is one record, and a record cannot be that large. Split the values over several records.`,
        );
      const message = (error as Error).message;
      throw new ImportFileError(
        `${this.file} is not a readable CSV file after line ${line}: ${message}. ` +
          (code !== undefined && QUOTE_ERRORS.has(code)
            ? 'A quoted value is not closed: the file may be cut short; export or save it again.'
            : 'Save it again from the spreadsheet as CSV.'),
      );
    }
    if (!header)
      throw new ImportFileError(`${this.file} is empty: a CSV import needs a header row naming the columns.`);
  }
}

function rowOf(header: readonly string[], cells: readonly string[], where: string): SourceRow {
  const row: SourceRow = { where, facts: {}, values: new Map(), problems: [] };
  if (cells.length !== header.length)
    row.problems.push(
      `it has ${cells.length} cells where the header has ${header.length} columns: the file may be cut short, or a value holds the delimiter without quotes.`,
    );
  for (let i = 0; i < header.length; i++) {
    const column = header[i]!;
    const cell = cells[i] ?? '';
    if (cell.startsWith('=') || cell.startsWith('＝'))
      row.problems.push(
        `${column}: "${cell.slice(0, 40)}" is a spreadsheet formula, not a value. Write the value, or put an apostrophe before it to import the text as it is.`,
      );
    // The apostrophes `rxs export` adds against formulas (csv-text.ts protectedText) come off again.
    const text = restoredText(cell);
    const fixed = FIXED_COLUMNS.get(column);
    if (fixed === 'skip') continue;
    if (fixed) {
      if (text !== '') row.facts[fixed] = text;
    } else row.values.set(column, { text });
  }
  return row;
}

function checkHeader(cells: string[], file: string): string[] {
  const header = cells.map((cell) => cell.trim());
  const seen = new Set<string>();
  for (const [i, column] of header.entries()) {
    if (column === '')
      throw new ImportFileError(
        `${file}: column ${i + 1} of the header has no name. Name it after a field, or delete the column.`,
      );
    if (seen.has(column))
      throw new ImportFileError(`${file}: the header names "${column}" twice. Keep one of the two columns.`);
    seen.add(column);
  }
  return header;
}

/**
 * The file's text, after checking as it passes that no row has more than `maxColumns` cells and
 * no cell more than `maxCellBytes` characters: the parser would otherwise build a row of millions
 * of cells, or a cell of the whole file, before anything could look at it. Quotes toggle as in RFC
 * 4180 (a doubled quote toggles twice): a delimiter or line break between them is text.
 *
 * The text is unchanged but for a quoted cell starting with `=`: it is text, and reads as if the
 * export had protected it (an apostrophe before the `=`, which `restoredText` takes off). A
 * spreadsheet saves a cell's value, never its formula, and quotes the text cells it saves
 * (LibreOffice every one, by default); only `=` typed unquoted is a formula written for a
 * spreadsheet to compute, refused. The export itself never quotes a cell starting with `=`.
 */
async function* boundedShape(
  chunks: AsyncIterable<string>,
  delimiter: string,
  limits: ImportLimits,
  file: string,
): AsyncGenerator<string> {
  const separator = delimiter.charCodeAt(0);
  let quoted = false;
  let columns = 1;
  let cell = 0;
  let line = 1;
  for await (const read of chunks) {
    let chunk = read;
    /** Where quoted cells start with `=`: an apostrophe goes before each. */
    let quotedFormulaStarts: number[] | undefined;
    for (let i = 0; i < chunk.length; i++) {
      const char = chunk.charCodeAt(i);
      if (char === 0x0a) line++;
      // The cell's first character was its opening quote.
      if (cell === 1 && quoted && (char === 0x3d || char === 0xff1d)) (quotedFormulaStarts ??= []).push(i);
      if (char === 0x22) quoted = !quoted;
      else if (!quoted && char === separator) {
        cell = 0;
        if (++columns > limits.maxColumns)
          throw tooManyColumns(
            limits,
            `${file}: line ${line} has more than ${limits.maxColumns.toLocaleString('en')} columns`,
          );
        continue;
      } else if (!quoted && (char === 0x0a || char === 0x0d)) {
        columns = 1;
        cell = 0;
        continue;
      }
      if (++cell > limits.maxCellBytes)
        throw cellTooLarge(limits, `${file}, line ${line}, column ${columns}`);
    }
    if (quotedFormulaStarts) {
      let protectedChunk = '';
      let from = 0;
      for (const at of quotedFormulaStarts) {
        protectedChunk += `${chunk.slice(from, at)}'`;
        from = at;
      }
      chunk = protectedChunk + chunk.slice(from);
    }
    // The parser turns a chunk into rows in one synchronous step: small chunks keep it short.
    for (let start = 0; start < chunk.length;) {
      let end = Math.min(start + PARSE_CHUNK, chunk.length);
      if (end < chunk.length && isHighSurrogate(chunk.charCodeAt(end - 1))) end--;
      yield chunk.slice(start, end);
      start = end;
    }
  }
}

/** Characters the CSV parser takes at a time: a few hundred rows, a millisecond or two. */
const PARSE_CHUNK = 16 * 1024;

/** The first half of a character outside the Basic Multilingual Plane: a chunk never ends between the halves. */
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** The delimiter of the header line: the one of comma, semicolon and tab it uses most outside quotes. */
async function sniffDelimiter(file: string): Promise<string> {
  let first = '';
  for await (const text of decodeTextFile(file)) {
    first += text;
    if (/[\r\n]/.test(first) || first.length > 1 << 20) break;
  }
  const counts = new Map([
    [',', 0],
    [';', 0],
    ['\t', 0],
  ]);
  let quoted = false;
  for (const char of first) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ',';
  for (const [char, count] of counts) if (count > counts.get(best)!) best = char;
  return best;
}
