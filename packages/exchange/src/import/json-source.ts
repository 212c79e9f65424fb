import { eventLoopSlices } from '../event-loop.js';
import { pipeline, Readable, Transform } from 'node:stream';
import Parser from 'stream-json/Parser.js';
import Pick from 'stream-json/filters/Pick.js';
import StreamValues from 'stream-json/streamers/StreamValues.js';
import { keepingProtoKeys } from '@rxs/client';
import { isPlainObject } from '../mapping/paths.js';
import { rowOfObject } from './object-row.js';
import {
  cellTooLarge,
  DistinctColumns,
  importLimits,
  limitError,
  sizeText,
  type ImportLimits,
} from './limits.js';
import { decodeTextFile } from './text-decoding.js';
import { ImportFileError } from './errors.js';
import type { RowSource, SourceRow } from './source-row.js';

/**
 * Records of a JSON file, streamed: an `rxs export --format json` document (the records of each
 * topic), a JSON array of records or plain objects (`GET /records/` answers, hand-made lists), or
 * an object with such an array under `records`.
 */
export class JsonSource implements RowSource {
  readonly format = 'json' as const;
  readonly notes: string[] = [];
  private readonly limits: ImportLimits;

  constructor(
    private readonly file: string,
    limits: Partial<ImportLimits> = {},
  ) {
    this.limits = importLimits(limits);
  }

  async *rows(): AsyncGenerator<SourceRow> {
    const records = /^(?:\d+|records\.\d+|topics\.\d+\.records\.\d+)$/;
    // pipeline(), not pipe(): an error of any stage (a bad byte, broken JSON) ends the loop below.
    const values = pipeline(
      Readable.from(decodeTextFile(this.file)),
      new Parser(),
      boundedStrings(this.limits, this.file),
      new Pick({ filter: records }),
      boundedRecords(this.limits, this.file),
      keepingProtoKeys(new StreamValues()),
      () => {},
    );
    let count = 0;
    const turn = eventLoopSlices();
    const columns = new DistinctColumns(this.limits, this.file);
    try {
      for await (const { value } of values as AsyncIterable<{ value: unknown }>) {
        count++;
        const row = rowOfObject(value, `record ${count}`, this.limits);
        columns.add(row);
        yield row;
        await turn();
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
  private readonly limits: ImportLimits;

  constructor(
    private readonly file: string,
    limits: Partial<ImportLimits> = {},
  ) {
    this.limits = importLimits(limits);
  }

  async *rows(): AsyncGenerator<SourceRow> {
    const lines = linesOf(decodeTextFile(this.file), this.limits, this.file);
    const turn = eventLoopSlices();
    const columns = new DistinctColumns(this.limits, this.file);
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
      const row = rowOfObject(value, `line ${number}`, this.limits);
      columns.add(row);
      yield row;
      await turn();
    }
    if (exportFile && !ended)
      throw new ImportFileError(
        `${this.file} has no "end" line: the export was cut short (or is still being written). Export it again.`,
      );
  }
}

/** The lines of a text, as they arrive (LF or CRLF ended; the last may have no end), each one record long at most. */
async function* linesOf(
  chunks: AsyncIterable<string>,
  limits: ImportLimits,
  file: string,
): AsyncGenerator<string> {
  let rest = '';
  let number = 0;
  for await (const chunk of chunks) {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    for (const part of parts) {
      if (part.length > limits.maxRowBytes) throw recordTooLarge(limits, file, `line ${number + 1}`);
      number++;
      yield part.endsWith('\r') ? part.slice(0, -1) : part;
    }
    if (rest.length > limits.maxRowBytes) throw recordTooLarge(limits, file, `line ${number + 1}`);
  }
  if (rest !== '') yield rest;
}

const recordTooLarge = (limits: ImportLimits, file: string, where: string) =>
  limitError(
    'maxRowBytes',
    limits.maxRowBytes,
    `${file}: ${where} holds more than ${sizeText(limits.maxRowBytes)}, the most one record may: a record cannot be that large. Split its values over several records.`,
  );

interface Token {
  name: string;
  value?: unknown;
}

/** The parser's tokens, each string and key of the file no longer than a cell may be. */
function boundedStrings(limits: ImportLimits, file: string): Transform {
  let length = 0;
  return new Transform({
    objectMode: true,
    transform(token: Token, _encoding, done) {
      if (token.name === 'startString' || token.name === 'startKey') length = 0;
      else if (token.name === 'stringChunk' || token.name === 'keyChunk') {
        length += (token.value as string).length;
        if (length > limits.maxCellBytes) return done(cellTooLarge(limits, `a value of ${file}`));
      }
      done(null, token);
    },
  });
}

/** A token that ends a value: at depth 0 (of the records picked), the end of a record. */
const VALUE_END = /^(endObject|endArray|stringValue|numberValue|nullValue|trueValue|falseValue)$/;

/** The tokens of the records picked, each record no larger than a row may be (its text, and one per token). */
function boundedRecords(limits: ImportLimits, file: string): Transform {
  let depth = 0;
  let size = 0;
  let count = 0;
  return new Transform({
    objectMode: true,
    transform(token: Token, _encoding, done) {
      if (token.name === 'startObject' || token.name === 'startArray') depth++;
      else if (token.name === 'endObject' || token.name === 'endArray') depth--;
      size += 1 + (token.name.endsWith('Chunk') ? (token.value as string).length : 0);
      if (size > limits.maxRowBytes) return done(recordTooLarge(limits, file, `record ${count + 1}`));
      if (depth === 0 && VALUE_END.test(token.name)) {
        count++;
        size = 0;
      }
      done(null, token);
    },
  });
}
