import { Readable } from 'node:stream';
import StreamArray from 'stream-json/streamers/StreamArray.js';

/** The body is not a complete JSON array: cut short (`truncated`) or malformed. */
export class JsonArrayError extends Error {
  override name = 'JsonArrayError';
  constructor(
    message: string,
    readonly truncated: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `lines`: one element per line, as our services write; `general`: any JSON layout (stream-json). */
export type JsonArrayMode = 'lines' | 'general';

export interface JsonArrayOptions {
  /**
   * A line longer than this (in characters) is not waited for in lines mode: parsing hands over to
   * the general parser, so a one-line body never has to be held in memory whole.
   */
  maxLineLength?: number;
  /** Called once the layout is known, and again if lines mode hands over to the general parser. */
  onMode?: (mode: JsonArrayMode) => void;
}

const DEFAULT_MAX_LINE = 4 * 1024 * 1024;

/**
 * The elements of a JSON array body, yielded one by one as its bytes arrive, so memory stays flat
 * whatever the array's length.
 *
 * Fast path: our services write `[`, then one element per line (each but the last followed by `,`),
 * then `]`, so each line is a `JSON.parse`. The layout is decided from the first bytes: `[` followed
 * by a line break. Anything else (the whole array on one line, pretty-printed, ...) goes to the
 * general streaming parser (stream-json). A line that is not a whole element hands over to the
 * general parser at that point, with the text already received: nothing is requested twice.
 *
 * A body that ends before its closing `]` throws a {@link JsonArrayError} with `truncated`; malformed
 * JSON or a top level that is not an array throws one without. Errors of the byte source (network,
 * timeouts) pass through unchanged.
 */
export async function* parseJsonArray(
  chunks: AsyncIterable<Uint8Array>,
  options: JsonArrayOptions = {},
): AsyncGenerator<unknown, void, undefined> {
  const maxLine = options.maxLineLength ?? DEFAULT_MAX_LINE;
  const texts = decodeUtf8(chunks)[Symbol.asyncIterator]();
  try {
    // The first bytes decide the layout.
    let head = '';
    let linesFrom: number | undefined;
    for (;;) {
      const decision = decideLayout(head);
      if (decision === 'general' || head.length > maxLine) break;
      if (decision !== undefined) {
        linesFrom = decision;
        break;
      }
      const next = await texts.next();
      if (next.done) {
        if (head.trim() === '') throw new JsonArrayError('is empty where a JSON array was expected', true);
        break;
      }
      head += next.value;
    }
    if (linesFrom === undefined) {
      options.onMode?.('general');
      yield* parseGeneral(head, texts, 0);
      return;
    }

    options.onMode?.('lines');
    let state: 'first' | 'afterComma' | 'afterLast' | 'closed' = 'first';
    let buffer = head.slice(linesFrom);
    let ended = false;
    for (;;) {
      let position = 0;
      for (;;) {
        const newline = buffer.indexOf('\n', position);
        // At the end of the body, the last line needs no line break.
        if (newline < 0 && !(ended && position < buffer.length)) break;
        const end = newline < 0 ? buffer.length : newline;
        const line = buffer.slice(position, end).trim();
        const lineStart = position;
        position = end + 1;
        if (line === '') continue;
        if (state === 'closed') {
          throw new JsonArrayError(
            `has data after the closing ] (${JSON.stringify(line.slice(0, 40))})`,
            false,
          );
        }
        if (line === ']') {
          if (state === 'afterComma') throw new JsonArrayError('has a comma before the closing ]', false);
          state = 'closed';
          continue;
        }
        let element: unknown;
        let parsed = false;
        const comma = line.endsWith(',');
        if (state !== 'afterLast') {
          try {
            element = JSON.parse(comma ? line.slice(0, -1) : line);
            parsed = true;
          } catch {
            // Not one element per line: the general parser takes over below.
          }
        }
        if (!parsed) {
          // We stand between two elements; the general parser continues from this line. After an
          // element without a trailing comma it gets a placeholder element first, skipped.
          options.onMode?.('general');
          const afterLast = state === 'afterLast';
          yield* parseGeneral(
            (afterLast ? '[0\n' : '[\n') + buffer.slice(lineStart),
            texts,
            afterLast ? 1 : 0,
          );
          return;
        }
        state = comma ? 'afterComma' : 'afterLast';
        yield element;
      }
      buffer = buffer.slice(Math.min(position, buffer.length));
      if (ended) break;
      if (buffer.length > maxLine && state !== 'closed') {
        options.onMode?.('general');
        const afterLast = state === 'afterLast';
        yield* parseGeneral((afterLast ? '[0\n' : '[\n') + buffer, texts, afterLast ? 1 : 0);
        return;
      }
      const next = await texts.next();
      if (next.done) ended = true;
      else buffer += next.value;
    }
    if (state !== 'closed') throw new JsonArrayError('ends before the closing ] of its JSON array', true);
  } finally {
    // Stops the byte source (and so the HTTP body) when the consumer stops early or parsing failed.
    texts.return?.().catch(() => undefined);
  }
}

/** Lines mode when the body starts with `[` and a line break: the index after it; else 'general', or undefined to read more. */
function decideLayout(head: string): number | 'general' | undefined {
  const start = head.search(/\S/);
  if (start < 0) return undefined;
  if (head[start] !== '[') return 'general';
  for (let i = start + 1; i < head.length; i++) {
    const char = head[i];
    if (char === '\n') return i + 1;
    if (char !== ' ' && char !== '\t' && char !== '\r') return 'general';
  }
  return undefined;
}

/** The body as text; invalid UTF-8 is malformed, a body ending inside a character is truncated. */
async function* decodeUtf8(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (chunk?: Uint8Array) => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch (error) {
      throw new JsonArrayError(
        chunk ? 'is not valid UTF-8' : 'ends in the middle of a UTF-8 character',
        !chunk,
        { cause: error },
      );
    }
  };
  for await (const chunk of chunks) {
    const text = decode(chunk);
    if (text) yield text;
  }
  const tail = decode();
  if (tail) yield tail;
}

/**
 * Whether a JSON text ends inside a string, object or array: tells a body cut short (a valid
 * beginning) from a malformed one when the parser fails at its end.
 */
class NestingScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private seen = false;

  scan(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (code === 0x5c) this.escaped = true;
        else if (code === 0x22) this.inString = false;
      } else if (code === 0x22) this.inString = true;
      else if (code === 0x5b || code === 0x7b) this.depth++;
      else if (code === 0x5d || code === 0x7d) this.depth--;
      if (code > 0x20) this.seen = true;
    }
  }

  /** Nothing yet, or an unclosed string, object or array. */
  get open(): boolean {
    return !this.seen || this.inString || this.depth > 0;
  }
}

/**
 * The general path: stream-json over `first` and then the rest of the text, skipping the first
 * `skip` elements (placeholders). A parse error after the input ended is truncation when the text
 * ends inside a string, object or array; otherwise it is malformed JSON.
 */
async function* parseGeneral(
  first: string,
  rest: AsyncIterator<string>,
  skip: number,
): AsyncGenerator<unknown, void, undefined> {
  let inputEnded = false;
  let sourceError: unknown;
  const nesting = new NestingScanner();
  const note = (text: string) => nesting.scan(text);
  async function* source() {
    if (first) {
      note(first);
      yield first;
    }
    for (;;) {
      const next = await rest.next();
      if (next.done) break;
      note(next.value);
      yield next.value;
    }
    inputEnded = true;
  }
  const input = Readable.from(source(), { objectMode: false });
  const parser = StreamArray.withParser();
  input.on('error', (error) => {
    sourceError = error;
    parser.destroy(error);
  });
  input.pipe(parser);
  let index = 0;
  try {
    for await (const item of parser as AsyncIterable<{ key: number; value: unknown }>) {
      if (index++ < skip) continue;
      yield item.value;
    }
  } catch (error) {
    if (sourceError !== undefined) throw sourceError;
    const message = error instanceof Error ? error.message : String(error);
    if (/top-level object should be an array/i.test(message)) {
      throw new JsonArrayError('is not a JSON array', false, { cause: error });
    }
    if (inputEnded && nesting.open) {
      throw new JsonArrayError('ends before the closing ] of its JSON array', true, { cause: error });
    }
    throw new JsonArrayError(`is not valid JSON (${message})`, false, { cause: error });
  } finally {
    input.destroy();
    parser.destroy();
  }
}
