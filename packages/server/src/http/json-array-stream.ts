import { Readable } from 'node:stream';

const CHUNK_BYTES = 64 * 1024;

/**
 * A plain JSON array written one element per line (`[`, elements separated by `,` + newline, `]`),
 * so clients can parse it line by line. Elements are batched into chunks of about 64 KiB, and the
 * stream pulls the next element only when the socket wants more, so memory stays flat.
 */
export function jsonArrayStream(elements: AsyncIterable<string>): Readable {
  async function* chunks() {
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
  return Readable.from(chunks(), { objectMode: false });
}

/** The same shape for elements already in memory (a page). */
export function jsonArrayText(elements: string[]): string {
  return elements.length === 0 ? '[\n]\n' : `[\n${elements.join(',\n')}\n]\n`;
}
