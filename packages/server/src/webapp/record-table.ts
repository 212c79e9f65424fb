import type { FormSchema, ServiceRecord } from '@rxs/contract';
import {
  buildFieldMap,
  cellText,
  DEFAULT_SOURCES,
  defaultPresentation,
  extendFieldMap,
  isMadeUpId,
  LEADING_ID_PATTERN,
  readableIdOf,
  RecordMapper,
  type ExportedField,
  type IdentifierRule,
} from '@rxs/exchange/export';
import type { FieldColumn, RecordRow, RecordTable } from '@rxs/web-api';
import { clip, validateRecordData } from '@rxs/contract/validation';

/**
 * Built-in sort keys; a field column is sorted by `field:<semantic name>`. `readable-id` is the
 * order people number records in (REQ-9 before REQ-10), by the readable id, else the name.
 */
export type SortKey = 'id' | 'readable-id' | 'name' | 'created' | 'updated' | `field:${string}`;

export interface TableQuery {
  offset: number;
  limit: number;
  sort: SortKey;
  dir: 'asc' | 'desc';
  /** Matches the name, the id or any value (case-insensitive part). */
  search?: string;
  /** Per column: a case-insensitive part of the value, by semantic name. */
  filters: Record<string, string>;
}

export function toColumns(fields: readonly ExportedField[]): FieldColumn[] {
  return fields.map(({ key, name, source, type, label }) => ({ key, name, source, type, label }));
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** The default identifier rule of an export; its prefix never shows, as made-up ids are not shown. */
const READABLE_ID_RULE: IdentifierRule = {
  sources: DEFAULT_SOURCES,
  pattern: LEADING_ID_PATTERN,
  prefix: 'ID',
};

/**
 * How the web app tells records apart: the readable id an export derives by default (`REQ_001` from
 * a title "REQ_001 — …"), null for a record without one of its own, and the title field's text.
 */
export class RecordIdentity {
  readonly titleField: string | undefined;

  constructor(fields: readonly ExportedField[]) {
    this.titleField = defaultPresentation('', fields).titleField;
  }

  /** `values` are by semantic name, as the exporter maps them. */
  readableId(record: { id: string; name: string; values: Record<string, unknown> }): string | null {
    const id = readableIdOf(record, READABLE_ID_RULE, { titleField: this.titleField });
    return isMadeUpId(id, record.id) ? null : id;
  }

  /** The title field's text, cut as a table cell is; null when empty or the form has no title field. */
  title(values: Record<string, unknown>): string | null {
    const text = this.titleField === undefined ? '' : cellText(values[this.titleField]);
    return text ? clip(text, TABLE_CELL_CHARS + 1) : null;
  }
}

/** A revision's records as display rows, with the columns their mapping produced. */
export interface MappedRows {
  columns: FieldColumn[];
  rows: RecordRow[];
  /** Semantic names of the columns some record has a value in (the others start hidden). */
  filled: ReadonlySet<string>;
  /** About the memory the rows take (see `rowBytes`). */
  bytes: number;
}

/**
 * Characters of a value the table shows (and searches, filters and sorts by); a longer one is cut
 * and ends with "…". The record's own page shows it whole. A table of records of megabytes each
 * then holds a few hundred characters per cell, not the records.
 */
export const TABLE_CELL_CHARS = 300;

/**
 * About the bytes a row takes in memory: two per character (V8 keeps strings in one or two bytes a
 * character) and a fixed cost per object and value. Column names are shared by all rows, so they
 * are not counted.
 */
export function rowBytes(row: RecordRow): number {
  let bytes =
    160 + 2 * (row.id.length + row.name.length + (row.readableId?.length ?? 0) + row.version.length + 48);
  for (const text of Object.values(row.values)) bytes += 40 + 2 * text.length;
  return bytes;
}

/**
 * Maps a revision's records to rows with a column per semantic name, exactly as the exporter maps
 * them (sdk `buildFieldMap` and `RecordMapper`; option values by their labels). The records stream
 * in; only the display text of each row is kept, each value cut to `cellChars`, so 10 000 records,
 * or records of megabytes, stay small.
 */
export async function mapRecordRows(
  schema: FormSchema,
  records: AsyncIterable<ServiceRecord>,
  cellChars = TABLE_CELL_CHARS,
): Promise<MappedRows> {
  let map = buildFieldMap(schema);
  const identity = new RecordIdentity(map.fields);
  // One mapper for the whole stream: it builds its lookups once and learns the data-only keys.
  const mapper = new RecordMapper(map, { labels: true });
  const rows: RecordRow[] = [];
  const filled = new Set<string>();
  let bytes = 0;
  for await (const record of records) {
    const mapped = mapper.map(record);
    if (mapped.newFields.length > 0) map = extendFieldMap(map, mapped.newFields);
    // Column names come from record data: no prototype, so `constructor` or `__proto__` are plain keys.
    const values: Record<string, string> = Object.create(null);
    for (const [name, value] of Object.entries(mapped.record.values)) {
      values[name] = clip(cellText(value), cellChars + 1);
      if (values[name] !== '') filled.add(name);
    }
    const row: RecordRow = {
      id: record._id,
      name: record.name,
      readableId: identity.readableId({ id: record._id, name: record.name, values: mapped.record.values }),
      version: record.version,
      createdAt: record.audit_info.timestamp_created,
      updatedAt: record.audit_info.timestamp_last_updated ?? null,
      values,
      // Checked against the revision's form as a save would check it (a re-approval may have added a rule).
      problems: validateRecordData(schema, record.data ?? {}).length,
    };
    rows.push(row);
    bytes += rowBytes(row);
  }
  return { columns: toColumns(map.fields), rows, filled, bytes };
}

/** One page of the rows after search, column filters and sorting; `mapped.rows` stays untouched. */
export function queryRecordTable(revisionId: string, mapped: MappedRows, query: TableQuery): RecordTable {
  const search = query.search?.trim().toLowerCase() ?? '';
  const filters = Object.entries(query.filters)
    .map(([name, text]) => [name, text.trim().toLowerCase()] as const)
    .filter(([, text]) => text !== '');
  const rows = mapped.rows.filter(
    (row) =>
      (!search || rowContains(row, search)) &&
      filters.every(([name, text]) => valueOf(row, name).toLowerCase().includes(text)),
  );
  sortRows(rows, query.sort, query.dir);
  return {
    revisionId,
    columns: mapped.columns,
    emptyColumns: mapped.columns.filter((column) => !mapped.filled.has(column.name)).map((c) => c.name),
    total: rows.length,
    unfilteredTotal: mapped.rows.length,
    offset: query.offset,
    limit: query.limit,
    rows: rows.slice(query.offset, query.offset + query.limit),
  };
}

/** Memory the table cache may hold by default, over all its revisions (RXS_WEB_TABLE_CACHE_MB). */
export const DEFAULT_TABLE_CACHE_MB = 64;

/**
 * Mapped rows of recently viewed revisions, so paging, sorting and filtering a large topic do not
 * map every record again. An entry is used only while the revision's fingerprint (count, newest id,
 * newest change) is the same, so any create, edit, delete or re-approval makes it stale. The cache
 * holds at most `maxRows` rows and `maxBytes` bytes (as `rowBytes` counts them), the least recently
 * used entries going first; a table larger than either bound is not kept.
 */
export class MappedRowsCache {
  private readonly entries = new Map<string, { fingerprint: string; mapped: MappedRows }>();

  constructor(
    private readonly maxRows = 200_000,
    readonly maxBytes = DEFAULT_TABLE_CACHE_MB * 1024 * 1024,
  ) {}

  /** The bound in bytes from RXS_WEB_TABLE_CACHE_MB (a number ≥ 0; 0 keeps nothing), else the default. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): MappedRowsCache {
    const text = env.RXS_WEB_TABLE_CACHE_MB?.trim();
    if (text === undefined || text === '') return new MappedRowsCache();
    const mb = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text) || !Number.isFinite(mb)) {
      throw new Error(
        `RXS_WEB_TABLE_CACHE_MB must be a number of megabytes ≥ 0 (the web records table's cache), got "${text}".`,
      );
    }
    return new MappedRowsCache(undefined, Math.floor(mb * 1024 * 1024));
  }

  /** Bytes the cached entries take, as `rowBytes` counts them. */
  get bytes(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.mapped.bytes;
    return total;
  }

  get(key: string, fingerprint: string): MappedRows | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.fingerprint !== fingerprint) return undefined;
    this.entries.delete(key); // most recently used last
    this.entries.set(key, entry);
    return entry.mapped;
  }

  set(key: string, fingerprint: string, mapped: MappedRows): void {
    this.entries.delete(key);
    if (mapped.rows.length > this.maxRows || mapped.bytes > this.maxBytes) return;
    this.entries.set(key, { fingerprint, mapped });
    let rows = 0;
    let bytes = 0;
    for (const entry of this.entries.values()) {
      rows += entry.mapped.rows.length;
      bytes += entry.mapped.bytes;
    }
    for (const [oldest, entry] of this.entries) {
      if (rows <= this.maxRows && bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      rows -= entry.mapped.rows.length;
      bytes -= entry.mapped.bytes;
    }
  }
}

/** A row's text in a column named by the user: own values only, never `Object.prototype`'s. */
function valueOf(row: RecordRow, name: string): string {
  const value = Object.hasOwn(row.values, name) ? row.values[name] : undefined;
  return typeof value === 'string' ? value : '';
}

function rowContains(row: RecordRow, text: string): boolean {
  if (row.name.toLowerCase().includes(text) || row.id === text) return true;
  return Object.values(row.values).some((value) => value.toLowerCase().includes(text));
}

function sortValue(row: RecordRow, sort: SortKey): string {
  switch (sort) {
    case 'id':
      return row.id;
    case 'readable-id':
      return row.readableId ?? row.name;
    case 'name':
      return row.name;
    case 'created':
      return row.createdAt;
    case 'updated':
      return row.updatedAt ?? row.createdAt;
    default:
      return valueOf(row, sort.slice('field:'.length));
  }
}

/** Stable sort; empty values last in either direction, ties kept in `_id` order. */
export function sortRows(rows: RecordRow[], sort: SortKey, dir: 'asc' | 'desc'): void {
  if (sort === 'id' && dir === 'asc') return; // the order the records arrive in
  const sign = dir === 'asc' ? 1 : -1;
  const keyed = rows.map((row, index) => ({ row, index, value: sortValue(row, sort) }));
  keyed.sort((a, b) => {
    if (a.value === '' || b.value === '') {
      if (a.value !== b.value) return a.value === '' ? 1 : -1;
      return a.index - b.index;
    }
    return sign * collator.compare(a.value, b.value) || a.index - b.index;
  });
  keyed.forEach((item, index) => (rows[index] = item.row));
}
