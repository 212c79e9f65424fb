import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import * as initial from '../src/storage/migrations/001_initial.js';
import * as tenantUsersAndAudit from '../src/storage/migrations/002_tenant_users_and_audit.js';
import * as history from '../src/storage/migrations/003_history.js';
import * as baselineSignatures from '../src/storage/migrations/015_baseline_signatures.js';
import { createTestPostgresDatabase, testDatabase } from './harness.js';

/**
 * Baselines made before review existed were released when they were made: the upgrade gives each
 * that one step, by its creator, so every baseline's history starts complete. The steps are
 * append-only from the start.
 */
describe(`migration 015 on ${testDatabase}: existing baselines are released, with one step`, () => {
  it('gives each existing baseline its released step, and the steps cannot be changed', async () => {
    const postgres = testDatabase === 'postgres' ? await createTestPostgresDatabase() : undefined;
    const db = new Kysely<any>({
      dialect: postgres
        ? new PostgresDialect({ pool: new pg.Pool({ connectionString: postgres.url, max: 1 }) })
        : new SqliteDialect({ database: new SQLite(':memory:') }),
    });
    try {
      for (const migration of [initial, tenantUsersAndAudit, history]) await migration.up(db, testDatabase);
      const at = '2026-01-02T03:04:05.000Z';
      await db
        .insertInto('tenants')
        .values({
          id: 't1',
          name: 'Acme',
          product_history_id: 'p',
          knowledge_unit_history_id: 'k',
          created_at: at,
        })
        .execute();
      await db
        .insertInto('users')
        .values({
          id: 'u1',
          tenant_id: 't1',
          email: 'anna@acme.example',
          name: 'Anna',
          role: 'owner',
          created_at: at,
        })
        .execute();
      for (const [id, createdBy] of [
        ['b1', 'u1'],
        ['b2', 'gone'],
      ])
        await db
          .insertInto('baselines')
          .values({
            id,
            tenant_id: 't1',
            name: id,
            description: '',
            at,
            revision_ids: '[]',
            created_by: createdBy,
            created_at: at,
          })
          .execute();

      await baselineSignatures.up(db, testDatabase);

      const steps = await db.selectFrom('baseline_events').selectAll().orderBy('baseline_id').execute();
      expect(steps).toEqual([
        {
          baseline_id: 'b1',
          n: 1,
          tenant_id: 't1',
          at,
          action: 'released',
          actor_user_id: 'u1',
          actor_email: 'anna@acme.example',
          actor_key_id: null,
          via: 'upgrade',
          meaning: null,
          reason: null,
        },
        expect.objectContaining({ baseline_id: 'b2', action: 'released', actor_email: 'gone' }),
      ]);
      const baselines = await db.selectFrom('baselines').select(['required_signers', 'supersedes']).execute();
      expect(baselines).toEqual([
        { required_signers: null, supersedes: null },
        { required_signers: null, supersedes: null },
      ]);
      await expect(db.updateTable('baseline_events').set({ reason: 'x' }).execute()).rejects.toThrow();
      await expect(db.deleteFrom('baseline_events').execute()).rejects.toThrow();
    } finally {
      await db.destroy();
      await postgres?.drop();
    }
  });
});
