import { createRequire } from 'node:module';
import { PassThrough, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type ExcelJS from 'exceljs';
import { ExportDataError } from '../errors.js';
import type { ExportedRecord, ExportedTrace, ExportPart, ExportWriter } from '../model.js';
import { cellText, xmlSafe } from './cells.js';
import { RECORD_COLUMNS, recordFacts, SemanticColumns } from './columns.js';
import { closeOutput, whenDrained } from './output.js';
import { Spool } from './spool.js';
import { ExportTracker, type TopicSummary } from './tracker.js';

export interface XlsxWriterOptions {
  /** Where a topic's records wait until its columns are known (default: the system temp folder). */
  tempDir?: string;
}

export const TRACES_SHEET = 'Traces';
export const EXPORT_SHEET = 'Export';
/** Excel refuses longer cell texts; longer values are cut, end with this marker and are reported. */
export const MAX_CELL_TEXT = 32_767;
export const TRUNCATION_MARKER = ' [truncated]';
/** Columns of a sheet in Excel and LibreOffice (XFD). */
export const MAX_SHEET_COLUMNS = 16_384;

const ROWS_BETWEEN_YIELDS = 256;
const TRACE_COLUMNS = [
  '_id',
  'relation_types',
  'link_type',
  'source_id',
  'source_readable_id',
  'source_type',
  'target_id',
  'target_readable_id',
  'target_type',
  'suspect',
];
/**
 * After them when the traces name roles of the tenant's trace model: the trace as the role reads it,
 * "<role_from> <role> <role_to>" (TC_001 verifies REQ_001), and how it reads back (`role_backward`).
 */
const ROLE_COLUMNS = ['role_from', 'role', 'role_to', 'role_backward'];

/** A topic needs more columns than an XLSX sheet has; nothing usable was written. */
export class SheetTooWideError extends ExportDataError {
  override name = 'SheetTooWideError';
  override readonly code = 'RXS_ERR_SHEET_TOO_WIDE';

  constructor(
    readonly topicName: string,
    readonly revisionId: string,
    readonly columns: number,
  ) {
    super(
      `"${topicName}" (revision ${revisionId}) needs ${columns} columns, more than the ` +
        `${MAX_SHEET_COLUMNS.toLocaleString('en-US')} an XLSX sheet holds: its records carry many keys that are not ` +
        `fields of its form. Export it as CSV or JSON, or remove the stray keys from those records.`,
    );
  }
}

type Cell = string | number | boolean | null | { richText: { text: string }[] };

/**
 * A workbook written with exceljs's streaming writer: one sheet per topic (header row bold and
 * frozen, one column per semantic name after `_id`, `name`, `version`, `topic_revision_id`), a
 * `Traces` sheet when traces were exported (with the trace model's role of each trace, when the
 * traces name roles), and an `Export` sheet last with the export time,
 * servers, revision ids, per-topic counts and warnings.
 *
 * A topic's records wait in a temporary file until its `topic-end` (when keys met only in record
 * data are known as columns), then become its sheet; memory stays flat.
 *
 * Values are written as typed cells: numbers and booleans as such, everything else as text cells
 * (checklists joined with "; ", objects as JSON). Text cells are never formulas, so "=cmd" stays
 * inert; text that starts like a formula is also given the Text number format, so that editing
 * the cell in Excel does not turn it into one.
 *
 * Text cells are inline strings (`<is><t xml:space="preserve">`), so leading and trailing spaces,
 * tabs and line breaks survive LibreOffice and Excel. What XML cannot hold as it is is written
 * as OOXML `_xHHHH_` escapes, which both decode: CR (XML readers turn it into LF), the other C0
 * controls, U+FFFE and U+FFFF, and an `_x` sequence of the text itself (`_x005F_` escapes it).
 * What cannot be kept is changed and reported in `warnings`, naming the record and field: DEL is
 * removed (exceljs drops it and LibreOffice does not decode `_x007F_`), a lone surrogate becomes
 * U+FFFD, and a text over 32,767 characters is cut.
 */
export class XlsxWriter implements ExportWriter {
  readonly extension = 'xlsx';
  private readonly tracker = new ExportTracker();
  /** Between exceljs and `out`, so that a failed export can be cut off cleanly. */
  private readonly zip = new PassThrough();
  /** Created on the first part: exceljs is large, so it is loaded only when an XLSX is written. */
  private book: ExcelJS.stream.xlsx.WorkbookWriter | undefined;
  private readonly sheetNames = new SheetNames([TRACES_SHEET, EXPORT_SHEET]);
  private readonly sheetOfTopic: string[] = [];
  private spool: Spool<ExportedRecord> | undefined;
  private tracesSheet: ExcelJS.Worksheet | undefined;
  private completed = false;
  /** Values changed to fit the format, one sentence each (also on the Export sheet). */
  readonly warnings: string[] = [];

  constructor(
    private readonly out: Writable,
    private readonly options: XlsxWriterOptions = {},
  ) {
    this.zip.pipe(out);
  }

  private get workbook(): ExcelJS.stream.xlsx.WorkbookWriter {
    if (!this.book) throw new Error('The XLSX workbook is used before the first part was written.');
    return this.book;
  }

  async write(part: ExportPart): Promise<void> {
    if (!this.book) {
      const { default: excel } = await import('exceljs');
      // Every date in the file is the export's moment, not the clock's: an export as of a moment
      // then equals, byte for byte, the one taken at that moment.
      const when = part.kind === 'header' ? new Date(part.header.exportedAt) : new Date();
      // `created` and `modified` are options of exceljs that its types leave out.
      const options = {
        stream: this.zip,
        useStyles: true,
        useSharedStrings: false,
        created: when,
        modified: when,
      };
      this.book = withDatedZipEntries(
        when,
        () =>
          new excel.stream.xlsx.WorkbookWriter(
            options as unknown as ExcelJS.stream.xlsx.WorkbookStreamWriterOptions,
          ),
      );
    }
    this.tracker.observe(part);
    switch (part.kind) {
      case 'topic':
        this.spool = new Spool(this.options.tempDir);
        return;
      case 'record':
        return this.spool?.append(part.record);
      case 'topic-end':
        return this.writeTopicSheet(this.tracker.topics.at(-1)!);
      case 'traces':
        return this.addTraceRows(part.traces);
      default:
        return;
    }
  }

  close(): Promise<void> {
    return closeOutput(
      this.out,
      this.tracker.ended,
      () => this.finish(),
      () => this.cleanUp(),
    );
  }

  private async writeTopicSheet(summary: TopicSummary): Promise<void> {
    const name = this.sheetNames.take(summary.topic.name);
    this.sheetOfTopic.push(name);
    const columns = new SemanticColumns(RECORD_COLUMNS).add(summary.fields);
    const headers = [...RECORD_COLUMNS, ...columns.headers];
    if (headers.length > MAX_SHEET_COLUMNS) {
      await this.spool?.dispose();
      this.spool = undefined;
      throw new SheetTooWideError(summary.topic.name, summary.topic.revisionId, headers.length);
    }
    const sheet = this.addSheet(name, headers, [26, 14, 30, 10, 26]);
    const spool = this.spool;
    this.spool = undefined;
    try {
      let rows = 0;
      for await (const record of spool?.replay() ?? []) {
        const values = [...recordFacts(record), ...columns.values(record)];
        addRow(sheet, values, (index, change) => {
          const field = headers[index] ?? '';
          this.warnings.push(
            `Record ${record.readableId} (_id ${record.id}) of "${summary.topic.name}", field "${field}": ${change}`,
          );
        });
        if (++rows % ROWS_BETWEEN_YIELDS === 0) await whenDrained(this.zip);
      }
    } finally {
      await spool?.dispose();
    }
    sheet.commit();
  }

  private async addTraceRows(traces: readonly ExportedTrace[]): Promise<void> {
    const { roles } = this.tracker;
    const withRoles = roles.all.length > 0;
    this.tracesSheet ??= this.addSheet(
      TRACES_SHEET,
      withRoles ? [...TRACE_COLUMNS, ...ROLE_COLUMNS] : TRACE_COLUMNS,
      [26, 24, 16, 26, 16, 14, 26, 16, 14, 9, 16, 16, 16, 16],
    );
    for (const trace of traces) {
      const { id, relationTypes, linkType, source, target, suspect } = trace;
      const link = withRoles ? roles.of(trace) : undefined;
      addRow(this.tracesSheet, [
        id,
        relationTypes.join('; '),
        linkType ?? null,
        source.id,
        source.readableId ?? null,
        source.type,
        target.id,
        target.readableId ?? null,
        target.type,
        suspect,
        ...(link
          ? [
              link.from.readableId ?? link.from.id,
              link.role.forward_name,
              link.to.readableId ?? link.to.id,
              link.role.backward_name,
            ]
          : []),
      ]);
    }
    await whenDrained(this.zip);
  }

  private async finish(): Promise<void> {
    if (this.tracker.withTraces) await this.addTraceRows([]);
    this.tracesSheet?.commit();
    this.writeExportSheet();
    await this.workbook.commit();
    // Until the zip has passed its last byte on, `out` must not be ended (the pipe ends it).
    await finished(this.zip);
    this.completed = true;
  }

  private writeExportSheet(): void {
    const { header, topics, traces } = this.tracker;
    const warnings = [...this.tracker.warnings, ...this.warnings];
    const sheet = this.workbook.addWorksheet(EXPORT_SHEET);
    sheet.columns = [
      { width: 26 },
      { width: 30 },
      { width: 26 },
      { width: 26 },
      { width: 10 },
      { width: 10 },
      { width: 26 },
      { width: 10 },
    ];
    const bold = (row: ExcelJS.Row) => {
      row.font = { bold: true };
      return row;
    };
    const facts: [string, Cell][] = [
      ['Exported at', header?.exportedAt ?? ''],
      ['Techdoc server', header?.servers.techdoc ?? ''],
      ['Records server', header?.servers.records ?? ''],
      ['Tracer server', header?.servers.tracer ?? ''],
      ['Revision ids requested', (header?.revisionIds ?? []).join(', ')],
      ['Traces', this.tracker.withTraces ? traces.length : 'not exported'],
    ];
    for (const fact of facts) addRow(sheet, fact);
    addRow(sheet, []);
    bold(
      addRow(sheet, [
        'Topic',
        'Sheet',
        'Revision id',
        'Latest revision id',
        'Version',
        'Status',
        'History id',
        'Records',
        'Approved by',
        'Approved at',
        'Approval meaning',
        'Approval reason',
        'Signature',
      ]),
    );
    topics.forEach(({ topic, recordCount }, index) => {
      const { name, revisionId, latestRevisionId, version, status, historyId, approval } = topic;
      addRow(sheet, [
        name,
        this.sheetOfTopic[index] ?? '',
        revisionId,
        latestRevisionId,
        version,
        status,
        historyId,
        recordCount,
        approval ? (approval.byEmail ?? approval.by) : '',
        approval?.at ?? '',
        approval?.meaning ?? '',
        approval?.reason ?? '',
        approval?.signature ?? '',
      ]);
    });
    if (warnings.length > 0) {
      addRow(sheet, []);
      bold(addRow(sheet, ['Warnings']));
      for (const warning of warnings) addRow(sheet, [warning]);
    }
    sheet.commit();
  }

  private addSheet(name: string, headers: readonly string[], widths: readonly number[]): ExcelJS.Worksheet {
    const sheet = this.workbook.addWorksheet(name, { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.columns = headers.map((_, index) => ({ width: widths[index] ?? 24 }));
    const headerRow = addRow(sheet, headers, undefined, { bold: true });
    headerRow.commit();
    return sheet;
  }

  private async cleanUp(): Promise<void> {
    await this.spool?.dispose();
    if (!this.completed) {
      // A failed export: stop the half-written zip before `out` is ended.
      this.zip.unpipe(this.out);
      this.zip.destroy();
    }
  }
}

/**
 * Adds a row of values; `onChange` hears of each value that had to be changed to fit (by its index
 * in `values`). The font is set before the row is committed (a streamed row is final then).
 */
export function addRow(
  sheet: ExcelJS.Worksheet,
  values: readonly unknown[],
  onChange?: (index: number, change: string) => void,
  font?: Partial<ExcelJS.Font>,
): ExcelJS.Row {
  const cells = values.map((value, index) => toCell(value, (change) => onChange?.(index, change)));
  const row = sheet.addRow(cells.map((cell) => cell.value));
  if (font) row.font = font;
  cells.forEach((cell, index) => {
    if (cell.formulaLike) row.getCell(index + 1).numFmt = '@';
  });
  row.commit();
  return row;
}

function toCell(value: unknown, onChange: (change: string) => void): { value: Cell; formulaLike?: boolean } {
  if (value === null || value === undefined) return { value: null };
  if (typeof value === 'number' || typeof value === 'boolean') return { value };
  const text = cellText(value);
  return { value: xlsxTextCell(text, onChange), formulaLike: /^[=+\-@\t\r]/.test(text) };
}

// What an XLSX text cell cannot carry as it is: C0 controls but tab and LF (CR included: XML readers
// turn it into LF), DEL, U+FFFE, U+FFFF, lone surrogates, and `_xHHHH_` sequences of the text itself.
const NEEDS_ESCAPE = /[\u0000-\u0008\u000B-\u001F\u007F\uFFFE\uFFFF]|_x[0-9A-Fa-f]{4}_|\p{Cs}/gu;

/**
 * One text as an inline-string cell that Excel and LibreOffice read back as the same text (see the
 * class comment for what is escaped, removed or cut); each change is told to `onChange`.
 */
function xlsxTextCell(text: string, onChange: (change: string) => void = () => {}): Cell {
  let value = text;
  if (value.length > MAX_CELL_TEXT) {
    value = truncate(value, MAX_CELL_TEXT - TRUNCATION_MARKER.length) + TRUNCATION_MARKER;
    onChange(
      `${text.length.toLocaleString('en-US')} characters cut to ${MAX_CELL_TEXT.toLocaleString('en-US')}, ` +
        `the most an XLSX cell holds (it ends with "${TRUNCATION_MARKER.trim()}"); CSV, JSON and ReqIF exports carry the whole value.`,
    );
  }
  let removedDel = false;
  let replacedSurrogate = false;
  value = value.replace(NEEDS_ESCAPE, (match) => {
    if (match.length > 1 && match.startsWith('_x')) return `_x005F${match.slice(1)}`;
    const code = match.charCodeAt(0);
    if (code === 0x7f) {
      removedDel = true;
      return '';
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      replacedSurrogate = true;
      return '\uFFFD';
    }
    return `_x${code.toString(16).toUpperCase().padStart(4, '0')}_`;
  });
  if (removedDel)
    onChange('the DEL character (U+007F) was removed: an XLSX cell cannot carry it to LibreOffice.');
  if (replacedSurrogate)
    onChange('a lone surrogate (half of a UTF-16 pair, not a character) was replaced with U+FFFD.');
  return value === '' ? '' : { richText: [{ text: value }] };
}

/**
 * Sheet names Excel accepts: at most 31 characters, none of : \ / ? * [ ], not starting or ending
 * with an apostrophe, not "History", and unique regardless of case ("Name (2)", "Name (3)", ...).
 */
export class SheetNames {
  private readonly taken = new Set<string>();

  constructor(reserved: readonly string[] = []) {
    for (const name of [...reserved, 'History']) this.taken.add(name.toLowerCase());
  }

  take(wanted: string): string {
    const base =
      xmlSafe(wanted)
        .replace(/[:\\/?*[\]\u0000-\u001F\uFFFD]/g, ' ')
        .replace(/^'+|'+$/g, '')
        .trim() || 'Topic';
    for (let n = 1; ; n++) {
      const suffix = n === 1 ? '' : ` (${n})`;
      const candidate =
        truncate(base, 31 - suffix.length)
          .trimEnd()
          .replace(/'+$/, '') + suffix;
      if (!this.taken.has(candidate.toLowerCase())) {
        this.taken.add(candidate.toLowerCase());
        return candidate;
      }
    }
  }
}

/** At most `length` UTF-16 units, never splitting a character. */
function truncate(text: string, length: number): string {
  let result = '';
  for (const char of text) {
    if (result.length + char.length > length) break;
    result += char;
  }
  return result;
}

type Append = (this: unknown, source: unknown, data: Record<string, unknown>) => unknown;

/**
 * Builds a streaming workbook whose zip entries all carry `date` (exceljs hands archiver no date,
 * so each entry would carry the clock's time, and the constructor adds some entries already). It
 * reaches into exceljs's zip library, archiver: if that is ever gone, entries keep the clock's time.
 */
function withDatedZipEntries(
  date: Date,
  create: () => ExcelJS.stream.xlsx.WorkbookWriter,
): ExcelJS.stream.xlsx.WorkbookWriter {
  let archiver: { prototype: { append: Append } } | undefined;
  try {
    archiver = createRequire(createRequire(import.meta.url).resolve('exceljs'))('archiver/lib/core.js');
  } catch {
    return create();
  }
  const prototype = archiver!.prototype;
  const append = prototype.append;
  // The constructor runs synchronously: nothing else appends to any archive meanwhile.
  prototype.append = function (source, data) {
    return append.call(this, source, { ...data, date });
  };
  let book: ExcelJS.stream.xlsx.WorkbookWriter;
  try {
    book = create();
  } finally {
    prototype.append = append;
  }
  const archive = (book as unknown as { zip?: { append: Append } }).zip;
  if (archive && typeof archive.append === 'function') {
    const own = archive.append;
    archive.append = function (source, data) {
      return own.call(this, source, { ...data, date });
    };
  }
  return book;
}
