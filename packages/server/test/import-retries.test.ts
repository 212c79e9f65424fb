import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxsClient } from '@rxs/client';
import { importRecords, openRowSource, type RowSource, type SourceRow } from '@rxs/exchange';
import { startTestServer, type TestServer } from './harness.js';
import { FaultProxy, type Fault } from './reliability/support/fault-proxy.js';
import { approvedTopic } from './support/topics.js';

/**
 * `rxs import` through a proxy that loses requests and answers: each row's write carries an
 * idempotency key made from the row, so neither the client's retries nor a second run of the
 * whole import after a crash ever create a record twice, even for rows with no id of their own.
 */
describe('import retried through faults', () => {
  let t: TestServer;
  let proxy: FaultProxy;
  let dir: string;
  const clientOf = (url: string, retries: number): RxsClient =>
    createClient({
      techdocUrl: url,
      recordsUrl: url,
      tracerUrl: url,
      apiKey: t.ownerKey,
      retries,
      retryBaseMs: 1,
      retryCapMs: 5,
    });
  const count = async (revision: string) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body.count as number;
  /** Rows whose names are no ids (spaces): only the idempotency key tells a retry from a new row. */
  const csvOf = (rows: number, label: string) => {
    const file = join(dir, `${label}.csv`);
    const lines = ['name,Note'];
    for (let i = 1; i <= rows; i++) lines.push(`${label} note ${i},"text ${i}, with a comma"`);
    writeFileSync(file, `${lines.join('\r\n')}\r\n`);
    return file;
  };

  beforeAll(async () => {
    t = await startTestServer();
    proxy = new FaultProxy(t.url);
    await proxy.listen();
    dir = mkdtempSync(join(tmpdir(), 'rxs-import-retries-'));
  });
  afterAll(async () => {
    await proxy?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('property: however the writes fail at first, every row makes exactly one record', async () => {
    const faults: Fault[] = ['reset', '500', '503', 'reset-mid-body', 'truncate'];
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Fault>(...faults, 'none'), { minLength: 4, maxLength: 12 }),
        async (failures) => {
          const label = `round ${++round}`;
          const revision = await approvedTopic(t, label);
          let write = 0;
          // The first attempts of the writes fail as drawn (a lost answer too: the record exists), then all go through.
          proxy.reset((request) => (request.method === 'POST' ? (failures[write++] ?? 'none') : 'none'));
          // As many retries as faults drawn: with two rows under way, one may meet all of them.
          const report = await importRecords(clientOf(proxy.url, 12), openRowSource(csvOf(6, label)), {
            revisionId: revision,
            concurrency: 2,
          });
          expect(report.problems).toEqual([]);
          expect(report).toMatchObject({ rows: 6, created: 6, complete: true });
          expect(await count(revision)).toBe(6);
        },
      ),
      { numRuns: 8 },
    );
    // The injected 503s ask for a second's pause (Retry-After: 1), which the client honours.
  }, 180_000);

  it("sends each row's key with the row's place in the file first: one import's keys ascend", async () => {
    const rows = 1500;
    const client = clientOf(t.url, 1);
    const keys: string[] = [];
    const write = client.records.bulkWrite.bind(client.records);
    client.records.bulkWrite = (items, options) => {
      for (const item of items) keys.push(item.idempotency_key ?? '');
      return write(items, options);
    };
    const report = await importRecords(client, openRowSource(csvOf(rows, 'keys')), {
      revisionId: await approvedTopic(t, 'Keys in file order'),
    });
    expect(report).toMatchObject({ created: rows, complete: true });
    expect(keys).toHaveLength(rows);
    keys.forEach((key, i) =>
      expect(key).toMatch(new RegExp(`^rxs-import-${String(i + 1).padStart(9, '0')}-[0-9a-f]{40}$`)),
    );
    expect([...keys].sort()).toEqual(keys);
  });

  it('an import that dies half way, run again, completes without a duplicate', async () => {
    const revision = await approvedTopic(t, 'Crashed import');
    // More rows than one batch (1,000) holds: the first batch lands, the second finds the service gone.
    const file = csvOf(1700, 'crash');
    let writes = 0;
    // After the probe and one batch the service is gone for good: retries give up and the import stops.
    proxy.reset((request) => (request.method === 'POST' && ++writes > 2 ? 'reset' : 'none'));
    const first = await importRecords(clientOf(proxy.url, 1), openRowSource(file), {
      revisionId: revision,
      concurrency: 1,
    });
    expect(first.complete).toBe(false);
    expect(first.problems.join('\n')).toMatch(/stopped after 1000 writes.*Running it again is safe/s);
    expect(await count(revision)).toBe(1000);

    proxy.reset(() => 'none');
    const second = await importRecords(clientOf(proxy.url, 1), openRowSource(file), { revisionId: revision });
    expect(second.complete).toBe(true);
    expect(await count(revision)).toBe(1700);
    // A third run (a day's cron job, the same file): still 1,700.
    await importRecords(clientOf(proxy.url, 1), openRowSource(file), { revisionId: revision });
    expect(await count(revision)).toBe(1700);
  });

  it('a CSV saved again between its first read and its check is refused, and nothing is written', async () => {
    const revision = await approvedTopic(t, 'saved again');
    // A topic with a record: the check reads the rows again (into an empty topic a CSV is read once).
    await importRecords(clientOf(t.url, 1), openRowSource(csvOf(1, 'saved again first')), {
      revisionId: revision,
    });
    const file = csvOf(1500, 'saved again');
    const source = openRowSource(file);
    // The check reads a CSV from the file again: an editor saving it after the first read changes it.
    const firstRead = source.rowChunks!.bind(source);
    source.rowChunks = async function* () {
      yield* firstRead();
      appendFileSync(file, 'one more,"a row the first read never saw"\r\n');
    };
    await expect(importRecords(clientOf(t.url, 1), source, { revisionId: revision })).rejects.toThrow(
      /saved again\.csv changed while it was imported .*Import it again once no program is writing it\./,
    );
    expect(await count(revision)).toBe(1);
    // Imported again as it is now: every row, the new one too.
    const report = await importRecords(clientOf(t.url, 1), openRowSource(file), { revisionId: revision });
    expect(report).toMatchObject({ rows: 1501, created: 1501, complete: true });
  });

  it('a file whose second read gives other rows than its first is refused, and nothing is written', async () => {
    const revision = await approvedTopic(t, 'fewer rows');
    await importRecords(clientOf(t.url, 1), openRowSource(csvOf(1, 'fewer rows first')), {
      revisionId: revision,
    });
    const rowOf = (i: number): SourceRow => ({
      where: `line ${i + 1}`,
      facts: { name: `fewer rows ${i}` },
      values: new Map([['Note', { text: `text ${i}` }]]),
      problems: [],
    });
    const source: RowSource = {
      format: 'csv',
      notes: [],
      async *rows() {
        for (let i = 1; i <= 3; i++) yield rowOf(i);
      },
      async *rowsAgain() {
        yield [rowOf(1), rowOf(2)];
      },
    };
    await expect(importRecords(clientOf(t.url, 1), source, { revisionId: revision })).rejects.toThrow(
      'The file gave 3 rows when it was first read and 2 when it was read again to be checked',
    );
    expect(await count(revision)).toBe(1);
  });
});
