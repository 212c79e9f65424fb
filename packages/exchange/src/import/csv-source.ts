import { stat } from 'node:fs/promises';
import { eventLoopSlices } from '../event-loop.js';
import { restoredText } from '../export/writers/csv-text.js';
import { csvRecords, type CsvRecord } from './csv-rows.js';
import { importLimits, type ImportLimits } from './limits.js';
import { decodeTextFile } from './text-decoding.js';
import { ImportFileError } from './errors.js';
import {
  fixedColumnOf,
  ROLE_LINKS_PREFIX,
  type FactColumn,
  type RowSource,
  type SourceRow,
} from './source-row.js';

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
  /** The file as the last rows() or rowChunks() found it when it began reading (stampOf). */
  private stamp: string | undefined;
  private readonly limits: ImportLimits;

  constructor(
    private readonly file: string,
    limits: Partial<ImportLimits> = {},
  ) {
    this.limits = importLimits(limits);
  }

  async *rows(): AsyncGenerator<SourceRow> {
    const turn = eventLoopSlices();
    for await (const rows of this.rowChunks())
      for (const row of rows) {
        yield row;
        // Most rows need no turn: awaiting nothing would still cost a microtask a row.
        const pause = turn();
        if (pause) await pause;
      }
  }

  /**
   * rows() in chunks: the rows each chunk of the file completes, each made when it is taken. A file
   * saved again while it is read is refused once read: its rows may be half old, half new.
   */
  async *rowChunks(): AsyncGenerator<Iterable<SourceRow>> {
    const stamp = (this.stamp = await stampOf(this.file));
    yield* this.read();
    await this.unchangedSince(stamp);
  }

  /**
   * The rows again, read from the file: parsing a CSV costs less than writing and reading a copy of
   * its rows. A file saved again since rows() or rowChunks() began reading it is refused, before and
   * after.
   */
  async *rowsAgain(): AsyncGenerator<Iterable<SourceRow>> {
    const stamp = this.stamp;
    await this.unchangedSince(stamp);
    yield* this.read();
    await this.unchangedSince(stamp);
  }

  private async unchangedSince(stamp: string | undefined): Promise<void> {
    if (stamp === undefined || (await stampOf(this.file)) === stamp) return;
    throw new ImportFileError(
      `${this.file} changed while it was imported (it was saved again after the import began reading it): the rows checked would not be the rows counted. Import it again once no program is writing it.`,
    );
  }

  /** The file's rows, those each chunk of it completes together, each made when it is taken. */
  private async *read(): AsyncGenerator<Iterable<SourceRow>> {
    const delimiter = this.delimiter ?? (this.delimiter = await sniffDelimiter(this.file));
    const read: HeaderRead = { header: undefined, fixed: [] };
    for await (const records of csvRecords(decodeTextFile(this.file), delimiter, this.limits, this.file))
      yield this.rowsOf(records, read);
    if (!read.header)
      throw new ImportFileError(`${this.file} is empty: a CSV import needs a header row naming the columns.`);
  }

  private *rowsOf(records: Iterable<CsvRecord>, read: HeaderRead): Generator<SourceRow> {
    for (const { cells, line } of records) {
      if (read.header) {
        yield rowOf(read.header, read.fixed, cells, `line ${line}`);
        continue;
      }
      read.header = checkHeader(cells, this.file);
      read.fixed = read.header.map(fixedColumnOf);
      const links = read.header.some((column) => column === 'links' || column.startsWith(ROLE_LINKS_PREFIX));
      if (links && !this.notes.some((n) => n.startsWith('links')))
        this.notes.push('links: traces are not imported (rxs import writes records only).');
    }
  }
}

/** The header of a read, once met, and what each of its columns is: a fact, left out, or a value (undefined). */
interface HeaderRead {
  header: string[] | undefined;
  fixed: (FactColumn | undefined)[];
}

/** What changes when a file is saved again: its size, its time of change (in nanoseconds), its inode. */
async function stampOf(file: string): Promise<string> {
  const { size, mtimeNs, ino } = await stat(file, { bigint: true });
  return `${size}:${mtimeNs}:${ino}`;
}

function rowOf(
  header: readonly string[],
  fixedColumns: readonly (FactColumn | undefined)[],
  cells: readonly string[],
  where: string,
): SourceRow {
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
    const fixed = fixedColumns[i];
    if (fixed === 'skip') continue;
    if (fixed) {
      if (text !== '') row.facts[fixed] = text;
    } else row.values.set(column, { text });
  }
  return row;
}

function checkHeader(cells: string[], file: string): string[] {
  const header = cells.map((cell) => cell.trim());
  if (/^<(\?xml|!DOCTYPE)\b/i.test(header[0] ?? ''))
    throw new ImportFileError(
      `${file} holds XML (it starts with "${header[0]!.slice(0, 9)}"), not comma-separated values. A ReqIF file imports under its own name (.reqif); a spreadsheet saved as XML, save it again as CSV or XLSX.`,
    );
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
