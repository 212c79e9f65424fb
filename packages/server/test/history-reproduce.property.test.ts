import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxsClient } from '@rxs/client';
import { createWriter, exportPartBatches, exportSourceOf, type ExportFormat } from '@rxs/exchange/export';
import { startTestServer, type TestServer } from './harness.js';

/** Timestamps have millisecond resolution: a change right after an export must be a later moment. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

const FORMATS: ExportFormat[] = ['json', 'csv', 'reqif', 'needs'];

/** The bytes of one export, as the CLI would write them. */
async function exportBytes(
  client: RxsClient,
  format: ExportFormat,
  revisionIds: string[],
  asOf?: string,
): Promise<{ bytes: Buffer; exportedAt: string }> {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  const writer = createWriter(format, out);
  let exportedAt = '';
  for await (const parts of exportPartBatches(exportSourceOf(client), {
    revisionIds,
    traces: true,
    followLatest: true,
    ...(asOf !== undefined && { asOf }),
  })) {
    for (const part of parts) {
      if (part.kind === 'header') exportedAt = part.header.exportedAt;
      await writer.write(part);
    }
  }
  await writer.close();
  return { bytes: Buffer.concat(chunks), exportedAt };
}

type Step =
  | { kind: 'create'; name: string; text: string }
  | { kind: 'update'; pick: number; text: string; reason: string }
  | { kind: 'delete'; pick: number }
  | { kind: 'restore'; pick: number }
  | { kind: 'reapprove' }
  | { kind: 'link'; from: number; to: number }
  | { kind: 'unlink'; pick: number }
  | { kind: 'export'; format: ExportFormat };

// Record text as editors write it: line breaks, quotes, markup, non-ASCII.
const text = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    'First line\nSecond line',
    'a "quoted", value',
    '<b>bold</b> & more',
    'Größe ≤ 5 mm',
    '=SUM(A1)',
  ),
);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      name: fc.string({ minLength: 1, maxLength: 12 }),
      text,
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      pick: fc.nat(),
      text,
      reason: fc.string({ maxLength: 20 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restore' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reapprove' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('link' as const), from: fc.nat(), to: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unlink' as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('export' as const), format: fc.constantFrom(...FORMATS) }),
  },
);

describe('history reproduces every export', () => {
  let t: TestServer;
  let client: RxsClient;
  let revision: string;
  let testsRevision: string;

  beforeAll(async () => {
    t = await startTestServer();
    client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
      retries: 0,
    });
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    testsRevision = t.demo.tenant.topics.verificationTests!.currentRevisionId;
  });
  afterAll(() => t.close());

  it('after random creates, changes, deletes, restores, re-approvals and traces, each export taken along the way comes back byte for byte with as_of', async () => {
    const live = [...t.demo.tenant.topics.systemRequirements!.recordIds];
    const deleted: string[] = [];
    const traces: string[] = [];
    const pick = <T>(items: T[], n: number) => (items.length === 0 ? undefined : items[n % items.length]);

    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 20 }), async (steps) => {
        const taken: { format: ExportFormat; revisionIds: string[]; bytes: Buffer; exportedAt: string }[] =
          [];
        for (const s of steps) {
          switch (s.kind) {
            case 'create': {
              const record = await client.records.createRecord({
                name: s.name,
                form: {},
                data: { name: s.text, description: s.text },
                context: { knowledge_unit_topic_id: revision },
                change_reason: 'property test',
              });
              live.push(record._id);
              break;
            }
            case 'update': {
              const id = pick(live, s.pick);
              if (id)
                await client.records.updateRecord(id, { data: { name: s.text }, change_reason: s.reason });
              break;
            }
            case 'delete': {
              const id = pick(live, s.pick);
              if (!id) break;
              await client.records.deleteRecord(id, { reason: 'property test' });
              live.splice(live.indexOf(id), 1);
              deleted.push(id);
              break;
            }
            case 'restore': {
              const id = pick(deleted, s.pick);
              if (!id) break;
              await client.records.restoreRecord(id, { reason: 'property test' });
              deleted.splice(deleted.indexOf(id), 1);
              live.push(id);
              break;
            }
            case 'reapprove': {
              const draft = await client.techdoc.openDraft(revision);
              revision = (
                await client.techdoc.approve(draft._id, { meaning: 'reviewed', reason: 'property test' })
              )._id;
              break;
            }
            case 'link': {
              const source = pick(live, s.from);
              const target = pick(live, s.to);
              if (!source || !target || source === target) break;
              try {
                const trace = await client.tracer.createTrace({
                  source: { node_id: source, node_type: 'Record' },
                  target: { node_id: target, node_type: 'Record' },
                  relation_type: 'is_related',
                });
                traces.push(trace._id);
              } catch (error) {
                // The same link twice is a 409; anything else is a failure of the test.
                if ((error as { status?: number }).status !== 409) throw error;
              }
              break;
            }
            case 'unlink': {
              const id = pick(traces, s.pick);
              if (!id) break;
              traces.splice(traces.indexOf(id), 1);
              // A trace goes with either of its records: it may be gone already.
              await client.tracer.deleteTrace(id).catch((error) => {
                if ((error as { status?: number }).status !== 404) throw error;
              });
              break;
            }
            case 'export': {
              const revisionIds = [revision, testsRevision];
              taken.push({
                format: s.format,
                revisionIds,
                ...(await exportBytes(client, s.format, revisionIds)),
              });
              await tick();
              break;
            }
          }
        }
        for (const original of taken) {
          const again = await exportBytes(client, original.format, original.revisionIds, original.exportedAt);
          expect(again.exportedAt).toBe(original.exportedAt);
          expect(again.bytes.toString('utf8'), `${original.format} as of ${original.exportedAt}`).toBe(
            original.bytes.toString('utf8'),
          );
        }
      }),
      { numRuns: 12, seed: 1311 },
    );
  }, 120_000);
});
