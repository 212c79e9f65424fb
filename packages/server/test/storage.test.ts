import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStorage } from '@rxs/server';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPostgresDatabase, startTestServer, testDatabase, type TestServer } from './harness.js';

describe(`storage on ${testDatabase}`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('this run really uses the database it is named for', () => {
    expect(t.server.storage.dialect).toBe(testDatabase);
  });

  it('the database passes its integrity check after the demo seed', async () => {
    expect(await t.server.storage.integrityCheck()).toEqual([]);
  });

  it('listing by revision uses the index, whatever the tenant size', async () => {
    const { storage } = t.server;
    const revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    // A tenant with many records in another topic: listing one topic must not walk them all.
    const bulk = Array.from({ length: 2000 }, (_, i) => ({
      id: (0xa00000 + i).toString(16).padStart(24, 'f'),
      tenant_id: t.demo.tenant.id,
      kt_revision_id: 'f'.repeat(24),
      name: `bulk-${i}`,
      form: '{}',
      version: '1.0',
      data: '{}',
      read_only: 0,
      context: '{}',
      created_by: 'u',
      created_at: new Date().toISOString(),
      updated_by: null,
      updated_at: null,
      last_action: 'created',
    }));
    for (let i = 0; i < bulk.length; i += 500)
      await storage.db
        .insertInto('records')
        .values(bulk.slice(i, i + 500))
        .execute();
    await sql`ANALYZE`.execute(storage.db);
    const compiled = storage.db
      .selectFrom('records')
      .selectAll()
      .where('tenant_id', '=', t.demo.tenant.id)
      .where('kt_revision_id', '=', revision)
      .orderBy('id')
      .compile();
    const explain = testDatabase === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN';
    const plan: string[] = [];
    for await (const row of storage.stream<Record<string, unknown>>({
      ...compiled,
      sql: `${explain} ${compiled.sql}`,
    } as never)) {
      plan.push(String(testDatabase === 'sqlite' ? row.detail : Object.values(row)[0]));
    }
    expect(plan.join(' | ')).toMatch(/records_by_topic/);
  });
});

const serverDist = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/** An empty database of the kind this run tests, and how to drop it. */
async function freshDatabase(): Promise<{ url: string; cleanup: () => Promise<void> }> {
  if (testDatabase === 'postgres') {
    const database = await createTestPostgresDatabase();
    return { url: database.url, cleanup: database.drop };
  }
  const dir = mkdtempSync(join(tmpdir(), 'rxs-storage-'));
  return { url: join(dir, 'rxs.db'), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

describe(`migrations on ${testDatabase} run once when several replicas start at the same moment`, () => {
  it('four processes opening one fresh database concurrently all succeed, and migrate once', async () => {
    const { url, cleanup } = await freshDatabase();
    try {
      // Separate processes, as replicas are: each opens (and so migrates) the same database.
      const opener = `import('${serverDist}').then(async (m) => { const s = await m.openStorage({ url: process.argv[1] }); await s.close(); })`;
      const exits = await Promise.all(
        Array.from(
          { length: 4 },
          () =>
            new Promise<{ code: number | null; stderr: string }>((resolve) => {
              const child = spawn(process.execPath, ['--input-type=module', '-e', opener, url], {
                stdio: ['ignore', 'ignore', 'pipe'],
              });
              let stderr = '';
              child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
              child.on('exit', (code) => resolve({ code, stderr }));
            }),
        ),
      );
      for (const exit of exits) expect(exit, exit.stderr).toMatchObject({ code: 0 });
      const storage = await openStorage({ url });
      const applied = await storage.db
        .selectFrom('kysely_migration' as never)
        .select('name' as never)
        .execute();
      // Each migration once.
      expect(applied.map((row) => (row as { name: string }).name)).toEqual([
        '001_initial',
        '002_tenant_users_and_audit',
        '003_history',
        '004_listing_tags',
        '005_trace_tags',
        '006_changes_feeds',
        '007_idempotency_keys',
        '008_record_numbers',
        '009_suspect_traces',
        '010_json_text',
        '011_source_identity',
        '012_trace_model',
        '013_record_outlines',
        '014_traceability_views',
        '015_baseline_signatures',
        '016_kept_record_versions',
      ]);
      await storage.close();
    } finally {
      await cleanup();
    }
  });
});

describe(`a database upgraded by a newer version, on ${testDatabase}`, () => {
  it('is refused with a message naming the migration this version lacks and what to run', async () => {
    const { url, cleanup } = await freshDatabase();
    try {
      const storage = await openStorage({ url });
      // What a later version's first migration leaves behind.
      await sql`insert into kysely_migration (name, timestamp) values ('900_from_the_future', '2027-01-01T00:00:00.000Z')`.execute(
        storage.db,
      );
      await storage.close();
      const refused = await openStorage({ url }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toMatch(
        /was upgraded by a newer version of RXS \(its migration 900_from_the_future is unknown to this one, whose last is 016_kept_record_versions\)\. Run that version or a newer one/,
      );
    } finally {
      await cleanup();
    }
  });
});
