import { Readable } from 'node:stream';
import StreamArray from 'stream-json/streamers/StreamArray.js';
import withParser from 'stream-json/utils/withParser.js';
import { keepingProtoKeys } from './own-keys.js';

/** The body is not a complete JSON array: cut short (`truncated`) or malformed. */
export class JsonArrayError extends Error {
  override name = 'JsonArrayError';
  readonly code = 'RXS_ERR_JSON_ARRAY';
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
 * whatever the array's length. See {@link parseJsonArrayBatches}, which this flattens.
 */
export async function* parseJsonArray(
  chunks: AsyncIterable<Uint8Array>,
  options: JsonArrayOptions = {},
): AsyncGenerator<unknown, void, undefined> {
  for await (const batch of parseJsonArrayBatches(chunks, options)) yield* batch;
}

/**
 * The elements of a JSON array body, yielded in batches (the elements completed by each chunk of
 * bytes, never an empty batch) as the bytes arrive, so memory stays flat whatever the array's
 * length, and the consumer pays one await per chunk rather than one per element.
 *
 * Fast path: our services write `[`, then one element per line (each but the last followed by `,`),
 * then `]`, so each line is a `JSON.parse`. The layout is decided from the first bytes: `[` followed
 * by a line break. Anything else (the whole array on one line, pretty-printed, ...) goes to the
 * general streaming parser (stream-json). A line that is not a whole element hands over to the
 * general parser at that point, with the text already received: nothing is requested twice.
 *
 * A body that ends before its closing `]` throws a {@link JsonArrayError} with `truncated`; malformed
 * JSON or a top level that is not an array throws one without. Errors of the byte source (network,
 * timeouts) pass through unchanged. Elements parsed before an error are always yielded before it
 * is thrown, as an element-by-element parser would.
 */
export async function* parseJsonArrayBatches(
  chunks: AsyncIterable<Uint8Array>,
  options: JsonArrayOptions = {},
): AsyncGenerator<unknown[], void, undefined> {
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
      yield* batchesOf(parseGeneral(head, texts, 0));
      return;
    }

    options.onMode?.('lines');
    const lines = new LineSplitter();
    let buffer = head.slice(linesFrom);
    let ended = false;
    for (;;) {
      const batch: unknown[] = [];
      const outcome = lines.parse(buffer, ended, batch);
      if (batch.length > 0) yield batch;
      if (typeof outcome === 'number') {
        // A line that is not one element (or one too long to wait for): we stand between two
        // elements, and the general parser continues from there. After an element without a
        // trailing comma it gets a placeholder element first, skipped.
        options.onMode?.('general');
        const afterLast = lines.state === 'afterLast';
        yield* batchesOf(
          parseGeneral((afterLast ? '[0\n' : '[\n') + buffer.slice(outcome), texts, afterLast ? 1 : 0),
        );
        return;
      }
      if (outcome instanceof JsonArrayError) throw outcome;
      buffer = buffer.slice(lines.consumed);
      if (ended) break;
      if (buffer.length > maxLine && lines.state !== 'closed') {
        options.onMode?.('general');
        const afterLast = lines.state === 'afterLast';
        yield* batchesOf(parseGeneral((afterLast ? '[0\n' : '[\n') + buffer, texts, afterLast ? 1 : 0));
        return;
      }
      const next = await texts.next();
      if (next.done) ended = true;
      else buffer += next.value;
    }
    if (lines.state !== 'closed')
      throw new JsonArrayError('ends before the closing ] of its JSON array', true);
  } finally {
    // Stops the byte source (and so the HTTP body) when the consumer stops early or parsing failed.
    texts.return?.().catch(() => undefined);
  }
}

/** The elements of a one-element-per-line array, line by line, across chunk boundaries. */
export class LineSplitter {
  state: 'first' | 'afterComma' | 'afterLast' | 'closed' = 'first';
  /** Characters of the last text passed to `parse` that were used up (whole lines). */
  consumed = 0;
  /** Where the search for the next line break resumes (the start of a line is rescanned otherwise). */
  private searchFrom = 0;

  /**
   * Parses the whole lines of `text` (all of it when `ended`: the last line needs no line break)
   * into `into`. Returns undefined when every whole line was an element (or `]`), the error of a
   * line that breaks the layout's rules, or the index in `text` of the first line that is not one
   * element (the general parser takes over there). `consumed` tells how much of `text` was used.
   */
  parse(text: string, ended: boolean, into: unknown[]): undefined | number | JsonArrayError {
    let position = 0;
    // The text before `searchFrom` is the start of a line already searched for its end.
    let from = this.searchFrom;
    this.searchFrom = 0;
    for (;;) {
      const newline = text.indexOf('\n', from > position ? from : position);
      from = 0;
      if (newline < 0) {
        if (!(ended && position < text.length)) {
          this.consumed = Math.min(position, text.length);
          this.searchFrom = text.length - this.consumed;
          return undefined;
        }
      }
      const end = newline < 0 ? text.length : newline;
      const lineStart = position;
      position = end + 1;
      // The line without surrounding whitespace, without copying it when it has none.
      let first = lineStart;
      let last = end;
      while (first < last && isSpace(text.charCodeAt(first))) first++;
      while (last > first && isSpace(text.charCodeAt(last - 1))) last--;
      if (first === last) continue;
      if (this.state === 'closed') {
        this.consumed = lineStart;
        return new JsonArrayError(
          `has data after the closing ] (${JSON.stringify(text.slice(first, last).slice(0, 40))})`,
          false,
        );
      }
      if (last - first === 1 && text.charCodeAt(first) === 0x5d) {
        if (this.state === 'afterComma') {
          this.consumed = lineStart;
          return new JsonArrayError('has a comma before the closing ]', false);
        }
        this.state = 'closed';
        continue;
      }
      const comma = text.charCodeAt(last - 1) === 0x2c;
      let parsed = false;
      if (this.state !== 'afterLast') {
        try {
          into.push(JSON.parse(text.slice(first, comma ? last - 1 : last)));
          parsed = true;
        } catch {
          // Not one element per line: the general parser takes over.
        }
      }
      if (!parsed) {
        this.consumed = lineStart;
        return lineStart;
      }
      this.state = comma ? 'afterComma' : 'afterLast';
    }
  }
}

/** What `String.prototype.trim` removes, for the characters a JSON line can start or end with. */
function isSpace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    code === 0xa0 ||
    code === 0xfeff ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** One-element batches of an element-by-element source (the general parser). */
async function* batchesOf<T>(items: AsyncIterable<T>): AsyncGenerator<T[], void, undefined> {
  for await (const item of items) yield [item];
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
  const parser = withParser((options) => keepingProtoKeys(new StreamArray(options)));
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
