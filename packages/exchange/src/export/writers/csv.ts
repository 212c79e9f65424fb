import { once } from 'node:events';
import { createReadStream, createWriteStream, WriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { makeScratchFolder } from '../../files/index.js';
import type { ExportedRecord, ExportPart, ExportWriter, RowObserver } from '../model.js';
import { cellText } from './cells.js';
import { RECORD_COLUMNS, recordFacts, SemanticColumns } from './columns.js';
import { csvRow, CsvRowSplitter, csvText } from './csv-text.js';
import { closeOutput, endOutput, writeAndWait, writeChunk } from './output.js';
import { linkEndText, RoleColumns, SUSPECT_MARK } from './role-columns.js';
import { Spool } from './spool.js';
import { ExportTracker } from './tracker.js';
import { linksBySource, type Link } from './traces.js';

export interface CsvWriterOptions {
  /** Where rows and records wait until the header is written (default: the system temp folder). */
  tempDir?: string;
  /** Told each row of a table of one topic without traces, as it is made (`WriterOptions.onRow`). */
  onRow?: RowObserver;
}

/** Leading column naming the topic, present when the export holds more than one topic. */
export const TOPIC_COLUMN = 'topic';
/** Trailing column with each record's outgoing traces, present when traces were exported. */
export const LINKS_COLUMN = 'links';
export { SUSPECT_MARK };

/** Rows are written to the body file in pieces of about this many characters. */
const FLUSH_AT = 64 * 1024;
/** The body is copied to a file output in pieces of this many bytes. */
const COPY_BYTES = 1024 * 1024;

/** Rows of a single-topic export without traces, formatted as the records arrive. */
interface Body {
  dir: string;
  file: string;
  stream: WriteStream;
  /** The semantic names of the columns the rows were formatted with. */
  names: string[];
  /** Every name a row may carry (the rest sends the record to the spool). */
  known: Set<string>;
  columns: SemanticColumns;
  /** Rows formatted but not yet written. */
  pending: string;
  /** Rows stopped: a record or topic the columns did not foresee arrived; the rest is spooled. */
  stopped: boolean;
}

/**
 * One table, one row per record: `_id`, `readable_id`, `name`, `version`, `topic_revision_id`, then
 * one column per semantic name, then `links` when traces were exported, and after it the link
 * columns named by the trace model's roles the traces name (`RoleColumns`). Several topics share
 * the table: a leading `topic` column tells them apart and the columns are the union of their names.
 *
 * The header comes first but depends on every topic's columns (including keys met only in record
 * data) and on the traces. An export of one topic without traces, whose records carry only the
 * topic's fields (the usual case), is formatted row by row as records arrive into a temporary
 * file, which is copied after the header on close. Otherwise (or from the first record that
 * carries a name the columns did not foresee) records wait in a temporary file as JSON and the
 * table is formatted on close; rows already formatted are rearranged cell by cell to the final
 * columns. Either way: flat memory, disk space about the size of the output.
 *
 * Cells: checklists joined with "; ", objects and dynamiclists as compact JSON. Cells starting with
 * =, +, -, @, tab or carriage return get a leading apostrophe (except numbers), and a semicolon,
 * tab or line break inside text before =, +, - or @ gets one after it, so a spreadsheet never runs
 * a cell as a formula, whether it splits the rows at commas, semicolons or tabs; a cell holding a
 * comma, quote, LF or CR is quoted (csv-text.ts).
 * UTF-8 with a byte order mark and CRLF line ends, as Excel expects.
 */
export class CsvWriter implements ExportWriter {
  readonly extension = 'csv';
  private readonly tracker = new ExportTracker();
  private readonly spool: Spool<{ topic: number; record: ExportedRecord }>;
  private readonly tempDir: string | undefined;
  private readonly onRow: RowObserver | undefined;
  private body: Body | undefined;
  private bodyFailed = false;

  constructor(
    private readonly out: Writable,
    options: CsvWriterOptions = {},
  ) {
    this.tempDir = options.tempDir;
    this.onRow = options.onRow;
    this.spool = new Spool(options.tempDir);
  }

  async write(part: ExportPart): Promise<void> {
    await this.take(part);
    const body = this.body;
    if (body && (part.kind !== 'record' || body.pending.length >= FLUSH_AT)) await this.flush(body);
  }

  async writeParts(parts: readonly ExportPart[]): Promise<void> {
    for (const part of parts) await this.take(part);
    if (this.body) await this.flush(this.body);
  }

  close(): Promise<void> {
    return closeOutput(
      this.out,
      this.tracker.ended,
      () => this.produce(),
      () => this.dispose(),
    );
  }

  /** Follows one part; a record is formatted right away when it fits the body's columns. */
  private async take(part: ExportPart): Promise<void> {
    this.tracker.observe(part);
    if (part.kind === 'topic') {
      if (this.body) this.body.stopped = true;
      else if (this.tracker.topics.length === 0 && !this.bodyFailed) await this.openBody(part);
      return;
    }
    if (part.kind !== 'record') return;
    const body = this.body;
    if (body && !body.stopped) {
      const { record } = part;
      for (const name of Object.keys(record.values)) {
        if (!body.known.has(name)) {
          body.stopped = true;
          break;
        }
      }
      if (!body.stopped) {
        const row = plainRow(body.columns, record);
        body.pending += row;
        this.onRow?.(record, Buffer.byteLength(row));
        return;
      }
    }
    await this.spool.append({ topic: this.tracker.current.index, record: part.record });
  }

  /** Rows can be formatted as they arrive when the export is one topic without traces. */
  private async openBody(part: Extract<ExportPart, { kind: 'topic' }>): Promise<void> {
    const header = this.tracker.header;
    if (!header || header.withTraces || header.revisionIds.length !== 1) return;
    const columns = tableColumns().add(part.topic.fields);
    const dir = await makeScratchFolder('rxs-export', this.tempDir);
    const file = join(dir, 'rows.csv');
    // 'wx': the folder is new and empty; never a file (or link) another put there.
    const stream = createWriteStream(file, { flags: 'wx' });
    this.body = {
      dir,
      file,
      stream,
      names: [...columns.names],
      known: new Set(part.topic.fields.map((f) => f.name)),
      columns,
      pending: '',
      stopped: false,
    };
  }

  private async flush(body: Body): Promise<void> {
    if (body.pending === '') return;
    const text = body.pending;
    body.pending = '';
    await writeChunk(body.stream, text);
  }

  /** Writes the whole table; the export is complete. */
  private async produce(): Promise<void> {
    const { topics } = this.tracker;
    const withTopic = topics.length > 1;
    const withLinks = this.tracker.withTraces;
    const columns = tableColumns();
    for (const { fields } of topics) columns.add(fields);
    const outgoing = linksBySource(this.tracker.traces);
    const fixed = [...(withTopic ? [TOPIC_COLUMN] : []), ...RECORD_COLUMNS, ...columns.headers];
    const roleColumns = new RoleColumns(
      this.tracker.roles,
      this.tracker.traces,
      new Set([...fixed, LINKS_COLUMN]),
    );

    const header = [...fixed, ...(withLinks ? [LINKS_COLUMN, ...roleColumns.headers] : [])];
    await writeChunk(this.out, `\uFEFF${csvRow(header)}`);

    const body = this.body;
    if (body) {
      await this.flush(body);
      await endOutput(body.stream);
      const unchanged =
        !withTopic &&
        !withLinks &&
        columns.names.length === body.names.length &&
        columns.names.every((name, i) => name === body.names[i]);
      if (unchanged) await this.copyBody(body);
      else await this.rearrangeBody(body, columns.names, withTopic, withLinks, outgoing, roleColumns);
    }

    let pending = '';
    for await (const { topic, record } of this.spool.replay()) {
      pending += csvRow([
        ...(withTopic ? [topics[topic]?.topic.name ?? ''] : []),
        ...recordFacts(record),
        ...columns.values(record).map(csvCell),
        ...(withLinks ? [linksText(outgoing.get(record.id) ?? []), ...roleColumns.of(record.id)] : []),
      ]);
      if (pending.length >= FLUSH_AT) {
        await writeChunk(this.out, pending);
        pending = '';
      }
    }
    if (pending !== '') await writeChunk(this.out, pending);
  }

  /**
   * The body's rows as they are. Into a file stream (the CLI's output) through one reused buffer:
   * a file stream is done with a chunk when its write callback runs, and reading the body in fresh
   * chunks would leave tens of MB of garbage buffers at the end of the export, the exporter's peak
   * memory. Other streams may keep the chunks they are given, so they get fresh ones.
   */
  private async copyBody(body: Body): Promise<void> {
    if (!(this.out instanceof WriteStream)) {
      for await (const chunk of createReadStream(body.file, { highWaterMark: FLUSH_AT }))
        await writeChunk(this.out, chunk as Buffer);
      return;
    }
    const input = await open(body.file, 'r');
    try {
      const buffer = Buffer.allocUnsafe(COPY_BYTES);
      for (;;) {
        const { bytesRead } = await input.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) return;
        await writeAndWait(this.out, buffer.subarray(0, bytesRead));
      }
    } finally {
      await input.close();
    }
  }

  /**
   * The body's rows in the final columns: its cells are moved, never re-encoded (the values are
   * gone, but each cell's text is final), new columns are empty, and the topic and links cells
   * are added as the table needs them.
   */
  private async rearrangeBody(
    body: Body,
    names: readonly string[],
    withTopic: boolean,
    withLinks: boolean,
    outgoing: Map<string, Link[]>,
    roleColumns: RoleColumns,
  ): Promise<void> {
    const fixed = RECORD_COLUMNS.length;
    const position = new Map<string, number>();
    body.names.forEach((name, i) => position.set(name, fixed + i));
    const from = names.map((name) => position.get(name));
    const topicCell = withTopic ? csvText(this.tracker.topics[0]?.topic.name ?? '') : '';
    // Links by the id cell as written (ids are the first cell of every body row).
    const links = new Map<string, string>();
    if (withLinks)
      for (const [id, list] of outgoing) if (!links.has(csvText(id))) links.set(csvText(id), linksText(list));
    const roleCells = new Map<string, string>();
    if (withLinks && roleColumns.headers.length > 0)
      for (const { source, target } of this.tracker.traces)
        for (const { id } of [source, target])
          if (!roleCells.has(csvText(id)))
            roleCells.set(csvText(id), roleColumns.of(id).map(csvText).join(','));
    const noRoleCells = roleColumns.headers.map(() => '').join(',');

    const splitter = new CsvRowSplitter();
    const input = createReadStream(body.file, { encoding: 'utf8', highWaterMark: FLUSH_AT });
    for await (const text of input) {
      let pending = '';
      for (const cells of splitter.push(text as string)) {
        const row: string[] = withTopic ? [topicCell] : [];
        for (let i = 0; i < fixed; i++) row.push(cells[i] ?? '');
        for (const index of from) row.push(index === undefined ? '' : (cells[index] ?? ''));
        if (withLinks) row.push(csvText(links.get(cells[0] ?? '') ?? ''));
        if (withLinks && roleColumns.headers.length > 0)
          row.push(roleCells.get(cells[0] ?? '') ?? noRoleCells);
        pending += `${row.join(',')}\r\n`;
      }
      if (pending !== '') await writeChunk(this.out, pending);
    }
    if (splitter.pending) throw new Error(`${body.file} ends inside a row; the temporary rows are damaged.`);
  }

  private async dispose(): Promise<void> {
    const body = this.body;
    this.body = undefined;
    this.bodyFailed = true;
    let failure: unknown;
    if (body) {
      try {
        if (!body.stream.closed) {
          body.stream.destroy();
          await once(body.stream, 'close');
        }
        await rm(body.dir, { recursive: true, force: true });
      } catch (error) {
        failure = error;
      }
    }
    await this.spool.dispose();
    if (failure !== undefined) throw failure;
  }
}

/** The semantic columns of a table, beside the fixed ones (whose names they may not take). */
export function tableColumns(): SemanticColumns {
  return new SemanticColumns([TOPIC_COLUMN, ...RECORD_COLUMNS, LINKS_COLUMN]);
}

/** The byte order mark and header row of a table of one topic without traces. */
export function plainHead(columns: SemanticColumns): string {
  return `\uFEFF${csvRow([...RECORD_COLUMNS, ...columns.headers])}`;
}

/** A record's row in a table of one topic without traces (no topic or links column). */
export function plainRow(columns: SemanticColumns, record: ExportedRecord): string {
  return csvRow([...recordFacts(record), ...columns.values(record).map(csvCell)]);
}

/** Numbers stay numbers so that a negative one is not mistaken for a formula. */
function csvCell(value: unknown): string | number {
  return typeof value === 'number' ? value : cellText(value);
}

/**
 * Each outgoing link as "relation:" and its target's `linkEndText` ("relation:READABLE_ID (recordId)"
 * for a record of this export, "relation:recordId" for one outside it, "relation:Type/id" for any
 * other node, " [suspect]" after a suspect link); links are separated by "; ".
 */
function linksText(links: readonly Link[]): string {
  return links
    .map(({ trace: { target, suspect }, relationType }) => `${relationType}:${linkEndText(target, suspect)}`)
    .join('; ');
}
