import { sql, type Kysely } from 'kysely';

/**
 * Users become per tenant: the same e-mail may belong to users of several tenants, and a deleted
 * user's address is free again (only live users are unique, per tenant). And the security audit log,
 * which only ever grows.
 */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect === 'postgres') {
    // 001 declared `email ... unique`, which PostgreSQL names users_email_key.
    await sql`ALTER TABLE users DROP CONSTRAINT IF EXISTS users_email_key`.execute(db);
  } else {
    await rebuildSqliteUsersWithoutGlobalUniqueEmail(db);
  }
  await sql`CREATE UNIQUE INDEX users_live_email ON users (tenant_id, email) WHERE deleted_at IS NULL`.execute(
    db,
  );

  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'text')
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('client_address', 'text')
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('target', 'text')
    .addColumn('detail', 'text')
    .execute();
  await db.schema
    .createIndex('audit_events_by_tenant')
    .on('audit_events')
    .columns(['tenant_id', 'at', 'id'])
    .execute();
  // Append-only in the database itself, whatever code or tool reaches the table.
  if (dialect === 'postgres') {
    await sql`CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit events are never changed or deleted'; END $$`.execute(db);
    await sql`CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
      FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`.execute(db);
  } else {
    for (const event of ['UPDATE', 'DELETE']) {
      await sql
        .raw(
          `CREATE TRIGGER audit_events_no_${event.toLowerCase()} BEFORE ${event} ON audit_events
           BEGIN SELECT RAISE(ABORT, 'audit events are never changed or deleted'); END`,
        )
        .execute(db);
    }
  }
}

/**
 * SQLite cannot drop the unique index a column constraint made, so the table is rebuilt. Other tables
 * reference users: with foreign-key checks deferred to the commit, the rows are back before then.
 */
async function rebuildSqliteUsersWithoutGlobalUniqueEmail(db: Kysely<unknown>): Promise<void> {
  await sql`PRAGMA defer_foreign_keys = ON`.execute(db);
  await sql`CREATE TEMP TABLE users_before_002 AS SELECT * FROM users`.execute(db);
  await sql`DROP TABLE users`.execute(db);
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await sql`INSERT INTO users (id, tenant_id, email, name, role, password_hash, created_at, deleted_at)
    SELECT id, tenant_id, email, name, role, password_hash, created_at, deleted_at FROM users_before_002`.execute(
    db,
  );
  await sql`DROP TABLE users_before_002`.execute(db);
  await db.schema.createIndex('users_tenant').on('users').columns(['tenant_id', 'email']).execute();
}
