import type { FileHandle } from 'node:fs/promises';

/** Bytes read from a file at a time (grown when a single line is longer). */
export const CHUNK_BYTES = 1024 * 1024;

/**
 * Reads on in a file read front to back in large chunks: the unread bytes `buffer[start, end)` move
 * to the front (into a buffer twice as large when they fill it: a line longer than a chunk) and
 * the next bytes are read after them. Returns the buffer (now unread from 0 to `end`) and whether
 * the file ended.
 */
export async function readOn(
  handle: FileHandle,
  buffer: Buffer,
  start: number,
  end: number,
): Promise<{ buffer: Buffer; end: number; eof: boolean }> {
  const rest = end - start;
  if (rest === buffer.length) {
    const larger = Buffer.allocUnsafe(buffer.length * 2);
    buffer.copy(larger, 0, start, end);
    buffer = larger;
  } else if (start > 0) {
    buffer.copy(buffer, 0, start, end);
  }
  const { bytesRead } = await handle.read(buffer, rest, buffer.length - rest, null);
  return { buffer, end: rest + bytesRead, eof: bytesRead === 0 };
}
