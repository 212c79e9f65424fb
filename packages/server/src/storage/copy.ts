import { createHash } from 'node:crypto';
import type { Storage } from './database.js';
import type { Database } from './schema.js';
import { jsonValue } from './json.js';

/**
 * Tables in the order their foreign keys need, with their key and JSON columns. `derived`: the
 * target's triggers fill it while earlier tables are copied (the listing counters, from the record
 * versions and trace events); the source's rows replace what they wrote, so clients' ETags stay valid.
 */
const TABLES: { name: keyof Database; key: string[]; json: string[]; derived?: boolean }[] = [
  { name: 'tenants', key: ['id'], json: [] },
  { name: 'users', key: ['id'], json: [] },
  { name: 'api_keys', key: ['id'], json: [] },
  { name: 'kt_histories', key: ['id'], json: [] },
  { name: 'kt_revisions', key: ['id'], json: ['schema', 'data'] },
  { name: 'records', key: ['id'], json: ['form', 'data', 'context'] },
  { name: 'traces', key: ['id'], json: [] },
  { name: 'sessions', key: ['id'], json: [] },
  { name: 'audit_events', key: ['id'], json: [] },
  { name: 'record_versions', key: ['record_id', 'n'], json: ['form', 'data', 'context'] },
  { name: 'trace_events', key: ['id'], json: [] },
  { name: 'kt_revision_versions', key: ['revision_id', 'n'], json: ['schema', 'data'] },
  { name: 'baselines', key: ['id'], json: ['revision_ids', 'required_signers'] },
  { name: 'baseline_events', key: ['baseline_id', 'n'], json: [] },
  { name: 'idempotency_keys', key: ['tenant_id', 'key'], json: [] },
  { name: 'record_numbers', key: ['tenant_id', 'history_id', 'prefix'], json: [] },
  { name: 'trace_roles', key: ['tenant_id', 'id'], json: [] },
  { name: 'trace_model_versions', key: ['tenant_id', 'version'], json: ['roles', 'changes'] },
  { name: 'record_outlines', key: ['tenant_id', 'topic_history_id'], json: [] },
  { name: 'record_outline_entries', key: ['tenant_id', 'topic_history_id', 'position'], json: [] },
  { name: 'traceability_views', key: ['tenant_id', 'name'], json: [] },
  { name: 'record_listing_tags', key: ['tenant_id', 'kt_revision_id'], json: [], derived: true },
  { name: 'trace_listing_tags', key: ['tenant_id'], json: [], derived: true },
  {
    name: 'record_listing_changes',
    key: ['tenant_id', 'kt_revision_id', 'seq', 'record_id'],
    json: [],
    derived: true,
  },
  { name: 'trace_listing_changes', key: ['tenant_id', 'seq', 'trace_id'], json: [], derived: true },
];

const BATCH = 500;

export interface TableReport {
  table: string;
  sourceRows: number;
  targetRows: number;
  sourceChecksum: string;
  targetChecksum: string;
}

/** JSON with sorted keys: jsonb reorders keys, so text alone cannot be compared across engines. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function canonicalRow(row: Record<string, unknown>, json: string[]): string {
  const normalized: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    normalized[column] = json.includes(column)
      ? jsonValue(value)
      : typeof value === 'bigint'
        ? Number(value)
        : value;
  }
  return canonical(normalized);
}

/** Every row of a table, ordered by its key columns. */
function rowsInKeyOrder(storage: Storage, table: (typeof TABLES)[number]) {
  let query = storage.db.selectFrom(table.name).selectAll();
  for (const column of table.key) query = query.orderBy(column as never);
  return query.compile();
}

/** Row count and SHA-256 of a table's canonical rows in key order, read as a stream. */
async function summarize(storage: Storage, table: (typeof TABLES)[number]) {
  const hash = createHash('sha256');
  let rows = 0;
  for await (const row of storage.stream<Record<string, unknown>>(rowsInKeyOrder(storage, table))) {
    hash.update(canonicalRow(row, table.json)).update('\n');
    rows++;
  }
  return { rows, checksum: hash.digest('hex') };
}

/**
 * Copies every table from one storage to another (e.g. an embedded SQLite installation to
 * PostgreSQL), then compares row counts and checksums table by table. The target must be empty; a
 * failed copy leaves the target's tables as they were (each table is copied in one transaction).
 */
export async function copyDatabase(
  source: Storage,
  target: Storage,
  onProgress: (table: string, rows: number) => void = () => undefined,
): Promise<TableReport[]> {
  const existing = await target.db.selectFrom('tenants').select('id').limit(1).execute();
  if (existing.length > 0) {
    throw new Error(
      `The target database ${target.location} already holds data; migrate into an empty database.`,
    );
  }
  for (const table of TABLES) {
    await target.db.transaction().execute(async (trx) => {
      if (table.derived) await trx.deleteFrom(table.name).execute();
      let batch: Record<string, unknown>[] = [];
      let copied = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        await trx
          .insertInto(table.name)
          .values(batch as never)
          .execute();
        copied += batch.length;
        onProgress(table.name, copied);
        batch = [];
      };
      for await (const row of source.stream<Record<string, unknown>>(rowsInKeyOrder(source, table))) {
        const values: Record<string, unknown> = { ...row };
        for (const column of table.json) values[column] = JSON.stringify(jsonValue(row[column]));
        batch.push(values);
        if (batch.length >= BATCH) await flush();
      }
      await flush();
    });
  }
  const reports: TableReport[] = [];
  for (const table of TABLES) {
    const [from, to] = [await summarize(source, table), await summarize(target, table)];
    reports.push({
      table: table.name,
      sourceRows: from.rows,
      targetRows: to.rows,
      sourceChecksum: from.checksum,
      targetChecksum: to.checksum,
    });
  }
  return reports;
}
