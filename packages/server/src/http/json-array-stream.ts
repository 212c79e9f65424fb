import { Readable } from 'node:stream';

const CHUNK_BYTES = 64 * 1024;

/**
 * Marks a source of JSON lines that can also hand over its lines in bulk: chunks of whole lines,
 * each line preceded by `,\n` (so a chunk is `,\n<line>,\n<line>...`), as UTF-8 bytes or text.
 * Writing a listing from such chunks skips all per-line work.
 */
export const JSON_LINE_CHUNKS = Symbol('rxs.jsonLineChunks');

export interface JsonLineSource extends AsyncIterable<string> {
  [JSON_LINE_CHUNKS]?(): AsyncIterable<Buffer | string>;
}

/**
 * A plain JSON array written one element per line (`[`, elements separated by `,` + newline, `]`),
 * so clients can parse it line by line. Elements are batched into chunks of about 64 KiB, and the
 * stream pulls the next chunk only when the socket wants more, so memory stays flat.
 */
export function jsonArrayStream(elements: JsonLineSource): Readable {
  const bulk = elements[JSON_LINE_CHUNKS]?.();
  return Readable.from(bulk ? fromChunks(bulk) : fromLines(elements), { objectMode: false });
}

async function* fromLines(elements: AsyncIterable<string>): AsyncGenerator<string> {
  let buffer = '[\n';
  let first = true;
  for await (const element of elements) {
    buffer += first ? element : `,\n${element}`;
    first = false;
    if (buffer.length >= CHUNK_BYTES) {
      yield buffer;
      buffer = '';
    }
  }
  yield `${buffer}${first ? '' : '\n'}]\n`;
}

/** Chunks of `,\n`-prefixed lines: the first chunk's leading `,\n` becomes the opening `[\n`. */
async function* fromChunks(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer | string> {
  let first = true;
  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    if (first) {
      first = false;
      if (typeof chunk === 'string') yield `[${chunk.slice(1)}`;
      else {
        // The chunk is ours (fresh from the database driver): turn its `,` into `[` in place.
        chunk[0] = 0x5b;
        yield chunk;
      }
    } else yield chunk;
  }
  yield first ? '[\n]\n' : '\n]\n';
}

/** The same shape for elements already in memory (a page). */
export function jsonArrayText(elements: string[]): string {
  return elements.length === 0 ? '[\n]\n' : `[\n${elements.join(',\n')}\n]\n`;
}
