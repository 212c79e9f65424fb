import { sql, type Kysely } from 'kysely';

/**
 * Suspect traces: a trace keeps the version of each record end as it was when the trace was made or
 * last reviewed (`POST /traces/{id}/review`). A trace whose record end is now at another version is
 * suspect (`outdated` in the answers). Trace events carry the same columns, so a trace's history
 * (and the traces of a past moment) know what was reviewed when. Traces made before this migration
 * count as reviewed at their records' current versions: nothing becomes suspect by upgrading.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['traces', 'trace_events']) {
    await db.schema.alterTable(table).addColumn('source_version', 'text').execute();
    await db.schema.alterTable(table).addColumn('target_version', 'text').execute();
  }
  for (const end of ['source', 'target'] as const) {
    await sql`
      UPDATE traces SET ${sql.ref(`${end}_version`)} = (
        SELECT r.version FROM records r
        WHERE r.tenant_id = traces.tenant_id AND r.id = traces.${sql.ref(`${end}_id`)}
      )
      WHERE ${sql.ref(`${end}_type`)} = 'Record'`.execute(db);
  }
}
