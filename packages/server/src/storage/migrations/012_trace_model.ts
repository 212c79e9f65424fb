import { sql, type Kysely } from 'kysely';

/**
 * The trace model of each tenant (storage/trace-model.ts): its roles as they are now, one row each in
 * the model's order, and every version of the model, appended in the transaction of the change with
 * who, when, why and what changed. The model's version is the tenant's newest version number (0
 * before the first); the versions' key (tenant, version) lets only one of two changes based on the
 * same version in.
 */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const json = dialect === 'postgres' ? 'jsonb' : 'text';

  await db.schema
    .createTable('trace_roles')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('forward_name', 'text', (c) => c.notNull())
    .addColumn('backward_name', 'text', (c) => c.notNull())
    .addColumn('from_topic_history_id', 'text', (c) => c.notNull().references('kt_histories.id'))
    .addColumn('to_topic_history_id', 'text', (c) => c.notNull().references('kt_histories.id'))
    .addColumn('trace_source', 'text', (c) => c.notNull())
    .addColumn('relation_type', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('trace_roles_pk', ['tenant_id', 'id'])
    .execute();

  await db.schema
    .createTable('trace_model_versions')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'text', (c) => c.notNull())
    .addColumn('actor_key_id', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    // The roles as the change left them, and what it changed (role ids added, removed, changed).
    .addColumn('roles', sql.raw(json), (c) => c.notNull())
    .addColumn('changes', sql.raw(json), (c) => c.notNull())
    .addPrimaryKeyConstraint('trace_model_versions_pk', ['tenant_id', 'version'])
    .execute();
}
