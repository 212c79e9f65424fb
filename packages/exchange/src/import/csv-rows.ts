import { cellTooLarge, limitError, sizeText, tooManyColumns, type ImportLimits } from './limits.js';
import { ImportFileError } from './errors.js';

/** A record of a CSV file: its cells, and the line it starts on. */
export interface CsvRecord {
  cells: string[];
  line: number;
}

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/**
 * The records of a CSV file's text (CsvRecordReader), those each chunk completes together: an
 * async step a record would cost a promise and a microtask each. Each group is read as it is taken,
 * before the next chunk.
 */
export async function* csvRecords(
  chunks: AsyncIterable<string>,
  delimiter: string,
  limits: ImportLimits,
  file: string,
): AsyncGenerator<Iterable<CsvRecord>> {
  const reader = new CsvRecordReader(delimiter, limits, file);
  for await (const chunk of chunks) yield reader.records(chunk);
  yield reader.records(undefined);
}

/** An index `indexOf` gave, or the text's length for none. */
function found(index: number, text: string): number {
  return index < 0 ? text.length : index;
}

/**
 * CSV records from text chunks, in one pass over each character, as RFC 4180 and spreadsheets
 * write them: cells split by `delimiter`, a cell in double quotes may hold the delimiter, line
 * breaks and doubled quotes; a row ends at CRLF, LF or CR; empty lines are skipped; rows may have
 * any number of cells. A quote inside an unquoted cell is text (as Python's csv and spreadsheets
 * read it); anything but the delimiter or a line end after a closing quote is refused, as is a
 * quote never closed (a file cut short).
 *
 * Bounded as it reads, before a value is built: at most `maxColumns` cells a row, `maxCellBytes`
 * characters a cell and `maxRowBytes` a row, so no file makes it hold more than one row of text.
 *
 * A quoted cell starting with `=` is text a spreadsheet saved (it quotes text cells; only `=`
 * typed unquoted is a formula): it reads with an apostrophe before it, as `rxs export` protects
 * such text, and the row reader's `restoredText` takes the apostrophe off again.
 */
export class CsvRecordReader {
  /** The text not yet read into records: from the start of the current row. */
  private text = '';
  /** The next character of `text` to look at. */
  private at = 0;
  private cells: string[] = [];
  /** Where the current row and cell start in `text`. */
  private rowStart = 0;
  private cellStart = 0;
  /** Inside a quoted cell, between its quotes. */
  private inQuotes = false;
  /** The current cell's closing quote was read; only the delimiter or a line end may follow. */
  private closed = false;
  /** The line `at` is on, and the line the current row started on. */
  private line = 1;
  private rowLine = 1;
  private readonly delimiter: number;
  private readonly delimiterText: string;
  /**
   * Where the next delimiter, LF and CR are in `text` from where they were last looked for (its
   * length when there is none), or -1 when not known: unquoted text ends at the first of them, and
   * one native search a character kind costs a third of comparing each character. Forgotten when
   * `text` changes.
   */
  private nextDelimiter = -1;
  private nextLf = -1;
  private nextCr = -1;

  constructor(
    delimiter: string,
    private readonly limits: ImportLimits,
    private readonly file: string,
  ) {
    this.delimiter = delimiter.charCodeAt(0);
    this.delimiterText = delimiter.charAt(0);
  }

  /** The records `chunk` completes. */
  push(chunk: string): CsvRecord[] {
    return [...this.records(chunk)];
  }

  /** The last record, when the file does not end with a line break. */
  end(): CsvRecord[] {
    return [...this.records(undefined)];
  }

  /**
   * The records `chunk` completes (undefined: the text ended; then the last record), each read
   * when it is taken: a record and its cells are garbage before the next is made, instead of a
   * chunk's records living together.
   */
  *records(chunk: string | undefined): Generator<CsvRecord> {
    const final = chunk === undefined;
    if (!final) {
      this.text += chunk;
      this.forgetPositions();
    }
    for (let record = this.next(final); record; record = this.next(final)) yield record;
    const { text, at } = this;
    if (at - this.cellStart > this.limits.maxCellBytes) throw this.cellTooLarge();
    this.checkRow(at);
    if (final) {
      if (this.inQuotes)
        throw new ImportFileError(
          `${this.file} is not a readable CSV file: the quoted value that starts on line ${this.rowLine} or after is never closed. A quoted value is not closed: the file may be cut short; export or save it again.`,
        );
      if (this.cells.length > 0 || at > this.cellStart) {
        this.endCell(at);
        const cells = this.cells;
        this.cells = [];
        yield { cells, line: this.rowLine };
      }
    }
    // Keep only the current row's text.
    const { rowStart } = this;
    if (rowStart > 0) {
      this.text = text.slice(rowStart);
      this.forgetPositions();
      this.at -= rowStart;
      this.cellStart -= rowStart;
      this.rowStart = 0;
    }
  }

  /** The next record the text completes, else undefined (the text is read up to where it can be). */
  private next(final: boolean): CsvRecord | undefined {
    const { text, delimiter } = this;
    const length = text.length;
    let at = this.at;
    while (at < length) {
      const char = text.charCodeAt(at);
      if (this.inQuotes) {
        // Up to the next quote; a doubled quote is one quote of the text.
        const quote = text.indexOf('"', at);
        const until = quote < 0 ? length : quote;
        for (let i = text.indexOf('\n', at); i >= 0 && i < until; i = text.indexOf('\n', i + 1)) this.line++;
        if (quote < 0) {
          at = length;
          break;
        }
        if (quote + 1 >= length && !final) {
          // The quote closes the cell or starts a doubled quote: the next chunk says which.
          at = quote;
          break;
        }
        if (text.charCodeAt(quote + 1) === QUOTE) at = quote + 2;
        else {
          this.inQuotes = false;
          this.closed = true;
          at = quote + 1;
        }
        continue;
      }
      if (char === delimiter) {
        this.endCell(at);
        if (this.cells.length >= this.limits.maxColumns)
          throw tooManyColumns(
            this.limits,
            `${this.file}: line ${this.line} has more than ${this.limits.maxColumns.toLocaleString('en')} columns`,
          );
        at++;
        this.cellStart = at;
        continue;
      }
      if (char === LF || char === CR) {
        if (char === CR && at + 1 >= length && !final) break; // CRLF split between chunks
        const next = char === CR && text.charCodeAt(at + 1) === LF ? at + 2 : at + 1;
        // An empty line is no record.
        let record: CsvRecord | undefined;
        if (this.cells.length > 0 || at > this.cellStart) {
          this.endCell(at);
          this.checkRow(at);
          record = { cells: this.cells, line: this.rowLine };
          this.cells = [];
        }
        this.line++;
        this.rowLine = this.line;
        at = next;
        this.rowStart = at;
        this.cellStart = at;
        if (record) {
          this.at = at;
          return record;
        }
        continue;
      }
      if (this.closed)
        throw new ImportFileError(
          `${this.file} is not a readable CSV file: at line ${this.line} a quoted value is followed by ${JSON.stringify(text[at])} instead of the delimiter or the end of the line. Put the whole value in quotes, with each quote in it doubled (""), or save it again from the spreadsheet as CSV.`,
        );
      if (char === QUOTE && at === this.cellStart) {
        this.inQuotes = true;
        at++;
        continue;
      }
      // Unquoted text: up to the delimiter or the end of the line.
      at = this.unquotedEnd(at + 1);
    }
    this.at = at;
    return undefined;
  }

  private forgetPositions(): void {
    this.nextDelimiter = this.nextLf = this.nextCr = -1;
  }

  /** The first delimiter, LF or CR at or after `from`, else the text's length. */
  private unquotedEnd(from: number): number {
    const { text } = this;
    if (this.nextDelimiter < from) this.nextDelimiter = found(text.indexOf(this.delimiterText, from), text);
    if (this.nextLf < from) this.nextLf = found(text.indexOf('\n', from), text);
    if (this.nextCr < from) this.nextCr = found(text.indexOf('\r', from), text);
    return Math.min(this.nextDelimiter, this.nextLf, this.nextCr);
  }

  private endCell(end: number): void {
    const { text, cellStart } = this;
    if (end - cellStart > this.limits.maxCellBytes) throw this.cellTooLarge();
    let cell: string;
    if (this.closed) {
      cell = text.slice(cellStart + 1, end - 1);
      if (cell.includes('"')) cell = cell.replaceAll('""', '"');
      const first = cell.charCodeAt(0);
      if (first === 0x3d || first === 0xff1d) cell = `'${cell}`; // `=` or `＝`
      this.closed = false;
    } else cell = text.slice(cellStart, end);
    this.cells.push(cell);
  }

  /** The current row, as far as it is read (up to `end`), within its limit. */
  private checkRow(end: number): void {
    if (end - this.rowStart > this.limits.maxRowBytes)
      throw limitError(
        'maxRowBytes',
        this.limits.maxRowBytes,
        `${this.file}: the row at line ${this.rowLine} holds more than ${sizeText(this.limits.maxRowBytes)} of text, the most one row may hold: a row is one record, and a record cannot be that large. Split the values over several records.`,
      );
  }

  private cellTooLarge() {
    return cellTooLarge(this.limits, `${this.file}, line ${this.line}, column ${this.cells.length + 1}`);
  }
}
