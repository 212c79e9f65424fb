import type { Writable } from 'node:stream';
import type { ExportFormat, ExportPart, ExportWriter, RowObserver } from '../model.js';
import { CsvWriter } from './csv.js';
import { JsonWriter } from './json.js';
import { JsonLinesWriter } from './jsonl.js';
import { NeedsWriter, type NeedsWriterOptions } from './needs.js';
import { ReqifWriter, type ReqifWriterOptions } from './reqif.js';
import { ReqifzWriter } from './reqifz.js';
import { XlsxWriter } from './xlsx.js';

export interface WriterOptions {
  /** Folder for the temporary files of formats written on close (csv, xlsx, reqif, reqifz, needs). */
  tempDir?: string;
  /** The output file's name, for a format that names what it holds after it (reqifz: `<name>.reqif`). */
  fileName?: string;
  /**
   * Told each record's row as it is written, in order, with its length in bytes, by the formats
   * that write one row per record (csv of one topic without traces, jsonl): a sync's row index.
   */
  onRow?: RowObserver;
  reqif?: Omit<ReqifWriterOptions, 'tempDir'>;
  needs?: Omit<NeedsWriterOptions, 'tempDir'>;
}

/** The writer of a format, writing to `out`; its `close` ends `out`. */
export function createWriter(format: ExportFormat, out: Writable, options: WriterOptions = {}): ExportWriter {
  const { tempDir, onRow } = options;
  switch (format) {
    case 'json':
      return new JsonWriter(out);
    case 'jsonl':
      return new JsonLinesWriter(out, { onRow });
    case 'csv':
      return new CsvWriter(out, { tempDir, onRow });
    case 'xlsx':
      return new XlsxWriter(out, { tempDir });
    case 'reqif':
      return new ReqifWriter(out, { ...options.reqif, tempDir });
    case 'reqifz':
      return new ReqifzWriter(out, { ...options.reqif, tempDir, fileName: options.fileName });
    case 'needs':
      return new NeedsWriter(out, { ...options.needs, tempDir });
    default:
      throw new Error(`Unknown export format "${String(format satisfies never)}".`);
  }
}

/** Feeds the parts to a writer in order and closes it; on failure closes it too, then rethrows. */
export async function writeExport(
  writer: ExportWriter,
  parts: Iterable<ExportPart> | AsyncIterable<ExportPart>,
): Promise<void> {
  try {
    for await (const part of parts) await writer.write(part);
  } catch (error) {
    await writer.close().catch(() => undefined);
    throw error;
  }
  await writer.close();
}

export { CsvWriter, LINKS_COLUMN, TOPIC_COLUMN, type CsvWriterOptions } from './csv.js';
export { JsonWriter, JSON_FORMAT_NAME, JSON_FORMAT_VERSION } from './json.js';
export { JsonLinesWriter } from './jsonl.js';
export {
  NeedsWriter,
  NeedIdCollisionError,
  needId,
  optionName,
  sphinxDocnameMistake,
  type NeedsWriterOptions,
} from './needs.js';
export { ReqifWriter, REQIF_NAMESPACE, specObjectId, type ReqifWriterOptions } from './reqif.js';
export { ReqifzWriter, reqifEntryName, type ReqifzWriterOptions } from './reqifz.js';
export { XlsxWriter, SheetNames, SheetTooWideError, type XlsxWriterOptions } from './xlsx.js';
export { RECORD_COLUMNS } from './columns.js';
export { cellText } from './cells.js';
