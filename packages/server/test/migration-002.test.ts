import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, openStorage, type Storage } from '@rxs/server';
import * as initial from '../src/storage/migrations/001_initial.js';
import { openPostgres } from '../src/storage/postgres/storage.js';
import type { Database } from '../src/storage/schema.js';
import { createTestPostgresDatabase, testDatabase } from './harness.js';

/**
 * An installation made before users were per tenant (migration 001 only, with a user, a key and a
 * session) upgrades in place: nothing is lost, the references hold, and addresses become per tenant.
 */
describe(`migration 002 on ${testDatabase}: users per tenant and the audit log`, () => {
  let url: string;
  let cleanup: () => Promise<void>;
  let storage: Storage;

  beforeAll(async () => {
    let old: Kysely<Database>;
    if (testDatabase === 'postgres') {
      const database = await createTestPostgresDatabase();
      url = database.url;
      cleanup = database.drop;
      old = openPostgres(url).db;
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'rxs-migration-002-'));
      url = join(dir, 'rxs.db');
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
      const connection = new SQLite(url);
      connection.pragma('foreign_keys = ON');
      old = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
    }
    const migrator = new Migrator({
      db: old,
      provider: {
        getMigrations: async () => ({
          '001_initial': { up: (db) => initial.up(db, testDatabase === 'postgres' ? 'postgres' : 'sqlite') },
        }),
      },
    });
    const { error } = await migrator.migrateToLatest();
    expect(error).toBeUndefined();
    const now = new Date().toISOString();
    for (const id of ['tenant-a', 'tenant-b']) {
      await old
        .insertInto('tenants')
        .values({ id, name: id, product_history_id: 'p', knowledge_unit_history_id: 'k', created_at: now })
        .execute();
    }
    await old
      .insertInto('users')
      .values({
        id: 'user-a',
        tenant_id: 'tenant-a',
        email: 'person@example.com',
        name: 'Person',
        role: 'owner',
        password_hash: null,
        created_at: now,
        deleted_at: null,
      })
      .execute();
    await old
      .insertInto('api_keys')
      .values({
        id: '0123456789abcdef',
        tenant_id: 'tenant-a',
        user_id: 'user-a',
        name: 'old key',
        hash: 'h',
        created_at: now,
        expires_at: null,
        revoked_at: null,
        last_used_at: null,
      })
      .execute();
    await old
      .insertInto('sessions')
      .values({
        id: 's',
        user_id: 'user-a',
        tenant_id: 'tenant-a',
        csrf_token: 'c',
        created_at: now,
        expires_at: now,
      })
      .execute();
    await old.destroy();
    storage = await openStorage({ url });
  });
  afterAll(async () => {
    await storage?.close();
    await cleanup?.();
  });

  it('keeps users, keys and sessions, with their references intact', async () => {
    const key = await storage.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .select(['api_keys.name', 'users.email'])
      .executeTakeFirstOrThrow();
    expect(key).toEqual({ name: 'old key', email: 'person@example.com' });
    expect(await storage.db.selectFrom('sessions').select('user_id').execute()).toEqual([
      { user_id: 'user-a' },
    ]);
    expect(await storage.integrityCheck()).toEqual([]);
    if (storage.dialect === 'sqlite') {
      expect((await sql`PRAGMA foreign_key_check`.execute(storage.db)).rows).toEqual([]);
    }
  });

  it('lets another tenant have the same address, but never two live users of one tenant', async () => {
    const { accounts } = createServices(storage);
    const inB = await accounts.createUser('tenant-b', { email: 'person@example.com', role: 'viewer' });
    expect(inB.tenant_id).toBe('tenant-b');
    const now = new Date().toISOString();
    const duplicate = {
      id: 'user-a-2',
      tenant_id: 'tenant-a',
      email: 'person@example.com',
      name: 'Twin',
      role: 'viewer',
      password_hash: null,
      created_at: now,
      deleted_at: null,
    };
    // The database itself refuses a second live user, whatever a racing request checked before.
    await expect(storage.db.insertInto('users').values(duplicate).execute()).rejects.toThrow();
    await accounts.deleteUser(
      'tenant-a',
      (await accounts.createUser('tenant-a', { email: 'gone@example.com', role: 'viewer' })).id,
    );
    await storage.db
      .insertInto('users')
      .values({ ...duplicate, email: 'gone@example.com' })
      .execute();
  });

  it('adds the audit log', async () => {
    const { accounts } = createServices(storage);
    const events = await accounts.audit.list('tenant-b');
    expect(events.map((e) => e.action)).toContain('user-created');
  });

  it('refuses to change or delete audit events, in the database itself', async () => {
    await expect(
      storage.db.updateTable('audit_events').set({ actor: 'someone else' }).execute(),
    ).rejects.toThrow(/never changed or deleted/);
    await expect(storage.db.deleteFrom('audit_events').execute()).rejects.toThrow(/never changed or deleted/);
    expect((await storage.db.selectFrom('audit_events').select('actor').execute()).length).toBeGreaterThan(0);
  });
});
