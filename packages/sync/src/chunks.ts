import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Bytes read from a file at a time (grown when a single line is longer). */
export const CHUNK_BYTES = 1024 * 1024;
/** Bytes read after a jump, where a line or two are wanted (`ChunkedReader.readNear`). */
export const NEAR_BYTES = 16 * 1024;

/**
 * Moves the unread bytes `buffer[start, end)` to the front, into a new buffer of `grownBytes` when
 * fewer than `room` bytes would be left after them. Returns the buffer they are in.
 */
function withRoom(buffer: Buffer, start: number, end: number, room: number, grownBytes: number): Buffer {
  const rest = end - start;
  if (buffer.length - rest < room) {
    const larger = Buffer.allocUnsafe(grownBytes);
    buffer.copy(larger, 0, start, end);
    return larger;
  }
  if (start > 0) buffer.copy(buffer, 0, start, end);
  return buffer;
}

/**
 * Reads on in a file read front to back in large chunks: the unread bytes `buffer[start, end)` move
 * to the front (into a buffer twice as large when they fill it: a line longer than a chunk) and
 * the next bytes are read after them. Returns the buffer (now unread from 0 to `end`) and whether
 * the file ended. `position`: where in the file to read (null: on from the last read).
 */
export async function readOn(
  handle: FileHandle,
  buffer: Buffer,
  start: number,
  end: number,
  position: number | null = null,
): Promise<{ buffer: Buffer; end: number; eof: boolean }> {
  const rest = end - start;
  buffer = withRoom(buffer, start, end, 1, buffer.length * 2);
  const { bytesRead } = await handle.read(buffer, rest, buffer.length - rest, position);
  return { buffer, end: rest + bytesRead, eof: bytesRead === 0 };
}

/**
 * A file read forward in large chunks that hands out byte ranges in ascending order: ranges close
 * to each other (the unchanged records between two changed ones) cost no read of their own.
 */
export class ForwardRanges {
  private buffer = Buffer.alloc(0);
  /** The file positions `buffer` holds: [from, to). */
  private from = 0;
  private to = 0;

  constructor(
    private readonly handle: FileHandle,
    private readonly chunkBytes = 4 * CHUNK_BYTES,
  ) {}

  /** Hands the bytes [from, to) of the file to `take`, in pieces valid only during each call. */
  async copy(from: number, to: number, take: (bytes: Buffer) => unknown): Promise<void> {
    for (let at = from; at < to;) {
      if (at < this.from || at >= this.to) {
        if (this.buffer.length === 0) this.buffer = Buffer.allocUnsafe(this.chunkBytes);
        const { bytesRead } = await this.handle.read(this.buffer, 0, this.buffer.length, at);
        if (bytesRead === 0) throw new Error(`The file ends at byte ${at}, before byte ${to}.`);
        this.from = at;
        this.to = at + bytesRead;
      }
      const end = Math.min(to, this.to);
      await take(this.buffer.subarray(at - this.from, end - this.from));
      at = end;
    }
  }
}

/**
 * A file read front to back in large chunks, the common part of the readers of snapshot lines
 * (line-cursor.ts) and output rows (output-rows.ts): `buffer[start, end)` holds the bytes read and
 * not yet taken, `position` is where in the file the next read starts. `readMore` keeps the unread
 * bytes at the front and reads the next chunk after them (`readOn`); the file is opened at the
 * first read. Memory holds one chunk (more only for a line longer than one).
 */
export class ChunkedReader {
  protected handle: FileHandle | undefined;
  protected buffer: Buffer = Buffer.alloc(0);
  /** Where the unread bytes start in `buffer`. */
  protected start = 0;
  /** End of the bytes read into `buffer`. */
  protected end = 0;
  protected eof = false;
  /** Where in the file the next read starts. */
  protected position = 0;

  constructor(
    readonly path: string | undefined,
    protected readonly chunkBytes = CHUNK_BYTES,
  ) {}

  /** Reads the next chunk after the unread bytes. */
  protected async readMore(): Promise<void> {
    if (!this.handle) {
      this.handle = await open(this.path!, 'r');
      this.buffer = Buffer.allocUnsafe(this.chunkBytes);
    }
    const read = await readOn(this.handle, this.buffer, this.start, this.end, this.position);
    this.position += read.end - (this.end - this.start);
    this.buffer = read.buffer;
    this.start = 0;
    this.end = read.end;
    if (read.eof) this.eof = true;
  }

  /**
   * Reads on a little (`NEAR_BYTES`, or as much again as is held when a line is longer),
   * synchronously: after a jump to a record far ahead, where only its line is wanted. Thousands
   * of such reads (a poll's changed records) cost microseconds each from the page cache, where an
   * asynchronous read each would wait for the thread pool, and a chunk each would read the file.
   * Only once the file is open (`readMore` opens it).
   */
  protected readNear(): void {
    const rest = this.end - this.start;
    const want = Math.max(NEAR_BYTES, rest);
    this.buffer = withRoom(this.buffer, this.start, this.end, want, Math.max(this.chunkBytes, rest + want));
    const bytesRead = readSync(this.handle!.fd, this.buffer, rest, want, this.position);
    this.position += bytesRead;
    this.start = 0;
    this.end = rest + bytesRead;
    if (bytesRead === 0) this.eof = true;
  }

  /** Stops reading: closes the file and drops the buffer. */
  protected async closeFile(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    this.eof = true;
    this.start = this.end = 0;
    this.buffer = Buffer.alloc(0);
    await handle?.close();
  }
}
