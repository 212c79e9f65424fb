import { ChunkedReader, CHUNK_BYTES } from './chunks.js';
import { compareIds } from './json-values.js';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** What every stored record line starts with (`JSON.stringify({ id, ... })`). */
const ID_PREFIX = Buffer.from('{"id":"');

/**
 * One side of the records merge-join, as bytes: the lines of a snapshot's records file (sorted by
 * id), read in large chunks, with the id of each line taken from its first bytes. A line is
 * decoded and parsed only when its record changed or is gone (`parse`); an unchanged record costs
 * a byte comparison with its new line (`sameBytes`). Memory holds one chunk, whatever the size of
 * the file.
 *
 * Reading is asynchronous only at chunk boundaries: while `ready` is true, `peekId`, `sameBytes`,
 * `parse` and `take` answer synchronously; otherwise `fill` first. Ids are checked to ascend
 * strictly, so a damaged file fails loudly instead of producing a wrong comparison.
 */
export class SortedLineCursor extends ChunkedReader {
  /** The head line (it starts at `start`): its id, where its bytes end (before the line break) and where the next starts. */
  private headId: string | undefined;
  private headEnd = 0;
  private nextStart = 0;
  /** Line number (1-based) of the head line in the file. */
  private number = 0;
  private lastId: string | undefined;
  /** Set by a skip past the bytes in memory: the next read reads a little (`readNear`). */
  private jumped = false;

  /** `path` undefined: an empty side (a topic the previous snapshot did not have). */
  constructor(path: string | undefined, chunkBytes = CHUNK_BYTES) {
    super(path, chunkBytes);
    this.eof = path === undefined;
  }

  /** True when the head line (or the end of the file) is known without reading. */
  get ready(): boolean {
    return this.settle() || (this.eof && this.start >= this.end);
  }

  /** Reads until the next line (or the end of the file) is known. */
  async fill(): Promise<void> {
    while (!this.ready) {
      if (this.jumped && this.handle) {
        this.jumped = false;
        this.readNear();
      } else {
        await this.readMore();
      }
    }
  }

  /** Where the next line starts in the file. */
  get offset(): number {
    return this.position - this.end + this.start;
  }

  /**
   * Goes on at byte `position` (a line start, from a row index) without reading the bytes before
   * it: the lines skipped are neither read nor checked; the order check starts again there.
   */
  skipTo(position: number): void {
    const at = this.offset;
    if (position < at) throw new Error(`SortedLineCursor: cannot skip back to byte ${position}.`);
    if (position === at) return;
    this.headId = undefined;
    this.lastId = undefined;
    this.number = 0;
    if (position <= this.position) {
      // Within the bytes in memory: most skips between changed records a few lines apart.
      this.start += position - at;
      return;
    }
    this.position = position;
    this.start = this.end = 0;
    this.eof = false;
    this.jumped = true;
  }

  /** The id of the next line, undefined at the end of the file. Only while `ready`. */
  peekId(): string | undefined {
    if (this.settle()) return this.headId;
    if (!this.eof) throw new Error('SortedLineCursor: read past the bytes in memory; call fill() first.');
    return undefined;
  }

  /**
   * The usual case of a merge-join on unchanged records, without reading the id or looking for the
   * line's end: when the next line is exactly `bytes[from, to)`, the line of record `id` (so its id
   * is `id`), and its line break is in memory, takes it and returns true. Otherwise returns false
   * and nothing moved. The caller passes ids in ascending order, which keeps the order check.
   */
  takeIfSame(bytes: Buffer, from: number, to: number, id: string): boolean {
    const lineEnd = this.start + (to - from);
    if (lineEnd >= this.end || this.buffer[lineEnd] !== NEWLINE) return false;
    if (this.buffer.compare(bytes, from, to, this.start, lineEnd) !== 0) return false;
    if (this.headId === undefined) this.number++;
    else if (this.headEnd !== lineEnd) return false;
    this.headId = undefined;
    this.lastId = id;
    this.start = lineEnd + 1;
    return true;
  }

  /** Whether the next line's bytes are `bytes[from, to)`. */
  sameBytes(bytes: Buffer, from: number, to: number): boolean {
    return (
      to - from === this.headEnd - this.start &&
      this.buffer.compare(bytes, from, to, this.start, this.headEnd) === 0
    );
  }

  /** The next line as a value. */
  parse<T>(): T {
    return this.parseLine<T>(this.start, this.headEnd);
  }

  /** The next line's bytes, its line break left out (valid until the next `fill`). */
  line(): Buffer {
    return this.buffer.subarray(this.start, this.headEnd);
  }

  /** Moves past the next line. */
  take(): void {
    if (this.headId === undefined) throw new Error('SortedLineCursor: take without a line.');
    this.headId = undefined;
    this.start = this.nextStart;
  }

  /** Stops reading (closes the file). */
  async close(): Promise<void> {
    this.headId = undefined;
    await this.closeFile();
  }

  /** Finds the next non-blank line in memory and takes its id; false when no whole line is left. */
  private settle(): boolean {
    if (this.headId !== undefined) return true;
    const buffer = this.buffer;
    while (this.start < this.end) {
      let lineEnd = buffer.indexOf(NEWLINE, this.start);
      let next: number;
      if (lineEnd === -1 || lineEnd >= this.end) {
        if (!this.eof) return false;
        lineEnd = next = this.end; // the last line, without a line break
      } else {
        next = lineEnd + 1;
      }
      this.number++;
      if (lineEnd > this.start && buffer[lineEnd - 1] === CARRIAGE_RETURN) lineEnd--;
      if (lineEnd === this.start) {
        this.start = next; // a blank line
        continue;
      }
      const id = this.idOf(this.start, lineEnd);
      if (this.lastId !== undefined && compareIds(this.lastId, id) >= 0)
        throw new Error(
          `${this.path}: ids out of order ("${id}" after "${this.lastId}"); the sync state is damaged.`,
        );
      this.lastId = id;
      this.headId = id;
      this.headEnd = lineEnd;
      this.nextStart = next;
      return true;
    }
    return false;
  }

  /** The id of the line `[from, to)`: read from its bytes, parsed only when it holds escapes. */
  private idOf(from: number, to: number): string {
    const buffer = this.buffer;
    const idStart = from + ID_PREFIX.length;
    if (to > idStart && buffer.compare(ID_PREFIX, 0, ID_PREFIX.length, from, idStart) === 0) {
      let ascii = true;
      for (let i = idStart; i < to; i++) {
        const byte = buffer[i]!;
        if (byte === QUOTE) {
          if (i === idStart) break;
          return buffer.toString(ascii ? 'latin1' : 'utf8', idStart, i);
        }
        if (byte === BACKSLASH) break;
        if (byte >= 0x80) ascii = false;
      }
    }
    const id = this.parseLine<{ id?: unknown } | null>(from, to)?.id;
    if (typeof id !== 'string')
      throw new Error(
        `${this.path}, line ${this.number}: a record without an id; the sync state is damaged.`,
      );
    return id;
  }

  private parseLine<T>(from: number, to: number): T {
    try {
      return JSON.parse(this.buffer.toString('utf8', from, to)) as T;
    } catch {
      throw new Error(`${this.path}, line ${this.number}: not valid JSON; the sync state is damaged.`);
    }
  }
}
