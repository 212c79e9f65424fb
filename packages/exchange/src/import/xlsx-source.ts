import { eventLoopSlices } from '../event-loop.js';
import type ExcelJS from 'exceljs';
import { restoredText } from '../export/writers/csv-text.js';
import { EXPORT_SHEET, SheetNames, TRACES_SHEET } from '../export/writers/xlsx.js';
import { importLimits, RowBytes, tooManyColumns, type ImportLimits } from './limits.js';
import { ImportChoiceError, ImportFileError } from './errors.js';
import { fixedColumnOf, type Cell, type RowSource, type SourceRow } from './source-row.js';
import { openBoundedWorkbook, type BoundedWorkbook, type WorkbookSheet } from './xlsx-bounds.js';
import { CLI_WORDING, type ImportWording } from './wording.js';

export interface XlsxSourceOptions {
  /** The sheet to import; default: the topic's sheet of an export, else the only sheet. */
  sheet?: string;
  /** The topic imported into: an export names its sheet after it. */
  topicName?: string;
  /** How advice names the options (default: `rxs import`'s). */
  wording?: ImportWording;
  /** What reading the file may cost (default: DEFAULT_IMPORT_LIMITS). */
  limits?: Partial<ImportLimits>;
}

/**
 * OOXML's escape of a character XML cannot hold (`_x000D_`). A text's own `_x000D_` is written
 * with its underscore escaped: `_x005F_x000D_` by Excel, `_x005Fx000D_` by the export's writer.
 */
const OOXML_ESCAPE = /_x005F(?=x[0-9A-Fa-f]{4}_)|_x([0-9A-Fa-f]{4})_/g;

/**
 * Rows of one sheet of an Excel workbook, streamed: a topic's sheet of `rxs export --format xlsx`
 * (its Traces and Export sheets are not records) or a sheet made by hand, with a header row.
 * Numbers, booleans and dates keep their type; a formula cell is refused, since its value is what
 * the spreadsheet computed last, not data (except TRUE() and FALSE(), LibreOffice's yes/no cells).
 */
export class XlsxSource implements RowSource {
  readonly format = 'xlsx' as const;
  readonly notes: string[] = [];
  private chosen: string | undefined;
  private readonly limits: ImportLimits;

  constructor(
    private readonly file: string,
    private options: XlsxSourceOptions = {},
  ) {
    this.chosen = options.sheet;
    this.limits = importLimits(options.limits);
  }

  forTopic(topic: { name: string }): void {
    this.options.topicName ??= topic.name;
  }

  async *rows(): AsyncGenerator<SourceRow> {
    const workbook = await this.open();
    const sheet = this.choose(workbook.sheets);
    this.chosen = sheet.name;
    yield* this.rowsOf(workbook.rows(sheet));
  }

  /** The workbook, its sheets named; a file that is no workbook (a broken zip) is an ImportFileError. */
  private async open(): Promise<BoundedWorkbook> {
    const { default: excel } = await import('exceljs');
    try {
      return await openBoundedWorkbook(excel, this.file, this.limits);
    } catch (error) {
      if (error instanceof ImportFileError) throw error;
      throw new ImportFileError(
        `${this.file} cannot be read as an Excel workbook (${(error as Error).message}): it may be cut short or not an .xlsx file. Save it again from the spreadsheet.`,
      );
    }
  }

  /**
   * The sheet asked for, by name in any case; else the topic's sheet of an export, or the only
   * sheet besides an export's Traces and Export; without a topic, the first.
   */
  private choose(sheets: readonly WorkbookSheet[]): WorkbookSheet {
    if (sheets.length === 0) throw new ImportFileError(`${this.file} has no sheets.`);
    const wanted =
      this.chosen ??
      (this.options.topicName !== undefined
        ? new SheetNames([TRACES_SHEET, EXPORT_SHEET]).take(this.options.topicName)
        : undefined);
    if (wanted === undefined) return sheets[0]!;
    const named = sheets.find((sheet) => sheet.name.toLowerCase() === wanted.toLowerCase());
    if (named) return named;
    const candidates = sheets.filter((sheet) => sheet.name !== TRACES_SHEET && sheet.name !== EXPORT_SHEET);
    if (this.options.sheet === undefined && candidates.length === 1) return candidates[0]!;
    throw new ImportChoiceError(
      `${this.file} has ${this.options.sheet ? `no sheet "${this.options.sheet}"` : `no sheet named after the topic ("${wanted}")`}. ` +
        `Its sheets: ${sheets.map((sheet) => `"${sheet.name}"`).join(', ')}. ${(this.options.wording ?? CLI_WORDING).chooseSheet}`,
      { option: 'sheet', names: sheets.map((sheet) => sheet.name) },
    );
  }

  private async *rowsOf(sheet: AsyncIterable<ExcelJS.Row>): AsyncGenerator<SourceRow> {
    let header: string[] | undefined;
    let fromCsvExport = false;
    const turn = eventLoopSlices();
    try {
      for await (const row of sheet) {
        const cells = (row.values ?? []) as unknown[];
        // Values sit at their column's index: a row's length is its last column with a value.
        if (cells.length - 1 > this.limits.maxColumns)
          throw tooManyColumns(
            this.limits,
            `Row ${row.number} of sheet "${this.chosen}" has a value in column ${cells.length - 1}`,
          );
        if (!header) {
          header = [];
          const bytes = new RowBytes(this.limits, `the header row of sheet "${this.chosen}"`);
          for (let i = 1; i < cells.length; i++) {
            header[i] = textOf(cells[i]).trim();
            bytes.add(header[i]!, i);
          }
          fromCsvExport = header.includes(CSV_LINKS_COLUMN);
          continue;
        }
        yield rowOf(header, cells, `row ${row.number}`, this.limits, fromCsvExport);
        await turn();
      }
    } catch (error) {
      if (error instanceof ImportFileError) throw error;
      throw new ImportFileError(
        `${this.file} cannot be read (${(error as Error).message}): it may be cut short or not an .xlsx workbook. Save it again from the spreadsheet.`,
      );
    }
    if (!header)
      throw new ImportFileError(
        `Sheet "${this.chosen}" of ${this.file} is empty: it needs a header row naming the columns.`,
      );
  }
}

/**
 * The CSV export's last column; the XLSX export writes traces to a sheet of their own instead. A
 * sheet with it is the CSV export opened in a spreadsheet and saved as a workbook: its text still
 * carries the apostrophes the CSV put before formula starts (a spreadsheet opening a CSV keeps
 * them as text), and they come off as the CSV reader takes them off (`restoredText`).
 */
const CSV_LINKS_COLUMN = 'links';

function rowOf(
  header: readonly string[],
  cells: readonly unknown[],
  where: string,
  limits: ImportLimits,
  fromCsvExport: boolean,
): SourceRow {
  const row: SourceRow = { where, facts: {}, values: new Map(), problems: [] };
  const bytes = new RowBytes(limits, where);
  const unnamed: number[] = [];
  for (let i = 1; i < Math.max(header.length, cells.length); i++) {
    const column = header[i];
    const raw = cells[i];
    if (!column) {
      if (raw !== undefined && raw !== null && textOf(raw) !== '') unnamed.push(i);
      continue;
    }
    let cell = cellOf(raw, column, row.problems);
    if (fromCsvExport && 'text' in cell) cell = { text: restoredText(cell.text) };
    if ('text' in cell) bytes.add(cell.text, column);
    const fixed = fixedColumnOf(column);
    if (fixed === 'skip') continue;
    if (fixed) {
      const text = 'text' in cell ? cell.text : String(cell.value);
      if (text !== '') row.facts[fixed] = text;
    } else row.values.set(column, cell);
  }
  if (unnamed.length > 0)
    row.problems.push(
      `${unnamed.length === 1 ? `column ${unnamed[0]} has a value` : `columns ${unnamed.slice(0, 5).join(', ')}${unnamed.length > 5 ? ` and ${unnamed.length - 5} more` : ''} have values`} but no name in the header row.`,
    );
  return row;
}

function cellOf(raw: unknown, column: string, problems: string[]): Cell {
  if (raw === undefined || raw === null) return { text: '' };
  if (typeof raw === 'number' || typeof raw === 'boolean') return { value: raw };
  if (raw instanceof Date) return { value: dateText(raw) };
  if (typeof raw === 'object') {
    const object = raw as Record<string, unknown>;
    if ('formula' in object || 'sharedFormula' in object) {
      // LibreOffice saves a yes/no cell as the constant formula TRUE() or FALSE(): the formula is
      // the value (exceljs reads its cached result as 1, or not at all for 0).
      const constant = CONSTANT_BOOLEANS.get(String(object.formula ?? '').toUpperCase());
      if (constant !== undefined) return { value: constant };
      problems.push(
        `${column}: the cell is a formula (=${String(object.formula ?? object.sharedFormula).slice(0, 40)}), not a value. Replace it by its value (Paste Special, Values) and import again.`,
      );
      return { text: '' };
    }
    if ('error' in object) {
      problems.push(`${column}: the cell shows the error ${String(object.error)}; put a value in it.`);
      return { text: '' };
    }
  }
  return { text: textOf(raw) };
}

/** Formulas that are a constant yes or no, as LibreOffice writes boolean cells. */
const CONSTANT_BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ['TRUE()', true],
  ['FALSE()', false],
  ['TRUE', true],
  ['FALSE', false],
]);

/** A cell's text: rich text runs joined, a hyperlink's text, OOXML escapes decoded. */
function textOf(raw: unknown): string {
  if (raw === undefined || raw === null) return '';
  if (typeof raw === 'string')
    return raw.replace(OOXML_ESCAPE, (_, hex: string | undefined) =>
      hex === undefined ? '_' : String.fromCharCode(parseInt(hex, 16)),
    );
  if (typeof raw === 'object') {
    const object = raw as { richText?: { text: string }[]; text?: unknown };
    if (Array.isArray(object.richText)) return textOf(object.richText.map((run) => run.text).join(''));
    if (object.text !== undefined) return textOf(object.text);
  }
  return String(raw);
}

/** A date cell as a form's datetime component writes it: a date alone when it has no time of day. */
function dateText(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.replace('.000Z', 'Z');
}
