import { disambiguateName } from '../../mapping/names.js';
import type { ExportedField, ExportedRecord } from '../model.js';

/**
 * The record's own facts, first in every row, under the names a requirements tool expects: the
 * `_id` (what a round trip finds the record by), then its readable id (`REQ_001`) beside it, and
 * last its identity in the source it was imported from (empty without one), which an import reads
 * back as the record's source id.
 */
export const RECORD_COLUMNS = [
  '_id',
  'readable_id',
  'name',
  'version',
  'topic_revision_id',
  'source_id',
] as const;

export function recordFacts(record: ExportedRecord): string[] {
  return [
    record.id,
    record.readableId,
    record.name,
    record.version,
    record.topicRevisionId,
    record.sourceId ?? '',
  ];
}

/** A record's value for a semantic name; own properties only, so "constructor" is never inherited. */
export function valueOf(record: ExportedRecord, name: string): unknown {
  return Object.hasOwn(record.values, name) ? record.values[name] : undefined;
}

/**
 * The semantic columns of a table, one per distinct name in order of first appearance. A name
 * that repeats a fixed column (a field called "name" next to the record's own name) gets a header
 * disambiguated with its key, "name (key)", as the mapping does for colliding names.
 */
export class SemanticColumns {
  /** The field behind each column (the first one met with that name). */
  readonly fields: ExportedField[] = [];
  readonly names: string[] = [];
  readonly headers: string[] = [];
  private readonly known = new Set<string>();
  private readonly taken: Set<string>;

  constructor(fixed: readonly string[]) {
    this.taken = new Set(fixed);
  }

  add(fields: readonly ExportedField[]): this {
    for (const field of fields) {
      if (this.known.has(field.name)) continue;
      const header = this.taken.has(field.name)
        ? disambiguateName(field.name, field.key, this.taken)
        : field.name;
      this.known.add(field.name);
      this.taken.add(header);
      this.fields.push(field);
      this.names.push(field.name);
      this.headers.push(header);
    }
    return this;
  }

  values(record: ExportedRecord): unknown[] {
    return this.names.map((name) => valueOf(record, name));
  }
}
