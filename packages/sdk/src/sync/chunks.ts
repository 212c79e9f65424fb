import type { FileHandle } from 'node:fs/promises';

/** Bytes read from a file at a time (grown when a single line is longer). */
export const CHUNK_BYTES = 1024 * 1024;

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
  if (rest === buffer.length) {
    const larger = Buffer.allocUnsafe(buffer.length * 2);
    buffer.copy(larger, 0, start, end);
    buffer = larger;
  } else if (start > 0) {
    buffer.copy(buffer, 0, start, end);
  }
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
