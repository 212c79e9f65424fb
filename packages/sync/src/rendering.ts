import { Writable } from 'node:stream';
import type { ExportedRecord, ExportPart } from '@rxs/exchange/export';
import { plainHead, plainRow, tableColumns } from '@rxs/exchange/export';
import { csvText } from '@rxs/exchange/export';
import { JsonLinesWriter, recordLine } from '@rxs/exchange/export';
import type { RowSyntax } from './output-rows.js';

/**
 * The outputs whose rows a sync finds again and copies (splice.ts), and the row index of
 * (row-indexing.ts): one row per record, written by the writers' own functions, so that the
 * bytes a sync writes or measures are the bytes a full export writes.
 */
export type SpliceFormat = 'csv' | 'jsonl';

/** How a format writes records and the parts around them, and reads them back from its output. */
export interface Rendering {
  syntax: RowSyntax;
  /** The text of a part other than a record ('' when the format writes nothing for it). */
  part(part: ExportPart): string;
  /**
   * How to know the previous output's row of a part (rendered as `text`) when there is one; the
   * row is not copied, the part is written anew.
   */
  expects(part: ExportPart, text: string): ((row: Buffer) => boolean) | undefined;
  row(record: ExportedRecord): string;
  /** The id of the record whose row `row` is; undefined when it is no record's row. */
  recordIdOf(row: Buffer): string | undefined;
  /** The readable id in record `id`'s row, as written (compared with `writtenId`). */
  readableIdIn(row: Buffer, id: string): string | undefined;
  writtenId(readableId: string): string;
}

/** The rendering of a format; a new one per export (a CSV one follows the topic's columns). */
export function renderingOf(format: SpliceFormat): Rendering {
  return format === 'csv' ? csvRendering() : jsonLinesRendering();
}

/** CSV of one topic without traces: the header row at the topic, then one row per record. */
function csvRendering(): Rendering {
  let columns = tableColumns();
  return {
    syntax: 'csv',
    part(part) {
      if (part.kind !== 'topic') return '';
      columns = tableColumns().add(part.topic.fields);
      return plainHead(columns);
    },
    // The header row must be the one written before: the same columns in the same order.
    expects: (part, text) => (part.kind === 'topic' ? (row) => row.equals(Buffer.from(text)) : undefined),
    row: (record) => plainRow(columns, record),
    // The first cell, as written (a service id needs neither quotes nor an apostrophe).
    recordIdOf(row) {
      const comma = row.indexOf(COMMA);
      return comma > 0 ? row.toString('utf8', 0, comma) : undefined;
    },
    readableIdIn(row, id) {
      const from = csvText(id).length + 1;
      let end = from;
      if (row[from] === QUOTE) {
        for (end = from + 1; end < row.length; end++)
          if (row[end] === QUOTE) {
            if (row[end + 1] !== QUOTE) break;
            end++;
          }
        end++;
      } else {
        end = row.indexOf(COMMA, from);
      }
      return end < from || end > row.length ? undefined : row.toString('utf8', from, end);
    },
    writtenId: (readableId) => csvText(readableId),
  };
}

/** JSON lines: one line per part, each record's as `recordLine` writes it. */
function jsonLinesRendering(): Rendering {
  let text = '';
  const writer = new JsonLinesWriter(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8');
        done();
      },
    }),
  );
  return {
    syntax: 'lines',
    part(part) {
      text = '';
      // The writer writes synchronously into `text` (its stream never applies backpressure here).
      void writer.write(part);
      return text;
    },
    expects: (part) => (row) => startsWith(row, 0, `{"kind":${JSON.stringify(part.kind)},`),
    row: recordLine,
    recordIdOf(row) {
      const from = RECORD_LINE_START.length;
      if (!startsWith(row, 0, RECORD_LINE_START) || row[from] !== QUOTE) return undefined;
      const end = jsonStringEnd(row, from);
      return end === undefined ? undefined : (JSON.parse(row.toString('utf8', from, end)) as string);
    },
    readableIdIn(row, id) {
      const from = RECORD_LINE_START.length + JSON.stringify(id).length + READABLE_ID_KEY.length + 1;
      if (!startsWith(row, from - READABLE_ID_KEY.length, READABLE_ID_KEY) || row[from] !== QUOTE)
        return undefined;
      const end = jsonStringEnd(row, from);
      return end === undefined ? undefined : row.toString('utf8', from, end);
    },
    writtenId: (readableId) => JSON.stringify(readableId),
  };
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const RECORD_LINE_START = '{"kind":"record","id":';
const READABLE_ID_KEY = '"readableId":';

/** Where the JSON string starting (with its quote) at `from` ends, after its closing quote. */
function jsonStringEnd(bytes: Buffer, from: number): number | undefined {
  let end = from + 1;
  while (end < bytes.length && bytes[end] !== QUOTE) end += bytes[end] === BACKSLASH ? 2 : 1;
  return end < bytes.length ? end + 1 : undefined;
}

/** Whether `bytes` hold the UTF-8 of `text` at `from`. */
function startsWith(bytes: Buffer, from: number, text: string): boolean {
  if (bytes.length - from < text.length) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80)
      return bytes.subarray(from).subarray(0, Buffer.byteLength(text)).equals(Buffer.from(text));
    if (bytes[from + i] !== code) return false;
  }
  return true;
}
