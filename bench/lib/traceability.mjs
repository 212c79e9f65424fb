/**
 * The traceability dataset: requirements and tests in two approved topics, with traces between
 * them, written straight into a fresh SQLite store (the server's own insert functions, one
 * transaction), so a benchmark can start an RXS on it. Used by the trace-report and document
 * benchmarks.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { changeActor, createServices, insertRecords, insertTrace, openStorage } from '@rxs/server';
import { benchTenant, idMaker, loadSamples, makeRow } from './dataset.mjs';

/**
 * Requirements n, tests 2n, traces 3n: each test verifies one requirement, n more link at random;
 * 5% of requirements are left without a test. With `baseline`, also a baseline of that name over
 * the topics it names (`'requirements'`, `'tests'`), taken after everything is written.
 */
export async function generateTraceability(dir, n, { baseline } = {}) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const storage = await openStorage({ url: join(dir, 'rxs.db') });
  try {
    const { accounts, techdoc, baselines } = createServices(storage);
    const { topic, records: samples } = loadSamples();
    const { tenant, user, key, owner } = await benchTenant(accounts, 'Traceability bench');
    const revisionOf = async (name) => {
      const draft = await techdoc.create(owner, {
        knowledge_topic_name: name,
        type: topic.type,
        knowledge_topic_schema: topic.knowledge_topic_schema,
      });
      return (await techdoc.approve(owner, draft._id))._id;
    };
    const requirements = await revisionOf('System Requirements');
    const tests = await revisionOf('Verification Tests');
    const actor = changeActor({ tenantId: tenant.id, userId: user.id, role: 'owner', via: 'local' }, 'bench');
    const base = {
      samples,
      tenantId: tenant.id,
      userId: user.id,
      tenant,
      baseMs: Date.parse('2026-01-01T00:00:00Z'),
    };
    const reqIds = [];
    const testIds = [];
    const newId = idMaker(Math.floor(base.baseMs / 1000));
    await storage.db.transaction().execute(async (trx) => {
      for (const [revisionId, count, ids, offset] of [
        [requirements, n, reqIds, 0],
        [tests, 2 * n, testIds, n],
      ]) {
        for (let start = 0; start < count; start += 1000) {
          const rows = [];
          for (let i = start; i < Math.min(count, start + 1000); i++) {
            const row = makeRow(offset + i, { ...base, newId, revisionId });
            row.name = revisionId === tests ? `TST-${i + 1}` : `REQ-${i + 1}`;
            rows.push(row);
            ids.push(row.id);
          }
          await insertRecords(trx, rows, actor);
        }
      }
      const covered = Math.floor(n * 0.95);
      const traceId = idMaker(Math.floor(base.baseMs / 1000) + 1);
      let t = 0;
      const link = (source, target) =>
        insertTrace(
          trx,
          {
            id: traceId(t++),
            tenant_id: tenant.id,
            source_id: source,
            source_type: 'Record',
            target_id: target,
            target_type: 'Record',
            relation_type: 'is_related',
            created_by: user.id,
            created_at: new Date(base.baseMs).toISOString(),
            source_version: '1.0',
            target_version: '1.0',
          },
          actor,
        );
      for (let i = 0; i < 2 * n; i++) await link(reqIds[i % covered], testIds[i]);
      for (let i = 0; i < n; i++)
        await link(reqIds[(i * 7919) % covered], testIds[(i * 104_729 + 1) % (2 * n)]);
    });
    const revisions = { requirements, tests };
    if (baseline)
      await baselines.create(owner, {
        name: baseline.name,
        knowledge_topic_revision_ids: baseline.topics.map((t) => revisions[t]),
      });
    return { apiKey: key.key, requirements, tests };
  } finally {
    await storage.close();
  }
}
