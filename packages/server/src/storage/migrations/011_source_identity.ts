import { sql, type Kysely } from 'kysely';

/**
 * Records by their identity in the source they were imported from (`context.global_element_id`,
 * `GET /records/?context__global_element_id=`). Partial: only records that have one are indexed, so
 * records made in RXS cost nothing. The expression is the one SqlSyntax.jsonTextOf writes, which the
 * planner needs word for word to use the index; the id last gives the listing's order without a
 * sort, which is what has SQLite (which keeps no statistics here) choose it over records_by_tenant.
 */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const identity =
    dialect === 'postgres'
      ? sql`("context" ->> 'global_element_id')`
      : sql`json_extract("context", '$.global_element_id')`;
  await sql`CREATE INDEX records_global_element_id ON records (tenant_id, ${identity}, id) WHERE ${identity} IS NOT NULL`.execute(
    db,
  );
}
