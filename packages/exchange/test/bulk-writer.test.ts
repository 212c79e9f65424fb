import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxsClient } from '@rxs/client';
import type { RecordCreate, RecordUpdate } from '@rxs/contract';
import { inProcessImportClient } from '../../server/src/webapp/import-client.js';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { FaultProxy } from '../../server/test/reliability/support/fault-proxy.js';
import { approvedTopic, NOTE_SCORE_SCHEMA } from '../../server/test/support/topics.js';
import { HashedCounts } from '../src/export/id-table.js';
import { BulkWriter, type BatchLimits, type BulkWriteClient } from '../src/import/bulk-writer.js';
import type { RowPlan } from '../src/import/row-plan.js';

/**
 * The importer's batch writer against the real server in-process: rows go in batches through
 * `POST /records/bulk`, each row under the key its single write would have, so neither a retried
 * batch nor a re-run (with the same batches or shifted ones) writes a row twice.
 */
describe('BulkWriter', () => {
  let t: TestServer;
  let proxy: FaultProxy;
  let client: RxsClient;
  let topics = 0;
  const clientOf = (url: string): RxsClient =>
    createClient({
      techdocUrl: url,
      recordsUrl: url,
      tracerUrl: url,
      apiKey: t.ownerKey,
      retries: 4,
      retryBaseMs: 1,
      retryCapMs: 5,
    });
  const key = (parts: unknown) =>
    `rxs-import-${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 40)}`;
  const createPlan = (revision: string, i: number, data: Record<string, unknown> = {}): RowPlan => {
    const create: RecordCreate = {
      name: `row ${i}`,
      form: {},
      data: { note: `note ${i}`, ...data },
      context: { knowledge_unit_topic_id: revision },
    };
    return {
      where: `row ${i + 2}`,
      action: 'create',
      problems: [],
      warnings: [],
      datesOfDateTimes: [],
      create,
      idempotencyKey: key([revision, 'create', i, create]),
    };
  };
  const updatePlan = (recordId: string, update: RecordUpdate, where = 'row 1'): RowPlan => ({
    where,
    action: 'update',
    recordId,
    problems: [],
    warnings: [],
    datesOfDateTimes: [],
    update,
    idempotencyKey: key(['update', recordId, update]),
  });
  const recordIds = async (revision: string): Promise<string[]> => {
    const ids: string[] = [];
    for await (const record of client.records.listRecords({ context__knowledge_unit_topic_id: revision }))
      ids.push(record._id);
    return ids;
  };
  const before = (revision: string) => async () => {
    const counts = new HashedCounts();
    for (const id of await recordIds(revision)) counts.add(id);
    return counts;
  };
  const writer = (
    revision: string,
    options: {
      client?: BulkWriteClient;
      allOrNothing?: boolean;
      recreate?: boolean;
      limits?: BatchLimits;
    } = {},
  ) =>
    new BulkWriter(
      options.client ?? client,
      2,
      options.allOrNothing ?? true,
      options.recreate ?? false,
      before(revision),
      options.limits,
    );
  const run = async (w: BulkWriter, plans: readonly RowPlan[]) => {
    for (const plan of plans) await w.write(plan);
    await w.drain();
    return {
      written: w.written,
      created: w.created,
      updated: w.updated,
      replayed: w.replayed,
      deletedSince: w.deletedSince,
      recreated: w.recreated,
      stopped: w.stopped,
      fatal: w.fatal?.message,
      failures: w.failures.map((f) => [f.plan.where, f.problems.join(' ')]),
    };
  };
  const topic = () => approvedTopic(t, `Bulk writer ${++topics}`, { schema: NOTE_SCORE_SCHEMA });

  beforeAll(async () => {
    t = await startTestServer();
    client = clientOf(t.url);
    proxy = new FaultProxy(t.url);
    await proxy.listen();
  });
  afterAll(async () => {
    await proxy?.close();
    await t?.close();
  });

  it('writes rows in batches by items and bytes, two in flight, and a re-run writes nothing', async () => {
    const revision = await topic();
    const plans = Array.from({ length: 1203 }, (_, i) => createPlan(revision, i));
    const first = writer(revision, { limits: { items: 500, bytes: 4 * 2 ** 20 } });
    expect(await run(first, plans)).toMatchObject({
      written: 1203,
      created: 1203,
      replayed: 0,
      failures: [],
    });
    expect(first.requests).toBe(3);
    const ids = await recordIds(revision);
    expect(ids).toHaveLength(1203);

    // The same rows again: each batch is answered from its key.
    const again = writer(revision, { limits: { items: 500, bytes: 4 * 2 ** 20 } });
    expect(await run(again, plans)).toMatchObject({ written: 0, created: 0, replayed: 1203, failures: [] });
    expect(again.requests).toBe(3);
    // Batches that fall otherwise (fewer rows to a batch, by bytes): each row's own key answers it.
    const shifted = writer(revision, { limits: { items: 1000, bytes: 20_000 } });
    expect(await run(shifted, plans.slice(7))).toMatchObject({ written: 0, replayed: 1196, failures: [] });
    expect(shifted.requests).toBeGreaterThan(10);
    expect(await recordIds(revision)).toEqual(ids);
  });

  it('all or nothing: a refused row stops the import, and nothing of its batch is written', async () => {
    const revision = await topic();
    const kept = await client.records.createRecord(createPlan(revision, 0).create!);
    await client.records.updateRecord(kept._id, { name: 'changed meanwhile' });
    const plans = [
      ...Array.from({ length: 5 }, (_, i) => createPlan(revision, i + 1)),
      updatePlan(kept._id, { data: { note: 'stale' }, version: '1.0' }, 'row 8'),
      ...Array.from({ length: 5 }, (_, i) => createPlan(revision, i + 10)),
    ];
    const outcome = await run(writer(revision, { limits: { items: 3, bytes: 2 ** 20 } }), plans);
    expect(outcome).toMatchObject({ stopped: true, fatal: undefined });
    expect(outcome.failures).toEqual([
      ['row 8', expect.stringMatching(/changed while the file was imported/)],
    ]);
    // The first batch was written, and the third if it was in flight beside the refused one; the
    // refused batch and those after the refusal were not.
    expect([3, 6]).toContain(outcome.written);
    const names = (await client.records.listAllRecords({ context__knowledge_unit_topic_id: revision })).map(
      (record) => record.name,
    );
    expect(names).toHaveLength(1 + outcome.written);
    expect(names).not.toContain('row 4');
    expect(names).not.toContain('row 13');
    expect((await client.records.getRecord(kept._id)).name).toBe('changed meanwhile');
  });

  it('continue on error: the refused row is reported, the rest of its batch written', async () => {
    const revision = await topic();
    const plans = [createPlan(revision, 0), createPlan(revision, 1, { score: 11 }), createPlan(revision, 2)];
    const outcome = await run(writer(revision, { allOrNothing: false }), plans);
    expect(outcome).toMatchObject({ written: 2, created: 2, stopped: false });
    expect(outcome.failures).toEqual([['row 3', expect.stringMatching(/^body\.data\.score: .*10/)]]);
    expect(await recordIds(revision)).toHaveLength(2);
  });

  it('a row whose record was deleted since is reported, or created anew under its next key', async () => {
    const revision = await topic();
    const plans = Array.from({ length: 4 }, (_, i) => createPlan(revision, i));
    await run(writer(revision), plans);
    const [gone] = await recordIds(revision);
    await client.records.deleteRecord(gone!);

    const reported = await run(writer(revision), plans);
    expect(reported).toMatchObject({ written: 0, replayed: 3, deletedSince: 1, stopped: false });
    expect(reported.failures[0]![1]).toMatch(/was deleted since, so it was not created again/);
    expect(await recordIds(revision)).toHaveLength(3);

    const recreated = await run(writer(revision, { recreate: true }), plans);
    expect(recreated).toMatchObject({ written: 1, created: 1, recreated: 1, replayed: 3, failures: [] });
    expect(await recordIds(revision)).toHaveLength(4);
    // Once more: the row created anew is answered from its derived key.
    expect(await run(writer(revision, { recreate: true }), plans)).toMatchObject({
      written: 0,
      replayed: 4,
      failures: [],
    });
    expect(await recordIds(revision)).toHaveLength(4);
  });

  it('a lost answer is retried under the batch key: the batch is written once', async () => {
    const revision = await topic();
    let posts = 0;
    proxy.reset((request) => (request.method === 'POST' && posts++ === 0 ? 'truncate' : 'none'));
    const plans = Array.from({ length: 10 }, (_, i) => createPlan(revision, i));
    const outcome = await run(writer(revision, { client: clientOf(proxy.url) }), plans);
    expect(outcome).toMatchObject({ written: 10, created: 10, replayed: 0, failures: [] });
    expect(posts).toBe(2);
    expect(await recordIds(revision)).toHaveLength(10);
  });

  it('writes through the web app’s in-process client alike', async () => {
    const revision = await topic();
    const { services } = t.server.app;
    const user = await services.accounts.findUserByEmail(t.demo.tenant.users.owner.email, t.demo.tenant.id);
    const inProcess = inProcessImportClient(services, {
      tenantId: t.demo.tenant.id,
      userId: user!.id,
      role: 'owner',
    });
    const plans = Array.from({ length: 7 }, (_, i) => createPlan(revision, i));
    const limits = { items: 3, bytes: 2 ** 20 };
    expect(await run(writer(revision, { client: inProcess, limits }), plans)).toMatchObject({
      written: 7,
      created: 7,
    });
    // Over HTTP, the same rows are the same requests: answered, not written again.
    expect(await run(writer(revision, { limits }), plans)).toMatchObject({ written: 0, replayed: 7 });
    const refused = await run(writer(revision, { client: inProcess }), [
      createPlan(revision, 9, { score: 'x' }),
    ]);
    expect(refused.failures).toEqual([['row 11', expect.stringMatching(/^body\.data\.score/)]]);
  });
});
