import { pipeline, Readable } from 'node:stream';
import Parser from 'stream-json/Parser.js';
import Pick from 'stream-json/filters/Pick.js';
import StreamValues from 'stream-json/streamers/StreamValues.js';
import { keepingProtoKeys } from '../client/own-keys.js';
import { isPlainObject } from '../mapping/paths.js';
import { rowOfObject } from './object-row.js';
import { decodeTextFile } from './text-decoding.js';
import { ImportFileError, type RowSource, type SourceRow } from './source-row.js';

/**
 * Records of a JSON file, streamed: an `rxs export --format json` document (the records of each
 * topic), a JSON array of records or plain objects (`GET /records/` answers, hand-made lists), or
 * an object with such an array under `records`.
 */
export class JsonSource implements RowSource {
  readonly format = 'json' as const;
  readonly notes: string[] = [];

  constructor(private readonly file: string) {}

  async *rows(): AsyncGenerator<SourceRow> {
    const records = /^(?:\d+|records\.\d+|topics\.\d+\.records\.\d+)$/;
    // pipeline(), not pipe(): an error of any stage (a bad byte, broken JSON) ends the loop below.
    const values = pipeline(
      Readable.from(decodeTextFile(this.file)),
      new Parser(),
      new Pick({ filter: records }),
      keepingProtoKeys(new StreamValues()),
      () => {},
    );
    let count = 0;
    try {
      for await (const { value } of values as AsyncIterable<{ value: unknown }>) {
        count++;
        yield rowOfObject(value, `record ${count}`);
      }
    } catch (error) {
      if (error instanceof ImportFileError) throw error;
      throw new ImportFileError(
        `${this.file} is not complete JSON after record ${count}: ${(error as Error).message}. The file may be cut short: export or save it again.`,
      );
    }
  }
}

/**
 * Records of a JSON Lines file: `rxs export --format jsonl` (its `record` lines; a file without
 * its `end` line was cut short and is refused), or one record or plain object per line.
 */
export class JsonLinesSource implements RowSource {
  readonly format = 'jsonl' as const;
  readonly notes: string[] = [];

  constructor(private readonly file: string) {}

  async *rows(): AsyncGenerator<SourceRow> {
    const lines = linesOf(decodeTextFile(this.file));
    let number = 0;
    let exportFile = false;
    let ended = false;
    for await (const raw of lines) {
      number++;
      const line = number === 1 ? raw.replace(/^\uFEFF/, '') : raw;
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new ImportFileError(
          `${this.file} line ${number} is not JSON (${(error as Error).message}): every line of a JSON Lines file holds one object. The file may be cut short.`,
        );
      }
      const kind = isPlainObject(value) && typeof value.kind === 'string' ? value.kind : undefined;
      if (kind === 'header') exportFile = true;
      if (kind === 'end') ended = true;
      if (kind !== undefined && kind !== 'record') continue;
      if (kind === 'record') delete (value as Record<string, unknown>).kind;
      yield rowOfObject(value, `line ${number}`);
    }
    if (exportFile && !ended)
      throw new ImportFileError(
        `${this.file} has no "end" line: the export was cut short (or is still being written). Export it again.`,
      );
  }
}

/** The lines of a text, as they arrive (LF or CRLF ended; the last may have no end). */
async function* linesOf(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of chunks) {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    for (const part of parts) yield part.endsWith('\r') ? part.slice(0, -1) : part;
  }
  if (rest !== '') yield rest;
}
