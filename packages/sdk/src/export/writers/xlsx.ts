import { PassThrough, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type ExcelJS from 'exceljs';
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
/** Excel refuses longer cell texts; longer values are cut and end with this marker. */
export const MAX_CELL_TEXT = 32_767;
export const TRUNCATION_MARKER = ' [truncated]';

const ROWS_BETWEEN_YIELDS = 256;
const TRACE_COLUMNS = ['_id', 'relation_types', 'source_id', 'source_type', 'target_id', 'target_type'];

type Cell = string | number | boolean | null;

/**
 * A workbook written with exceljs's streaming writer: one sheet per topic (header row bold and
 * frozen, one column per semantic name after `_id`, `name`, `version`, `topic_revision_id`), a
 * `Traces` sheet when traces were exported, and an `Export` sheet last with the export time,
 * servers, revision ids, per-topic counts and warnings.
 *
 * A topic's records wait in a temporary file until its `topic-end` (when keys met only in record
 * data are known as columns), then become its sheet; memory stays flat.
 *
 * Values are written as typed cells: numbers and booleans as such, everything else as text cells
 * (checklists joined with "; ", objects as JSON). Text cells are never formulas, so "=cmd" stays
 * inert; text that starts like a formula is also given the Text number format, so that editing
 * the cell in Excel does not turn it into one. Characters XML cannot hold become U+FFFD.
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
      this.book = new excel.stream.xlsx.WorkbookWriter({
        stream: this.zip,
        useStyles: true,
        useSharedStrings: false,
      });
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
    const sheet = this.addSheet(name, [...RECORD_COLUMNS, ...columns.headers], [26, 30, 10, 26]);
    const spool = this.spool;
    this.spool = undefined;
    try {
      let rows = 0;
      for await (const record of spool?.replay() ?? []) {
        addRow(sheet, [...recordFacts(record), ...columns.values(record)]);
        if (++rows % ROWS_BETWEEN_YIELDS === 0) await whenDrained(this.zip);
      }
    } finally {
      await spool?.dispose();
    }
    sheet.commit();
  }

  private async addTraceRows(traces: readonly ExportedTrace[]): Promise<void> {
    this.tracesSheet ??= this.addSheet(TRACES_SHEET, TRACE_COLUMNS, [26, 24, 26, 14, 26, 14]);
    for (const { id, relationTypes, source, target } of traces) {
      addRow(this.tracesSheet, [
        id,
        relationTypes.join('; '),
        source.id,
        source.type,
        target.id,
        target.type,
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
    const { header, topics, traces, warnings } = this.tracker;
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
      ]),
    );
    topics.forEach(({ topic, recordCount }, index) => {
      const { name, revisionId, latestRevisionId, version, status, historyId } = topic;
      addRow(sheet, [
        name,
        this.sheetOfTopic[index] ?? '',
        revisionId,
        latestRevisionId,
        version,
        status,
        historyId,
        recordCount,
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
    sheet.columns = headers.map((header, index) => ({
      header: textCell(header),
      width: widths[index] ?? 24,
    }));
    const headerRow = sheet.getRow(1);
    headerRow.font = { bold: true };
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

function addRow(sheet: ExcelJS.Worksheet, values: readonly unknown[]): ExcelJS.Row {
  const row = sheet.addRow(values.map(toCell));
  row.eachCell((cell) => {
    if (typeof cell.value === 'string' && /^[=+\-@\t\r]/.test(cell.value)) cell.numFmt = '@';
  });
  row.commit();
  return row;
}

function toCell(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  return textCell(cellText(value));
}

function textCell(text: string): string {
  const safe = xmlSafe(text);
  return safe.length <= MAX_CELL_TEXT
    ? safe
    : safe.slice(0, MAX_CELL_TEXT - TRUNCATION_MARKER.length) + TRUNCATION_MARKER;
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
