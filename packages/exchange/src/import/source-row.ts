/**
 * What every import reader gives: rows, each with the record's own facts (the export's fixed
 * columns) and its values by column name. Text formats (CSV, text cells) give text, converted to
 * the field's type later; typed formats (JSON, typed XLSX and ReqIF cells) give values as they are.
 */

/** A value of a row: text to convert to the field's type, or a value already typed. */
export type Cell = { text: string } | { value: unknown };

/** The export's fixed columns of a record; absent when the file has no such column. */
export interface RecordFacts {
  /** `_id`: the record to update. */
  id?: string;
  /** `readable_id`: the record's human id (`REQ_001`). */
  readableId?: string;
  name?: string;
  /** `version`: the record's version when the file was written; a newer record is not overwritten. */
  version?: string;
  /** `topic_revision_id`: the topic revision the record was exported from. */
  topicRevisionId?: string;
  /**
   * `source_id`: the row's identity in the file's source (a ReqIF SPEC-OBJECT's IDENTIFIER), kept
   * as the record's `context.global_element_id`, so that a newer file of the source finds it.
   */
  sourceId?: string;
  /**
   * ReqIF: the `R-<_id>` IDENTIFIER an rxs export named a record without a source id by. A copy
   * made with `--new-records` keeps it as its source id, so that the file's relations and
   * hierarchy, which name their objects by it, find the copy.
   */
  exportedAs?: string;
}

export interface SourceRow {
  /** Where the row is, for people: "row 5", "line 12", "record 3", "spec object R-...". */
  where: string;
  facts: RecordFacts;
  /** Values by the file's column name, in file order; a form key when `byFormKey`. */
  values: Map<string, Cell>;
  /** The row's values are named by form key (a service record's `data`), not by semantic name. */
  byFormKey?: boolean;
  /** What is wrong with the row itself (a formula, a cell that cannot be read); it is rejected. */
  problems: string[];
  /**
   * What the row holds that the import leaves out (an embedded object's file): the row is imported
   * without it, and the report's notes say what to bring over by hand.
   */
  warnings?: string[];
}

/** A file of rows. `rows()` reads it from the start each time. */
export interface RowSource {
  /** The format, as `rxs export --format` names it. */
  readonly format: ImportFormat;
  rows(): AsyncIterable<SourceRow>;
  /**
   * rows() in chunks, each taken whole before the next: a reader that has its rows in chunks (CSV)
   * saves its consumer an async step a row.
   */
  rowChunks?(): AsyncIterable<Iterable<SourceRow>>;
  /**
   * The rows again, as the last rows() or rowChunks() gave them, where reading the file again costs
   * less than the importer's copy of its rows on disk (a CSV file; the importer copies the rows of
   * other formats). In chunks, each taken whole before the next. A file that changed since that read
   * began is refused (ImportFileError).
   */
  rowsAgain?(): AsyncIterable<Iterable<SourceRow>>;
  /** Loads what reading the file needs; before anything else but forTopic is asked of the reader. */
  prepare?(): Promise<void>;
  /** Columns of the file the reader leaves out on purpose (the CSV `links`), with why. */
  readonly notes: string[];
  /** Told the topic imported into before reading: an export names its sheet or ReqIF type after it. */
  forTopic?(topic: { name: string; reqifTypeName: string }): void;
  /**
   * The columns (ReqIF: attributes) the reader takes as facts instead of values, by name: what a
   * key column may name besides the values (default FIXED_COLUMNS).
   */
  readonly factColumns?: ReadonlyMap<string, FactColumn>;
}

export type ImportFormat = 'csv' | 'xlsx' | 'json' | 'jsonl' | 'reqif';

/** What a fixed column holds: one of the record's facts, or 'skip' (exported, not imported). */
export type FactColumn = keyof RecordFacts | 'skip';

/**
 * The export's fixed columns by header, shared by CSV and XLSX (and `links`, not imported). A Map,
 * not an object: a column named "constructor" or "__proto__" is a field's, not an inherited key.
 */
export const FIXED_COLUMNS: ReadonlyMap<string, FactColumn> = new Map([
  ['_id', 'id'],
  ['readable_id', 'readableId'],
  ['name', 'name'],
  ['topic_revision_id', 'topicRevisionId'],
  ['version', 'version'],
  ['source_id', 'sourceId'],
  ['topic', 'skip'],
  ['links', 'skip'],
]);

/** Headers of an export's link columns named by the trace model's roles ("links: verified by"). */
export const ROLE_LINKS_PREFIX = 'links: ';

/** What a column of a CSV or XLSX file is: a fixed column's fact, 'skip', or undefined for a field's value. */
export function fixedColumnOf(column: string): FactColumn | undefined {
  return FIXED_COLUMNS.get(column) ?? (column.startsWith(ROLE_LINKS_PREFIX) ? 'skip' : undefined);
}
