import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventLoopSlices } from '../event-loop.js';
import { ImportFileError } from './errors.js';
import { NamedValue } from '../mapping/record-input.js';
import type { RowPlan } from './row-plan.js';
import type { Cell, SourceRow } from './source-row.js';

/**
 * What an import read once, kept on disk for its later passes instead of in memory: the file's
 * rows as its reader gave them, where reading the file again would cost more (the check reads
 * these; a CSV is read again instead, RowSource.rowsAgain), then the plans of the rows to write
 * (the writing reads these: nothing is checked twice). One JSON text a line, in a folder of its
 * own under `dir` (default: the system's temporary folder), removed when the import ends; memory
 * holds one chunk of it at a time whatever the number of rows.
 */
export class ImportSpool {
  /** Every file handed out: closed with the spool, whether it was read back or not. */
  private readonly files: { close(): Promise<void> }[] = [];

  private constructor(private readonly folder: string) {}

  static async open(dir = tmpdir()): Promise<ImportSpool> {
    try {
      return new ImportSpool(await mkdtemp(join(dir, 'rxs-import-')));
    } catch (error) {
      throw scratchError(dir, error);
    }
  }

  /** A file of the spool to write lines to, then read back. */
  file<T>(name: string, encode: (value: T) => string, decode: (line: string) => T): SpoolFile<T> {
    const file = new SpoolFile(join(this.folder, name), encode, decode);
    this.files.push(file);
    return file;
  }

  /**
   * Closes every file, then removes the folder: a file still open (never read back: an import
   * that stopped, or a check dropped) would keep its descriptor and its disk space for as long as
   * the process lives (the web app's server).
   */
  async close(): Promise<void> {
    await Promise.all(this.files.map((file) => file.close()));
    await rm(this.folder, { recursive: true, force: true });
  }
}

const NEWLINE = 0x0a;

/**
 * Lines are encoded into a buffer of this many bytes, which goes to the file when full: one write
 * of the file's stream a line costs more than encoding the line, and so does encoding a long text
 * of many lines at once (Buffer.from of a large string is several times slower than writing the
 * same characters into a buffer line by line).
 */
const BATCH_BYTES = 1 << 16;
/** The most bytes UTF-8 takes for one UTF-16 code unit. */
const MAX_BYTES_PER_UNIT = 3;

export class SpoolFile<T> {
  private out: WriteStream | undefined;
  private failure: Error | undefined;
  /** Lines encoded and not yet handed to `out`: `batch` up to `filled`. */
  private batch = Buffer.allocUnsafe(BATCH_BYTES);
  private filled = 0;
  count = 0;

  constructor(
    readonly path: string,
    private readonly encode: (value: T) => string,
    private readonly decode: (line: string) => T,
  ) {}

  async write(value: T): Promise<void> {
    if (!this.out) {
      this.out = createWriteStream(this.path, { flags: 'wx', mode: 0o600 });
      this.out.on('error', (error) => (this.failure ??= error));
    }
    if (this.failure) throw scratchError(this.path, this.failure);
    this.count++;
    const line = this.encode(value);
    // Room for the line however its characters encode, and its newline.
    const room = line.length * MAX_BYTES_PER_UNIT + 1;
    if (this.filled + room > this.batch.length) await this.flush(this.out);
    if (room > this.batch.length) {
      if (!this.out.write(`${line}\n`)) await drained(this.out);
      return;
    }
    this.filled += this.batch.write(line, this.filled);
    this.batch[this.filled++] = NEWLINE;
  }

  /** The lines of `batch` to `out`, which keeps that buffer: the next lines go to a new one. */
  private async flush(out: WriteStream): Promise<void> {
    if (this.filled === 0) return;
    const lines = this.batch.subarray(0, this.filled);
    this.batch = Buffer.allocUnsafe(BATCH_BYTES);
    this.filled = 0;
    if (!out.write(lines)) await drained(out);
  }

  /** Stops writing the file, its pending lines left out: it will not be read. */
  async close(): Promise<void> {
    const out = this.out;
    this.out = undefined;
    this.filled = 0;
    if (!out) return;
    out.destroy();
    await finished(out).catch(() => undefined);
  }

  /** Every line written, in order: the file is finished first. */
  async *read(): AsyncGenerator<T> {
    // Lines of a chunk arrive without waiting: other work of the process gets its turns between.
    const turn = eventLoopSlices();
    for await (const lines of this.chunks())
      for (const value of lines) {
        yield value;
        // Most lines need no turn: awaiting nothing would still cost a microtask a line.
        const pause = turn();
        if (pause) await pause;
      }
  }

  /**
   * Every line written, in order, as the lines of each chunk of the file (linesOf): a consumer
   * that takes them without an async step a line saves a promise and a microtask each, and gives
   * the event loop its turns itself. The file is finished first.
   */
  async *chunks(): AsyncGenerator<Iterable<T>> {
    if (this.out) {
      await this.flush(this.out);
      await finished(this.out.end()).catch((error: Error) => (this.failure ??= error));
      this.out = undefined;
    }
    if (this.failure) throw scratchError(this.path, this.failure);
    if (this.count === 0) return;
    const cut: Buffer[] = [];
    for await (const chunk of createReadStream(this.path, {
      highWaterMark: 1 << 18,
    }) as AsyncIterable<Buffer>)
      yield this.linesOf(chunk, cut);
  }

  /**
   * The lines `chunk` ends, each decoded when it is taken (a line is garbage before the next is
   * made); taken whole before the next chunk. Lines are found in the bytes and each decoded alone:
   * a newline byte is never part of another UTF-8 character, and decoding line by line costs a
   * fraction of decoding whole chunks into strings and searching those. `cut` holds the start of a
   * line a chunk cuts, in pieces (a long line is copied once), for the chunk with its end.
   */
  private *linesOf(chunk: Buffer, cut: Buffer[]): Generator<T> {
    let from = 0;
    for (let end = chunk.indexOf(NEWLINE); end >= 0; end = chunk.indexOf(NEWLINE, from)) {
      const line =
        cut.length === 0
          ? chunk.toString('utf8', from, end)
          : Buffer.concat([...cut, chunk.subarray(0, end)]).toString('utf8');
      cut.length = 0;
      from = end + 1;
      yield this.decode(line);
    }
    if (from < chunk.length) cut.push(chunk.subarray(from));
  }
}

/** Until `out` takes more, or fails (its error is kept by the listener `write` added). */
function drained(out: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('error', done);
      resolve();
    };
    out.on('drain', done);
    out.on('error', done);
  });
}

function scratchError(where: string, error: unknown): ImportFileError {
  return new ImportFileError(
    `The import could not keep its scratch copy of the rows in ${where}: ${(error as Error).message}. ` +
      'Free space there, or point TMPDIR at a folder with room (about twice the size of the file), and import again.',
  );
}

/**
 * A typed value as the spool keeps it: JSON as it is (`v`), an enumeration value with its names
 * (`n`), or a list holding some (`l`).
 */
type SpooledValue = { v: unknown } | { n: [readonly string[], string] } | { l: SpooledValue[] };

/** `value` as the spool keeps it, or undefined when JSON cannot hold it as it is. */
function spooledValue(value: unknown): SpooledValue | undefined {
  if (value instanceof NamedValue) return { n: [value.names, value.description] };
  if (Array.isArray(value) && value.some((item) => item instanceof NamedValue)) {
    const items: SpooledValue[] = [];
    for (const item of value) {
      const spooled = spooledValue(item);
      if (spooled === undefined) return undefined;
      items.push(spooled);
    }
    return { l: items };
  }
  return heldByJson(value) ? { v: value } : undefined;
}

function valueOf(spooled: SpooledValue): unknown {
  if ('v' in spooled) return spooled.v;
  if ('n' in spooled) return new NamedValue(...spooled.n);
  return spooled.l.map(valueOf);
}

/**
 * A row as the spool keeps it. A typed value JSON cannot hold as it is (a number out of range,
 * read as Infinity) is a problem of its row, not a value changed on the way.
 */
export function encodeRow(row: SourceRow): string {
  // Column, cell, column, cell, ...: one array a row, not one a cell, to write and to read back.
  const values: (string | SpooledValue)[] = [];
  let problems = row.problems;
  for (const [column, cell] of row.values) {
    if ('text' in cell) {
      values.push(column, cell.text);
      continue;
    }
    const spooled = spooledValue(cell.value);
    if (spooled === undefined)
      problems = [
        ...problems,
        `${column}: ${String(cell.value)} is not a value a record can hold (a number out of range?). Correct it in the file.`,
      ];
    values.push(column, spooled ?? { v: null });
  }
  return JSON.stringify([
    row.where,
    row.facts,
    values,
    problems,
    row.warnings ?? null,
    row.byFormKey === true,
  ]);
}

export function decodeRow(line: string): SourceRow {
  const [where, facts, values, problems, warnings, byFormKey] = JSON.parse(line) as [
    string,
    SourceRow['facts'],
    (string | SpooledValue)[],
    string[],
    string[] | null,
    boolean,
  ];
  const cells = new Map<string, Cell>();
  for (let i = 0; i < values.length; i += 2) {
    const cell = values[i + 1]!;
    cells.set(values[i] as string, typeof cell === 'string' ? { text: cell } : { value: valueOf(cell) });
  }
  const row: SourceRow = { where, facts, values: cells, problems };
  if (warnings) row.warnings = warnings;
  if (byFormKey) row.byFormKey = true;
  return row;
}

/** A plan to write, as the spool keeps it: JSON is what it is sent as. */
export const encodePlan = (plan: RowPlan): string => JSON.stringify(plan);
export const decodePlan = (line: string): RowPlan => JSON.parse(line) as RowPlan;

/** Whether JSON text gives `value` back as it is. */
function heldByJson(value: unknown, depth = 0): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (depth > 1000 || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!heldByJson(value[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null)
    return false;
  for (const key in value) if (!heldByJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  return true;
}
