import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { cellText } from './cells.js';
import { RECORD_COLUMNS, recordFacts, SemanticColumns } from './columns.js';
import { writeChunk } from './output.js';
import { SpooledWriter } from './spooled-writer.js';
import { linksBySource, RECORD_NODE_TYPE, type Link } from './traces.js';

export interface CsvWriterOptions {
  /** Where records wait until the columns are known (default: the system temp folder). */
  tempDir?: string;
}

/** Leading column naming the topic, present when the export holds more than one topic. */
export const TOPIC_COLUMN = 'topic';
/** Trailing column with each record's outgoing traces, present when traces were exported. */
export const LINKS_COLUMN = 'links';

/**
 * One table, one row per record: `_id`, `name`, `version`, `topic_revision_id`, then one column per
 * semantic name, then `links` when traces were exported. Several topics share the table: a leading
 * `topic` column tells them apart and the columns are the union of their names.
 *
 * The header can only be written once every topic's columns (including keys met only in record
 * data) and every trace are known, so records wait in a temporary file and the whole table is
 * written on close: flat memory, disk space about the size of the output.
 *
 * Cells: checklists joined with "; ", objects and dynamiclists as compact JSON. Cells starting with
 * =, +, -, @, tab or carriage return get a leading apostrophe (except numbers), so a spreadsheet
 * never runs them as formulas. UTF-8 with a byte order mark and CRLF line ends, as Excel expects.
 */
export class CsvWriter extends SpooledWriter {
  readonly extension = 'csv';

  constructor(out: Writable, options: CsvWriterOptions = {}) {
    super(out, options.tempDir);
  }

  protected async produce(): Promise<void> {
    const { topics } = this.tracker;
    const withTopic = topics.length > 1;
    const withLinks = this.tracker.withTraces;
    const columns = new SemanticColumns([TOPIC_COLUMN, ...RECORD_COLUMNS, LINKS_COLUMN]);
    for (const { fields } of topics) columns.add(fields);
    const outgoing = linksBySource(this.tracker.traces);

    const header = [
      ...(withTopic ? [TOPIC_COLUMN] : []),
      ...RECORD_COLUMNS,
      ...columns.headers,
      ...(withLinks ? [LINKS_COLUMN] : []),
    ];
    await writeChunk(this.out, `\uFEFF${csvRow(header)}`);
    for await (const { topic, record } of this.spool.replay()) {
      const row: unknown[] = [
        ...(withTopic ? [topics[topic]?.topic.name ?? ''] : []),
        ...recordFacts(record),
        ...columns.values(record).map(csvCell),
        ...(withLinks ? [linksText(outgoing.get(record.id) ?? [])] : []),
      ];
      await writeChunk(this.out, csvRow(row));
    }
  }
}

function csvRow(cells: unknown[]): string {
  return stringify([cells], { record_delimiter: 'windows', escape_formulas: true });
}

/** Numbers stay numbers so that a negative one is not mistaken for a formula. */
function csvCell(value: unknown): string | number {
  return typeof value === 'number' ? value : cellText(value);
}

/** "relation:recordId" for a record target, "relation:Type/id" for any other node. */
function linksText(links: readonly Link[]): string {
  return links
    .map(({ trace: { target }, relationType }) =>
      target.type === RECORD_NODE_TYPE
        ? `${relationType}:${target.id}`
        : `${relationType}:${target.type}/${target.id}`,
    )
    .join('; ');
}
