import { sql, type Kysely } from 'kysely';

/**
 * Baseline review and release (services/history/baseline-review.ts). A baseline may name its
 * required signers (`required_signers`, JSON; NULL for a baseline released at its creation, as every
 * baseline before this migration was) and the earlier baseline it supersedes. Each step of its life
 * (proposed, signed, refused, released) is a numbered, append-only row of `baseline_events`: the
 * primary key (baseline_id, n) makes two decisions taken at once on one baseline collide, so one is
 * taken again on top of the other, and a released or refused baseline stays as it is.
 */
export async function up(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const json = dialect === 'postgres' ? 'jsonb' : 'text';
  await db.schema.alterTable('baselines').addColumn('required_signers', sql.raw(json)).execute();
  await db.schema.alterTable('baselines').addColumn('supersedes', 'text').execute();

  await db.schema
    .createTable('baseline_events')
    .addColumn('baseline_id', 'text', (c) => c.notNull().references('baselines.id'))
    .addColumn('n', 'integer', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'text', (c) => c.notNull())
    .addColumn('actor_email', 'text', (c) => c.notNull())
    .addColumn('actor_key_id', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('meaning', 'text')
    .addColumn('reason', 'text')
    .addPrimaryKeyConstraint('baseline_events_pk', ['baseline_id', 'n'])
    .execute();

  // Baselines made before had no review: each was released when it was created, by its creator.
  await sql`INSERT INTO baseline_events (baseline_id, n, tenant_id, at, action, actor_user_id, actor_email,
      actor_key_id, via, meaning, reason)
    SELECT b.id, 1, b.tenant_id, b.created_at, 'released', b.created_by, coalesce(u.email, b.created_by),
      NULL, 'upgrade', NULL, NULL
    FROM baselines b LEFT JOIN users u ON u.id = b.created_by`.execute(db);

  // Append-only in the database itself, whatever code or tool reaches the table.
  if (dialect === 'postgres') {
    await sql`CREATE TRIGGER baseline_events_append_only BEFORE UPDATE OR DELETE ON baseline_events
      FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`.execute(db);
  } else {
    for (const event of ['UPDATE', 'DELETE']) {
      await sql
        .raw(
          `CREATE TRIGGER baseline_events_no_${event.toLowerCase()} BEFORE ${event} ON baseline_events
           BEGIN SELECT RAISE(ABORT, 'history is never changed or deleted'); END`,
        )
        .execute(db);
    }
  }
}
