import type { Writable } from 'node:stream';
import type { ExportedRecord, ExportPart, ExportWriter, RowObserver } from '../model.js';
import { JSON_FORMAT_NAME, JSON_FORMAT_VERSION } from './json.js';
import { endOutput, writeChunk } from './output.js';
import { ExportTracker } from './tracker.js';

/**
 * One JSON object per line, each with a `kind`:
 *   header    -> format, formatVersion, exportedAt, servers, revisionIds, withTraces
 *   topic     -> the topic (fields as known before its records)
 *   record    -> the record (carries topicRevisionId)
 *   topic-end -> revisionId, recordCount, fields (complete, including keys met only in data)
 *   link-type -> one named link type of a pair of topics (from a mapping file), before the traces
 *   trace     -> one trace
 *   end       -> warnings
 * Every line stands alone, so a consumer can process the export as it streams.
 */
export class JsonLinesWriter implements ExportWriter {
  readonly extension = 'jsonl';
  private readonly tracker = new ExportTracker();

  constructor(
    private readonly out: Writable,
    private readonly options: { onRow?: RowObserver } = {},
  ) {}

  async write(part: ExportPart): Promise<void> {
    this.tracker.observe(part);
    switch (part.kind) {
      case 'header':
        return this.line({
          kind: 'header',
          format: JSON_FORMAT_NAME,
          formatVersion: JSON_FORMAT_VERSION,
          ...part.header,
        });
      case 'topic':
        return this.line({ kind: 'topic', ...part.topic });
      case 'record': {
        const line = recordLine(part.record);
        this.options.onRow?.(part.record, Buffer.byteLength(line));
        return writeChunk(this.out, line);
      }
      case 'topic-end': {
        const { fields } = this.tracker.topics.at(-1)!;
        return this.line({
          kind: 'topic-end',
          revisionId: part.topic.revisionId,
          recordCount: part.recordCount,
          fields,
        });
      }
      case 'traces':
        for (const linkType of part.linkTypes) await this.line({ kind: 'link-type', ...linkType });
        for (const trace of part.traces) await this.line({ kind: 'trace', ...trace });
        return;
      case 'end':
        return this.line({ kind: 'end', warnings: part.warnings });
    }
  }

  async close(): Promise<void> {
    await endOutput(this.out);
  }

  private line(value: object): Promise<void> {
    return writeChunk(this.out, `${JSON.stringify(value)}\n`);
  }
}

/** A record's line, line break included. */
export function recordLine(record: ExportedRecord): string {
  return `${JSON.stringify({ kind: 'record', ...record })}\n`;
}
