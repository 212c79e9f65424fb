import { Readable } from 'node:stream';

/**
 * A plain JSON array written one element per line (`[`, elements separated by `,` + newline, `]`),
 * so clients can parse it line by line. The elements come in chunks of whole lines, each line
 * preceded by `,\n` (`,\n<line>,\n<line>...`), as UTF-8 bytes or text; the stream pulls the next
 * chunk only when the socket wants more, so memory stays flat.
 */
export function jsonArrayStream(chunks: AsyncIterable<Buffer | string>): Readable {
  return Readable.from(jsonArrayParts(chunks), { objectMode: false });
}

/** The bytes of `jsonArrayStream` as they go out, for a caller that also keeps them. */
export async function* jsonArrayParts(
  chunks: AsyncIterable<Buffer | string>,
): AsyncGenerator<Buffer | string> {
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

/** Bytes of JSON per streamed chunk. */
export const CHUNK_BYTES = 256 * 1024;

/**
 * Lines (batches of them, as a database cursor hands rows out) joined into the chunks
 * `jsonArrayStream` takes: each line preceded by `,\n`, about CHUNK_BYTES a chunk.
 */
export async function* lineChunks(
  batches: AsyncIterable<readonly string[]> | Iterable<readonly string[]>,
): AsyncGenerator<string> {
  let buffer = '';
  for await (const lines of batches) {
    for (const line of lines) {
      buffer += `,\n${line}`;
      if (buffer.length >= CHUNK_BYTES) {
        yield buffer;
        buffer = '';
      }
    }
  }
  if (buffer) yield buffer;
}

/** The same shape for elements already in memory (a page). */
export function jsonArrayText(elements: string[]): string {
  return elements.length === 0 ? '[\n]\n' : `[\n${elements.join(',\n')}\n]\n`;
}

/**
 * A JSON object whose one streamed member is an array in the same one-element-per-line shape:
 * `head` opens the object up to and including that member's name (`{"a":1,"records":`), the
 * array's lines follow, and `tail` (asked for once the lines were read, so it may report what they
 * were) closes it (`,"removed":[]}`).
 */
export function jsonObjectStream(
  head: string,
  chunks: AsyncIterable<Buffer | string>,
  tail: () => string,
): Readable {
  async function* parts(): AsyncGenerator<Buffer | string> {
    yield head;
    yield* jsonArrayParts(chunks);
    yield `${tail()}\n`;
  }
  return Readable.from(parts(), { objectMode: false });
}
