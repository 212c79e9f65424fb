import { sql } from 'kysely';
import type { SqlSyntax } from '../database.js';

export const sqliteSyntax: SqlSyntax = {
  // json_quote escapes exactly like JSON.stringify (`\"`, `\\`, `\b\f\n\r\t`, other control
  // characters as lowercase `\u00xx`, nothing else) and gives `null` for NULL.
  jsonString: (value) => sql<string>`json_quote(${value})`,
  // JSON columns are text, and a parameter needs no type.
  asText: (value) => sql<string>`${value}`,
  jsonTextOf: (column, key) => sql<string | null>`json_extract(${sql.ref(column)}, ${sql.lit(`$.${key}`)})`,
  // A unary `+`, SQLite's documented way. History reads filter on `at <= ?`, and the planner would
  // take an index on (tenant_id, at) for it: the tenant's whole history, sorted before the first row
  // and scanned again by every inner lookup (minutes at 200 000 records). Kept out of index choice,
  // `at` leaves the planner the indexes that follow the query (revision, record, node).
  unindexed: (column) => sql`+${sql.ref(column)}`,
  // One write transaction at a time: a transaction's reads cannot be overtaken by another's writes.
  forShare: (query) => query,
};
