import { ChunkedReader, CHUNK_BYTES } from './chunks.js';

const NEWLINE = 0x0a;
const QUOTE = 0x22;

/**
 * How rows of an output end: `csv` rows at a line feed outside quotes (csvRow quotes every cell
 * holding a CR or LF, so an unquoted LF is always a row's CRLF), `lines` (JSON lines) at every line
 * feed (JSON escapes line breaks inside strings).
 */
export type RowSyntax = 'csv' | 'lines';

/**
 * The rows of an output file written before, read front to back in large chunks, each as its
 * bytes (line break included), so a spliced poll copies the rows of unchanged records without
 * parsing them. Like SortedLineCursor, synchronous while `ready`; otherwise `fill` first. Memory
 * holds one chunk, whatever the size of the file.
 */
export class OutputRows extends ChunkedReader {
  /** Where the head row (at `start`) ends (after its line feed), or -1 while not known. */
  private rowEnd = -1;
  /** For csv: the first quote at or after `quoteFrom`, -1 when none is in memory (up to `end`). */
  private quote = -1;
  private quoteFrom = Number.MAX_SAFE_INTEGER;

  constructor(
    override readonly path: string,
    readonly syntax: RowSyntax,
    chunkBytes = CHUNK_BYTES,
  ) {
    super(path, chunkBytes);
  }

  /** True when the head row (or the end of the file) is known without reading. */
  get ready(): boolean {
    return this.settle() || (this.eof && this.start >= this.end);
  }

  /** Reads until the next row (or the end of the file) is known. */
  async fill(): Promise<void> {
    while (!this.ready) {
      if (this.eof) throw new Error(`${this.path} ends inside a row.`);
      await this.readMore();
      this.quoteFrom = Number.MAX_SAFE_INTEGER; // positions moved
    }
  }

  /** The head row's bytes, line break included; undefined at the end. Only while `ready`. */
  row(): Buffer | undefined {
    if (!this.settle()) return undefined;
    return this.buffer.subarray(this.start, this.rowEnd);
  }

  /** Moves past the head row. */
  take(): void {
    if (!this.settle()) throw new Error('OutputRows: take without a row.');
    this.start = this.rowEnd;
    this.rowEnd = -1;
  }

  /** Where the head row starts in the file. */
  get offset(): number {
    return this.position - (this.end - this.start);
  }

  /** Goes on from byte `position` of the file, the start of a row (from a row index). */
  seek(position: number): void {
    this.position = position;
    this.start = this.end = 0;
    this.rowEnd = -1;
    this.eof = false;
    this.quoteFrom = Number.MAX_SAFE_INTEGER;
  }

  async close(): Promise<void> {
    await this.closeFile();
  }

  /** Finds where the head row ends; false when no whole row is in memory. */
  private settle(): boolean {
    if (this.rowEnd >= 0) return true;
    if (this.start >= this.end) return false;
    const bytes = this.buffer.subarray(0, this.end);
    let from = this.start;
    for (;;) {
      const lineFeed = bytes.indexOf(NEWLINE, from);
      if (lineFeed < 0) return false;
      const quote = this.syntax === 'csv' ? this.quoteAfter(bytes, from) : -1;
      if (quote < 0 || quote > lineFeed) {
        this.rowEnd = lineFeed + 1;
        return true;
      }
      // A quoted cell: its line breaks belong to it; it ends at the next quote ("" reopens it).
      const closing = bytes.indexOf(QUOTE, quote + 1);
      if (closing < 0) return false;
      from = closing + 1;
    }
  }

  /** The first quote at or after `from` (remembered: rows without quotes do not scan ahead again). */
  private quoteAfter(bytes: Buffer, from: number): number {
    if (from < this.quoteFrom || (this.quote >= 0 && this.quote < from)) {
      this.quote = bytes.indexOf(QUOTE, from);
      this.quoteFrom = from;
    }
    return this.quote;
  }
}
