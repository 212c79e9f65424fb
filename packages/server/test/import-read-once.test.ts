import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxsClient } from '@rxs/client';
import {
  importRecords,
  openRowSource,
  type ImportClient,
  type ImportProgress,
  type RowSource,
} from '@rxs/exchange';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';

/**
 * A CSV imported into an empty topic is read once: each row is checked as it is read, since no row
 * can name a record of the topic. Whatever breaks that (a record twice in the file, a row with an
 * `_id`, a record the topic gained meanwhile) sends the import back to the check after the
 * matching, with the file read again: the report is the same as if the file had been read twice.
 */
describe('import: a CSV read once into an empty topic', () => {
  let t: TestServer;
  let dir: string;
  let client: RxsClient;

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-import-read-once-'));
    client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
    });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const count = async (revision: string) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body.count as number;
  /** A CSV of rows with readable ids (`RO_1 ...`), and any lines given after them. */
  const csvOf = (label: string, rows: number, header = 'name,Note', more: string[] = []) => {
    const file = join(dir, `${label}.csv`);
    const lines = [header];
    for (let i = 1; i <= rows; i++) lines.push(`RO_${i} ${label},"text ${i}, with a comma"`);
    writeFileSync(file, `${[...lines, ...more].join('\r\n')}\r\n`);
    return file;
  };
  /** The source of a file, counting how often the check reads its rows again. */
  const counted = (file: string) => {
    const source: RowSource = openRowSource(file);
    const again = source.rowsAgain!.bind(source);
    const reads = { again: 0 };
    source.rowsAgain = () => {
      reads.again++;
      return again();
    };
    return { source, reads };
  };

  it('reads the file once into an empty topic, and again to check a re-import', async () => {
    const revision = await approvedTopic(t, 'read once');
    const file = csvOf('read once', 2500);
    const first = counted(file);
    const phases: string[] = [];
    const onProgress = ({ phase, total }: ImportProgress) =>
      phases.push(`${phase}${total ? ` of ${total}` : ''}`);
    const report = await importRecords(client, first.source, {
      revisionId: revision,
      previewRows: 2,
      onProgress,
    });
    expect(first.reads.again).toBe(0);
    // The rows are checked as they are read: said so as it goes.
    expect(new Set(phases)).toEqual(new Set(['checking', 'writing of 2500']));
    expect(report).toMatchObject({ rows: 2500, created: 2500, rejected: 0, complete: true });
    expect(report.preview.map((row) => [row.where, row.action, row.readableId])).toEqual([
      ['line 2', 'create', 'RO_1'],
      ['line 3', 'create', 'RO_2'],
    ]);
    expect(await count(revision)).toBe(2500);

    // The topic has the records now: the rows are matched to them, then checked.
    const second = counted(file);
    phases.length = 0;
    const again = await importRecords(client, second.source, { revisionId: revision, onProgress });
    expect(second.reads.again).toBe(1);
    expect(new Set(phases)).toEqual(new Set(['reading', 'matching', 'checking of 2500']));
    expect(again).toMatchObject({ rows: 2500, created: 0, updated: 0, unchanged: 2500, complete: true });
    expect(await count(revision)).toBe(2500);
  });

  it('refuses both rows of a record that is twice in the file, the first one too', async () => {
    const revision = await approvedTopic(t, 'twice late');
    // Row RO_5 again as the file's last row: the first one was checked long before.
    const file = csvOf('twice late', 200, 'name,Note', ['RO_5 twice late again,"the second RO_5"']);
    const dry = counted(file);
    const report = await importRecords(client, dry.source, { revisionId: revision, dryRun: true });
    expect(dry.reads.again).toBe(1);
    expect(report).toMatchObject({ rows: 201, planned: { created: 199 }, rejected: 2, complete: false });
    expect(report.rowProblems.map((row) => [row.where, row.readableId])).toEqual([
      ['line 6', 'RO_5'],
      ['line 202', 'RO_5'],
    ]);
    expect(report.rowProblems[0]!.problems.join(' ')).toMatch(
      /more than once \(readable id RO_5 is in 2 rows\)/,
    );

    // All or nothing: nothing written.
    const real = await importRecords(client, openRowSource(file), { revisionId: revision });
    expect(real).toMatchObject({ rejected: 2, created: 0, wrote: false });
    expect(await count(revision)).toBe(0);
  });

  it('reads the file again for a row with an _id, and says why it cannot update', async () => {
    const revision = await approvedTopic(t, 'with an id');
    const file = join(dir, 'with an id.csv');
    writeFileSync(file, '_id,name,Note\r\n,RO_1 new,one\r\n0123456789abcdef01234567,RO_2 old,two\r\n');
    const dry = counted(file);
    const report = await importRecords(client, dry.source, { revisionId: revision, dryRun: true });
    expect(dry.reads.again).toBe(1);
    expect(report).toMatchObject({ rows: 2, planned: { created: 1 }, rejected: 1 });
    expect(report.rowProblems[0]!.problems.join(' ')).toMatch(
      /no record has _id 0123456789abcdef01234567 in your tenant/,
    );
  });

  it('matches a record the topic gained after it was found empty, instead of creating it twice', async () => {
    const revision = await approvedTopic(t, 'gained meanwhile');
    const file = csvOf('gained meanwhile', 50);
    let created = false;
    // Another user's write lands between the import's look at the topic and its matching.
    const racing: ImportClient = {
      techdoc: client.techdoc,
      records: {
        ...client.records,
        listRecords: (query, options) => {
          if (query?.limit !== 1 || created) return client.records.listRecords(query, options);
          created = true;
          return (async function* () {
            const made = await t.api('POST', '/records/', {
              body: {
                name: 'RO_7 gained meanwhile',
                form: {},
                data: { note: 'written by someone else' },
                context: { knowledge_unit_topic_id: revision },
              },
            });
            expect(made.status, made.text).toBe(201);
          })();
        },
      },
    };
    const { source, reads } = counted(file);
    const report = await importRecords(racing, source, { revisionId: revision });
    expect(created).toBe(true);
    expect(reads.again).toBe(1);
    expect(report).toMatchObject({ rows: 50, created: 49, updated: 1, complete: true });
    expect(await count(revision)).toBe(50);
  });

  it("tells a readable id from a source id row's fallback, whatever text the readable id holds", async () => {
    const revision = await approvedTopic(t, 'kinds apart');
    // Row 3 is found by its source id, and by its readable id X only as a fallback: row 2's readable
    // id reads like the words that fallback is counted under. Two different records.
    const file = join(dir, 'kinds apart.csv');
    writeFileSync(file, 'name,readable_id,source_id,Note\r\nA,of a source id X,,one\r\nB,X,S1,two\r\n');
    // Checked as read (an empty topic), and after the matching (a topic with another record).
    const other = await approvedTopic(t, 'kinds apart, with a record');
    await importRecords(client, openRowSource(csvOf('kinds apart seed', 1)), { revisionId: other });
    for (const topic of [revision, other])
      for (const dryRun of [true, false]) {
        const report = await importRecords(client, openRowSource(file), { revisionId: topic, dryRun });
        expect(report.rowProblems).toEqual([]);
        expect(report).toMatchObject({ rows: 2, created: 2, rejected: 0 });
      }
    expect(await count(revision)).toBe(2);
    expect(await count(other)).toBe(3);
  });
});
