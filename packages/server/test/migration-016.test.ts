import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import * as initial from '../src/storage/migrations/001_initial.js';
import * as tenantUsersAndAudit from '../src/storage/migrations/002_tenant_users_and_audit.js';
import * as history from '../src/storage/migrations/003_history.js';
import * as idempotencyKeys from '../src/storage/migrations/007_idempotency_keys.js';
import * as keptRecordVersions from '../src/storage/migrations/016_kept_record_versions.js';
import { findAnswer } from '../src/storage/idempotency-keys.js';
import { createTestPostgresDatabase, testDatabase } from './harness.js';

/**
 * Answers kept before the upgrade keep their text: they name no record version, and a replay
 * answers that text as before.
 */
describe(`migration 016 on ${testDatabase}: kept answers keep their text`, () => {
  it('leaves existing answers as they were, answered from their text', async () => {
    const postgres = testDatabase === 'postgres' ? await createTestPostgresDatabase() : undefined;
    const db = new Kysely<any>({
      dialect: postgres
        ? new PostgresDialect({ pool: new pg.Pool({ connectionString: postgres.url, max: 1 }) })
        : new SqliteDialect({ database: new SQLite(':memory:') }),
    });
    try {
      for (const migration of [initial, tenantUsersAndAudit, history]) await migration.up(db, testDatabase);
      await idempotencyKeys.up(db);
      const at = new Date().toISOString();
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
      const body = '{"_id":"0123456789abcdef01234567","name":"Kept","version":"1.0"}';
      await db
        .insertInto('idempotency_keys')
        .values({ tenant_id: 't1', key: 'k1', fingerprint: 'f1', status: 201, body, created_at: at })
        .execute();

      await keptRecordVersions.up(db);

      expect(
        await db.selectFrom('idempotency_keys').select(['body', 'record_id', 'record_n']).execute(),
      ).toEqual([{ body, record_id: null, record_n: null }]);
      expect(await findAnswer(db, 't1', 'k1')).toEqual({ fingerprint: 'f1', status: 201, body });
    } finally {
      await db.destroy();
      await postgres?.drop();
    }
  });
});
