import { sql, type Kysely } from 'kysely';

/** jsonb on PostgreSQL, JSON text on SQLite. */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const json = dialect === 'postgres' ? sql`jsonb` : sql`text`;

  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('product_history_id', 'text', (c) => c.notNull())
    .addColumn('knowledge_unit_history_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('users_tenant').on('users').columns(['tenant_id', 'email']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_user').on('api_keys').columns(['tenant_id', 'user_id']).execute();

  await db.schema
    .createTable('kt_histories')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('latest_revision_id', 'text', (c) => c.notNull())
    .addColumn('current_revision_id', 'text')
    .addColumn('lock_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('kt_histories_tenant')
    .on('kt_histories')
    .columns(['tenant_id', 'id'])
    .execute();

  await db.schema
    .createTable('kt_revisions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('history_id', 'text', (c) => c.notNull().references('kt_histories.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('schema', json, (c) => c.notNull())
    .addColumn('data', json, (c) => c.notNull())
    .addColumn('product_history_id', 'text', (c) => c.notNull())
    .addColumn('product_version', 'text', (c) => c.notNull())
    .addColumn('knowledge_unit_history_id', 'text', (c) => c.notNull())
    .addColumn('knowledge_unit_version', 'text', (c) => c.notNull())
    .addColumn('source_schema_id', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addColumn('updated_at', 'text')
    .addColumn('last_action', 'text', (c) => c.notNull())
    .addColumn('approved_by', 'text')
    .addColumn('approved_at', 'text')
    .execute();
  await db.schema
    .createIndex('kt_revisions_history')
    .on('kt_revisions')
    .columns(['tenant_id', 'history_id', 'id'])
    .execute();
  await db.schema
    .createIndex('kt_revisions_name')
    .on('kt_revisions')
    .columns(['tenant_id', 'name'])
    .execute();

  await db.schema
    .createTable('records')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('kt_revision_id', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('form', json, (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('data', json, (c) => c.notNull())
    .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('context', json, (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addColumn('updated_at', 'text')
    .addColumn('last_action', 'text', (c) => c.notNull())
    .execute();
  // Listing by revision id walks this index in _id order, whatever the tenant's size.
  await db.schema
    .createIndex('records_by_topic')
    .on('records')
    .columns(['tenant_id', 'kt_revision_id', 'id'])
    .execute();
  await db.schema.createIndex('records_by_tenant').on('records').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('traces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('source_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('relation_type', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('traces_by_source').on('traces').columns(['tenant_id', 'source_id']).execute();
  await db.schema.createIndex('traces_by_target').on('traces').columns(['tenant_id', 'target_id']).execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}
