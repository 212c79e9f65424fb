import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxsClient } from '@rxs/client';
import { importRecords, openRowSource, type ImportClient } from '@rxs/exchange';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';

/**
 * The records an import updates are found by one pass over the topic's listing that keeps only
 * their ids; each chunk of rows then fetches the records it names (`id__in`, a few hundred a
 * request, at most 16 MiB of them), so a file updating a whole large topic never holds the topic,
 * nor short rows naming large records more than a few of them, in memory.
 */
describe('import: the records the rows name, fetched a chunk at a time', () => {
  let t: TestServer;
  let dir: string;
  let client: RxsClient;

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-import-matching-'));
    client = createClient({ techdocUrl: t.url, recordsUrl: t.url, tracerUrl: t.url, apiKey: t.ownerKey });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const count = async (revision: string) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body.count as number;
  /** Rows `from`..`to` with readable ids (`RM_1 ...`), each note saying `note`. */
  const csvOf = (label: string, from: number, to: number, note: string) => {
    const file = join(dir, `${label}.csv`);
    const lines = ['name,Note'];
    for (let i = from; i <= to; i++) lines.push(`RM_${i} ${label},"${note} ${i}"`);
    writeFileSync(file, `${lines.join('\r\n')}\r\n`);
    return file;
  };
  /** The client, counting the records each fetch by id asks for. */
  const counting = () => {
    const fetches: number[] = [];
    const wrapped: ImportClient = {
      techdoc: client.techdoc,
      records: {
        ...client.records,
        listRecords: (query, options) => {
          if (query?.id__in !== undefined) fetches.push(query.id__in.split(',').length);
          return client.records.listRecords(query, options);
        },
      },
    };
    return { wrapped, fetches };
  };

  it('fetches only the records the file names, a few hundred a request', async () => {
    const revision = await approvedTopic(t, 'matched in chunks');
    await importRecords(client, openRowSource(csvOf('matched in chunks', 1, 3000, 'first')), {
      revisionId: revision,
    });
    expect(await count(revision)).toBe(3000);

    // A newer file: rows 1001..2500 changed, the others of the topic not in it.
    const { wrapped, fetches } = counting();
    const report = await importRecords(
      wrapped,
      openRowSource(csvOf('matched in chunks', 1001, 2500, 'second')),
      { revisionId: revision, previewRows: 1 },
    );
    expect(report).toMatchObject({ rows: 1500, created: 0, updated: 1500, rejected: 0, complete: true });
    expect(report.preview[0]).toMatchObject({ where: 'line 2', action: 'update', readableId: 'RM_1001' });
    expect(fetches.reduce((sum, n) => sum + n, 0)).toBe(1500);
    expect(Math.max(...fetches)).toBeLessThanOrEqual(200);
    expect(await count(revision)).toBe(3000);

    // The same file again: every row unchanged, nothing written.
    const again = await importRecords(
      client,
      openRowSource(csvOf('matched in chunks', 1001, 2500, 'second')),
      {
        revisionId: revision,
      },
    );
    expect(again).toMatchObject({ rows: 1500, updated: 0, unchanged: 1500, wrote: false });
  });

  it('fetches large records a few at a time: what a group holds is bounded in bytes, not rows', async () => {
    const revision = await approvedTopic(t, 'large records');
    // Short rows naming records of 1 MiB each: a chunk of rows names all 40 (40 MiB).
    const large = 'x'.repeat(1024 * 1024);
    await importRecords(client, openRowSource(csvOf('large records', 1, 40, large)), {
      revisionId: revision,
    });
    expect(await count(revision)).toBe(40);

    const { wrapped, fetches } = counting();
    const report = await importRecords(wrapped, openRowSource(csvOf('large records', 1, 40, 'short')), {
      revisionId: revision,
      dryRun: true,
    });
    expect(report).toMatchObject({ rows: 40, planned: { created: 0, updated: 40 }, rejected: 0 });
    // At most 16 MiB of records a group: 15 of these, each a little over 1 MiB.
    expect(fetches.reduce((sum, n) => sum + n, 0)).toBe(40);
    expect(Math.max(...fetches)).toBe(15);
    expect(fetches.length).toBe(3);
  }, 60_000);

  it('treats a record deleted after the topic was listed as gone', async () => {
    const revision = await approvedTopic(t, 'deleted meanwhile');
    await importRecords(client, openRowSource(csvOf('deleted meanwhile', 1, 20, 'first')), {
      revisionId: revision,
    });
    const listed = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}&limit=100`);
    const seventh = (listed.body as { _id: string; name: string }[]).find((r) => r.name.startsWith('RM_7 '))!;
    // Deleted between the listing and the fetch of its chunk.
    let deleted = false;
    const racing: ImportClient = {
      techdoc: client.techdoc,
      records: {
        ...client.records,
        listRecords: (query, options) => {
          if (query?.id__in === undefined || deleted) return client.records.listRecords(query, options);
          deleted = true;
          return (async function* () {
            const gone = await t.api('DELETE', `/records/${seventh._id}`);
            expect(gone.status, gone.text).toBe(204);
            yield* client.records.listRecords(query, options);
          })();
        },
      },
    };
    const report = await importRecords(racing, openRowSource(csvOf('deleted meanwhile', 1, 20, 'second')), {
      revisionId: revision,
      dryRun: true,
    });
    expect(deleted).toBe(true);
    expect(report).toMatchObject({ rows: 20, planned: { created: 1, updated: 19 }, rejected: 0 });
  });
});
