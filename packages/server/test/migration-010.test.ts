import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createServices, openStorage } from '@rxs/server';
import { recordJson } from '../src/services/records/repository.js';
import type { RecordFilter } from '../src/services/records/filter.js';
import type { Services } from '../src/services/index.js';
import { createTestPostgresDatabase, createTextTopic, startTestServer, testDatabase } from './harness.js';

/**
 * An installation made before migration 010 kept records' JSON as jsonb on PostgreSQL. Upgraded,
 * its listings (present and as of a moment) send the very bytes they sent before, and history stays
 * append-only. SQLite stores text already; the migration does nothing there.
 */
describe.runIf(testDatabase === 'postgres')(
  'migration 010 on PostgreSQL: records keep their JSON as text',
  () => {
    it('rewrites what jsonb held to the bytes listings sent for it; history stays append-only', async () => {
      const database = await createTestPostgresDatabase();
      const t = await startTestServer({ databaseUrl: database.url });
      const principal = { tenantId: t.demo.tenant.id, userId: 'migration', role: 'owner' as const };
      try {
        const revision = await createTextTopic(t, 'Before 010');
        const ids: string[] = [];
        for (const [i, text] of [
          'plain',
          'quote " back\\slash, colon: comma',
          'é 😀 \u2028 \t tab',
        ].entries()) {
          const created = await t.api('POST', '/records/', {
            body: {
              name: `record ${i}`,
              form: { id: 'form', order: ['z', 'a'] },
              data: { text, zz: i, a: { long_key: [1, 2.5, 1e21], b: null } },
              context: { knowledge_unit_topic_id: revision, ...(i === 1 ? { linked_product: 'x' } : {}) },
            },
          });
          expect(created.status, JSON.stringify(created.body)).toBe(201);
          ids.push(created.body._id);
        }
        expect(
          (await t.api('PATCH', `/records/${ids[0]}`, { body: { data: { text: 'edited', b: 1 } } })).status,
        ).toBe(200);
        // More than one batch of the rewrite (1,000 rows) in both tables, so its keyset paging counts.
        for (let i = 0; i < 1200; i++)
          await t.server.app.services.records.create(principal, {
            name: `bulk ${i}`,
            form: { id: 'form', order: [i] },
            data: { text: `bulk "${i}"`, zz: i, a: { n: i / 7, list: [i, 'x\\y'] } },
            context: { knowledge_unit_topic_id: revision },
          });
        const db = t.server.app.services.storage.db;

        // The state before 010: jsonb columns, holding what only jsonb can (1.0, a number beyond a
        // double, keys that JavaScript orders apart), and 010 not yet run.
        for (const table of ['records', 'record_versions']) {
          await sql
            .raw(
              `ALTER TABLE ${table} ${['form', 'data', 'context']
                .map((c) => `ALTER COLUMN ${c} TYPE jsonb USING ${c}::jsonb`)
                .join(', ')}`,
            )
            .execute(db);
        }
        await sql`UPDATE records SET data = ${'{"text": "odd", "n": 1.0, "big": 1e400, "tiny": 0.0000001, "10": "x", "2": "y", "s": "a, b: c"}'}::jsonb
        WHERE id = ${ids[2]}`.execute(db);
        // Nor any migration after it: what they made goes, and they run again after 010.
        await sql`DROP INDEX IF EXISTS records_global_element_id`.execute(db);
        await sql`DROP TABLE IF EXISTS trace_model_versions, trace_roles`.execute(db);
        await sql`DROP TABLE IF EXISTS record_outline_entries, record_outlines`.execute(db);
        await sql`DROP TABLE IF EXISTS traceability_views`.execute(db);
        await sql`DROP TABLE IF EXISTS baseline_events`.execute(db);
        await sql`ALTER TABLE baselines DROP COLUMN IF EXISTS required_signers, DROP COLUMN IF EXISTS supersedes`.execute(
          db,
        );
        await sql`ALTER TABLE idempotency_keys DROP COLUMN IF EXISTS record_id, DROP COLUMN IF EXISTS record_n`.execute(
          db,
        );
        await sql`DELETE FROM kysely_migration WHERE name >= '010_json_text'`.execute(db);

        // What listings sent then: jsonb parsed by the driver, written by recordJson.
        const rows = await db
          .selectFrom('records')
          .selectAll()
          .where('kt_revision_id', '=', revision)
          .orderBy('id')
          .execute();
        const before = rows.map(recordJson);
        expect(before.join('\n')).toContain('"n":1,"s":"a, b: c","big":null,"text":"odd","tiny":1e-7');
        const asOf = new Date().toISOString();
        // What as-of listings sent then: parsed and written in JavaScript. (This version builds them
        // in SQL from the stored text, which jsonb columns, gone since 010, print with spaces.)
        const historyBefore = (
          await lines(t.server.app.services, principal, {
            revisionIds: [revision],
            asOf,
          })
        ).map((line) => JSON.stringify(JSON.parse(line)));
        expect(historyBefore).toHaveLength(1203);
        await t.close();

        const storage = await openStorage({ url: database.url });
        try {
          const services = createServices(storage);
          const columns = await sql<{ table_name: string; column_name: string; data_type: string }>`
          SELECT table_name, column_name, data_type FROM information_schema.columns
          WHERE table_name IN ('records', 'record_versions') AND column_name IN ('form', 'data', 'context')`.execute(
            storage.db,
          );
          expect(columns.rows.map((c) => c.data_type)).toEqual(Array(6).fill('json'));
          // The listing (one COPY), the JavaScript path and the as-of listing: the bytes of before.
          const chunks: Buffer[] = [];
          for await (const chunk of services.records.streamJsonChunks(principal, { revisionIds: [revision] }))
            chunks.push(Buffer.from(chunk));
          expect(Buffer.concat(chunks).toString()).toBe(before.map((line) => `,\n${line}`).join(''));
          expect(await lines(services, principal, { revisionIds: [revision] })).toEqual(before);
          expect(await lines(services, principal, { revisionIds: [revision], asOf })).toEqual(historyBefore);
          await expect(sql`UPDATE record_versions SET name = 'changed'`.execute(storage.db)).rejects.toThrow(
            /never changed/,
          );
        } finally {
          await storage.close();
        }
      } finally {
        await t.close().catch(() => undefined);
        await database.drop();
      }
    }, 120_000);
  },
);

async function lines(
  services: Services,
  principal: { tenantId: string; userId: string; role: 'owner' },
  filter: RecordFilter,
): Promise<string[]> {
  const out: string[] = [];
  for await (const line of services.records.streamJsonLines(principal, filter)) out.push(line);
  return out;
}
