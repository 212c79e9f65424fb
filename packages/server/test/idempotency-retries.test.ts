import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxsClient } from '@rxs/client';
import { startTestServer, type TestServer } from './harness.js';
import { FaultProxy, type Fault } from './reliability/support/fault-proxy.js';
import { approvedTopic } from './support/topics.js';

/**
 * Writes retried through a proxy that loses requests and answers: with an Idempotency-Key the SDK
 * retries creates and changes, and the service never writes one twice, whether the lost part was
 * the request or the answer.
 */
describe('writes retried with an Idempotency-Key', () => {
  let t: TestServer;
  let proxy: FaultProxy;
  let client: RxsClient;
  let revision: string;
  const faults: Fault[] = ['reset', '500', '503', 'reset-mid-body', 'truncate'];

  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'Retried writes');
    proxy = new FaultProxy(t.url);
    const url = await proxy.listen();
    client = createClient({
      techdocUrl: url,
      recordsUrl: url,
      tracerUrl: url,
      apiKey: t.ownerKey,
      retries: 6,
      retryBaseMs: 1,
      retryCapMs: 5,
    });
  });
  afterAll(async () => {
    await proxy?.close();
    await t?.close();
  });

  it('property: however the first attempts fail, each create makes one record and each change one version', async () => {
    let round = 0;
    let answersLost = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...faults), { minLength: 1, maxLength: 4 }),
        async (failures) => {
          const label = `retried ${++round}`;
          let attempt = 0;
          // The first attempts of every write fail as drawn, the rest go through.
          proxy.reset((request) => (request.method === 'GET' ? 'none' : (failures[attempt++] ?? 'none')));
          const created = await client.records.createRecord(
            { name: label, form: {}, data: { note: label }, context: { knowledge_unit_topic_id: revision } },
            { idempotencyKey: `create-${round}` },
          );
          const listed = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
          expect((listed.body as { name: string }[]).filter((r) => r.name === label)).toHaveLength(1);
          expect((await t.api('GET', `/records/${created._id}`)).body).toEqual(created);

          attempt = 0;
          const changed = await client.records.updateRecord(
            created._id,
            { data: { note: `${label}, changed` }, version: created.version },
            { idempotencyKey: `change-${round}` },
          );
          answersLost += proxy.seen.filter(
            (x) => x.fault === 'reset-mid-body' || x.fault === 'truncate',
          ).length;
          const versions = (await t.api('GET', `/records/${created._id}/versions`)).body as unknown[];
          expect(versions).toHaveLength(2);
          expect(changed.version).toBe('2.0');
        },
      ),
      // Always among the runs: answers lost after the service wrote, not only requests before it.
      { numRuns: 10, examples: [[['reset-mid-body', 'truncate']]] },
    );
    expect(answersLost).toBeGreaterThan(0);
  });

  it('without a key a create is not retried: a lost answer is an error, never a second record', async () => {
    proxy.reset((request) => (request.method === 'POST' ? 'reset-mid-body' : 'none'));
    const before = (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body
      .count;
    await expect(
      client.records.createRecord({
        name: 'no key',
        form: {},
        data: {},
        context: { knowledge_unit_topic_id: revision },
      }),
    ).rejects.toThrow();
    const after = (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body
      .count;
    expect(after).toBe(before + 1);
    expect(proxy.seen.filter((s) => s.method === 'POST')).toHaveLength(1);
  });
});
