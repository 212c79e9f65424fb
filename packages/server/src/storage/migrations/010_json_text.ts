import { sql, type Kysely } from 'kysely';

/** The tables whose JSON columns become `json`, with their keys (for the rewrite in batches). */
const TABLES = [
  { name: 'records', key: ['id'], appendOnly: undefined },
  // History refuses updates (migration 003); the rewrite keeps each version's meaning and bytes.
  { name: 'record_versions', key: ['record_id', 'n'], appendOnly: 'record_versions_append_only' },
] as const;
/** Key columns that are not text. */
const KEY_TYPES: Record<string, string> = { n: 'integer' };
const COLUMNS = ['form', 'data', 'context'] as const;
const BATCH = 1000;

/**
 * PostgreSQL: records' JSON columns (and their versions') hold `json`, the text as written, instead
 * of `jsonb`. A listing then sends that text as it is, as on SQLite, where jsonb had PostgreSQL print
 * it and the driver parse it for the server to print it again (half of a listing's time). Keys now
 * keep the order a client wrote them in, as on SQLite. What was stored before is rewritten to the
 * bytes listings sent for it until now (the driver's `JSON.parse` of jsonb's text, `JSON.stringify`
 * of that), so clients' copies still match. SQLite already stores text: nothing to do.
 */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const table of TABLES) {
    const changes = COLUMNS.map((c) => sql`ALTER COLUMN ${sql.ref(c)} TYPE json USING ${sql.ref(c)}::json`);
    await sql`ALTER TABLE ${sql.table(table.name)} ${sql.join(changes)}`.execute(db);
    const guard = table.appendOnly && sql.ref(table.appendOnly);
    if (guard) await sql`ALTER TABLE ${sql.table(table.name)} DISABLE TRIGGER ${guard}`.execute(db);
    await rewriteAsListed(db, table.name, table.key);
    if (guard) await sql`ALTER TABLE ${sql.table(table.name)} ENABLE TRIGGER ${guard}`.execute(db);
  }
}

/** jsonb's text (`{"a": 1.0}`) as listings printed it (`{"a":1}`), keyset batch by batch. */
async function rewriteAsListed(db: Kysely<unknown>, table: string, key: readonly string[]): Promise<void> {
  const keyRow = sql.join(key.map((k) => sql.ref(k)));
  const asText = COLUMNS.map((c) => sql`${sql.ref(c)}::text AS ${sql.ref(c)}`);
  let after: unknown[] | undefined;
  for (;;) {
    const { rows } = await sql<Record<string, string>>`
      SELECT ${keyRow}, ${sql.join(asText)} FROM ${sql.table(table)}
      ${after ? sql`WHERE (${keyRow}) > (${sql.join(after.map((v) => sql`${v}`))})` : sql``}
      ORDER BY ${keyRow} LIMIT ${BATCH}`.execute(db);
    if (rows.length === 0) return;
    const columns = [...key, ...COLUMNS];
    const values = columns.map((column) =>
      rows.map((row) =>
        (COLUMNS as readonly string[]).includes(column)
          ? JSON.stringify(JSON.parse(row[column]!))
          : String(row[column]),
      ),
    );
    const unnested = sql.join(
      values.map((v, i) => sql`${v}::${sql.raw(KEY_TYPES[columns[i]!] ?? 'text')}[]`),
    );
    const names = sql.join(columns.map((c) => sql.ref(c)));
    const matches = sql.join(
      key.map((k) => sql`t.${sql.ref(k)} = v.${sql.ref(k)}`),
      sql` AND `,
    );
    const sets = sql.join(COLUMNS.map((c) => sql`${sql.ref(c)} = v.${sql.ref(c)}::json`));
    await sql`
      UPDATE ${sql.table(table)} AS t SET ${sets}
      FROM unnest(${unnested}) AS v(${names})
      WHERE ${matches}`.execute(db);
    const last = rows[rows.length - 1]!;
    after = key.map((k) => last[k]);
    if (rows.length < BATCH) return;
  }
}
