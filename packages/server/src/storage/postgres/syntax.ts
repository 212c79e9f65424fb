import { sql } from 'kysely';
import type { SqlSyntax } from '../database.js';

export const postgresSyntax: SqlSyntax = {
  // to_json of text escapes exactly like JSON.stringify; to_json(NULL) is NULL, which concat()
  // would leave out: JSON's null instead.
  jsonString: (value) => sql<string>`coalesce(to_json(${value})::text, 'null')`,
  // `json` columns hold the text as written; a parameter inside concat() has no type it could infer.
  asText: (value) => sql<string>`${value}::text`,
  jsonTextOf: (column, key) => sql<string | null>`(${sql.ref(column)} ->> ${sql.lit(key)})`,
  // PostgreSQL plans by cost: a plain column.
  unindexed: (column) => sql.ref(column),
  forShare: (query) => query.forShare() as typeof query,
};
