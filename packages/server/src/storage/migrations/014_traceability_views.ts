import type { Kysely } from 'kysely';

/**
 * The traceability page's saved views of each tenant (webapp/routes/traceability-views.ts): one row
 * per view, by its name, which is unique in the tenant. A view names trace-model roles or topic
 * revisions as text (JSON arrays) without foreign keys: a role removed from the model or a topic
 * deleted leaves the view readable, and the page says what it no longer finds.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('traceability_views')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role_ids', 'text')
    .addColumn('revision_ids', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('traceability_views_pk', ['tenant_id', 'name'])
    .execute();
}
