import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { endOutput, writeAndWait, writeChunk } from '@rxs/exchange/export';
import { fsyncPath } from '@rxs/exchange/export';

/** Lines gathered by `push` are written in pieces of about this many bytes. */
const PIECE_BYTES = 1024 * 1024;

/**
 * A file of JSON lines written front to back with backpressure (flat memory), flushed to disk by
 * `close`. JSON escapes line breaks inside strings, so one value is exactly one line.
 */
export class JsonLinesSink {
  private readonly stream: WriteStream;
  private closed = false;
  /** Bytes of the lines gathered by `push`, not yet written (up to `pendingLength`). */
  private bytes: Buffer = Buffer.alloc(0);
  private pendingLength = 0;
  /** The piece being written, whose buffer is reused once the file has it (two buffers in turn). */
  private writing: { buffer: Buffer; done: Promise<void> } | undefined;
  /** Bytes handed to the stream so far (pending ones not counted). */
  private handed = 0;
  count = 0;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { flags: 'wx', mode: 0o644 });
  }

  /**
   * Gathers a line (already serialized with `JSON.stringify`, no line break of its own) to be
   * written with the next `flush`, encoded once. Returns where its bytes start in `pending`; they
   * end right before its line break, at `pendingEnd - 1`.
   */
  push(line: string): number {
    this.reserve(line.length * 3 + 1); // UTF-8 takes at most 3 bytes per UTF-16 code unit
    const start = this.pendingLength;
    const end = start + this.bytes.write(line, start);
    this.bytes[end] = 0x0a;
    this.pendingLength = end + 1;
    this.count++;
    return start;
  }

  /** Gathers a line given as bytes (no line break of its own), as `push` does a string. */
  pushBytes(line: Uint8Array): void {
    this.reserve(line.length + 1);
    const start = this.pendingLength;
    this.bytes.set(line, start);
    this.bytes[start + line.length] = 0x0a;
    this.pendingLength = start + line.length + 1;
    this.count++;
  }

  private reserve(room: number): void {
    if (this.bytes.length - this.pendingLength >= room) return;
    // Doubling: lines pushed without a flush between them cost linear time, not quadratic.
    const larger = Buffer.allocUnsafe(Math.max(PIECE_BYTES + room, 2 * this.pendingLength + room));
    this.bytes.copy(larger, 0, 0, this.pendingLength);
    this.bytes = larger;
  }

  /**
   * Bytes of whole lines copied from another file of lines, written as they are (with the next
   * `flush`); `lines` of them.
   */
  pushRaw(bytes: Uint8Array, lines: number): void {
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.pendingLength);
    this.pendingLength += bytes.length;
    this.count += lines;
  }

  /** Where the next line will start in the file. */
  get offset(): number {
    return this.handed + this.pendingLength;
  }

  /** The bytes gathered by `push` (valid until the next `push` or `flush`). */
  get pending(): Buffer {
    return this.bytes;
  }

  /** The end of the gathered bytes (after the last line break). */
  get pendingEnd(): number {
    return this.pendingLength;
  }

  /** True when enough lines are gathered to be worth writing. */
  get full(): boolean {
    return this.pendingLength >= PIECE_BYTES;
  }

  /**
   * Writes the lines gathered by `push`. The piece is written while the next one is gathered; its
   * buffer takes the next lines after the one before it was written (flat memory, no garbage).
   */
  async flush(): Promise<void> {
    if (this.pendingLength === 0) return;
    const previous = this.writing;
    const done = writeAndWait(this.stream, this.bytes.subarray(0, this.pendingLength));
    done.catch(() => undefined); // awaited by the next flush or close
    this.writing = { buffer: this.bytes, done };
    this.handed += this.pendingLength;
    this.bytes = Buffer.alloc(0);
    this.pendingLength = 0;
    if (previous) {
      await previous.done;
      this.bytes = previous.buffer;
    }
  }

  /** Appends a line already serialized with `JSON.stringify` (no line break of its own). */
  async appendLine(line: string): Promise<void> {
    await this.flush();
    await this.writing?.done;
    const text = `${line}\n`;
    await writeChunk(this.stream, text);
    this.handed += Buffer.byteLength(text);
    this.count++;
  }

  append(value: unknown): Promise<void> {
    return this.appendLine(JSON.stringify(value));
  }

  /** Ends the file and flushes it to disk. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    await this.writing?.done;
    this.writing = undefined;
    this.closed = true;
    await endOutput(this.stream);
    await fsyncPath(this.path);
  }

  /** Stops writing without flushing (the file is about to be removed). */
  async destroy(): Promise<void> {
    this.closed = true;
    this.bytes = Buffer.alloc(0);
    this.pendingLength = 0;
    this.writing = undefined;
    const stream = this.stream;
    if (stream.closed) return;
    const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
    // Writes still pending fail with ERR_STREAM_DESTROYED: expected, the file is being dropped.
    stream.on('error', () => undefined);
    stream.destroy();
    await closed;
  }
}

/** The values of a JSON lines file, one at a time (flat memory); blank lines are skipped. */
export async function* readJsonLines<T>(path: string): AsyncGenerator<T> {
  const input = createReadStream(path, 'utf8');
  const lines = createInterface({ input, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const line of lines) {
      number++;
      if (line === '') continue;
      let value: T;
      try {
        value = JSON.parse(line) as T;
      } catch {
        throw new Error(`${path}, line ${number}: not valid JSON; the sync state is damaged.`);
      }
      yield value;
    }
  } finally {
    lines.close();
    input.destroy();
  }
}
