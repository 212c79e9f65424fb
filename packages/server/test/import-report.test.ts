import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxsClient } from '@rxs/client';
import { importRecords, openRowSource } from '@rxs/exchange';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, createNoteRecord } from './support/topics.js';

/**
 * What an import reports is what it did: a row whose record is as the file has it is unchanged,
 * also when an earlier run of the same file wrote it (created under the row's idempotency key, or
 * updated since the file was written), and a version a spreadsheet rewrote as a number ("1.0"
 * saved as "1") is the same version.
 */
const libreOffice =
  spawnSync('soffice', ['--version'], { encoding: 'utf8' }).status === 0
    ? undefined
    : 'soffice is not installed: install the Debian package libreoffice-calc-nogui, as .ci/run does.';

describe('import report', () => {
  let t: TestServer;
  let client: RxsClient;
  let dir: string;
  const count = async (revision: string) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body.count as number;
  const importFile = (revision: string, file: string) =>
    importRecords(client, openRowSource(file), { revisionId: revision });
  const csv = (name: string, lines: string[]) => {
    const file = join(dir, name);
    writeFileSync(file, `${lines.join('\r\n')}\r\n`);
    return file;
  };

  beforeAll(async () => {
    t = await startTestServer();
    client = createClient({ techdocUrl: t.url, recordsUrl: t.url, tracerUrl: t.url, apiKey: t.ownerKey });
    dir = mkdtempSync(join(tmpdir(), 'rxs-import-report-'));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a second run of the same file reports its rows unchanged: rows created under their keys, rows updated', async () => {
    const revision = await approvedTopic(t, 'Run twice');
    // Names with spaces derive no readable id: only the idempotency key tells the rows' records.
    const created = csv('new-rows.csv', [
      'name,Note',
      'first new note,one',
      'second new note,two',
      'third new note,three',
    ]);
    expect(await importFile(revision, created)).toMatchObject({ created: 3, unchanged: 0, complete: true });
    const again = await importFile(revision, created);
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 3, complete: true, wrote: false });
    expect(await count(revision)).toBe(3);

    // A row of an export changed in a spreadsheet: updated once, then as the record is.
    const record = await createNoteRecord(t, revision, 'kept note');
    const edited = csv('edited.csv', [
      '_id,name,version,Note',
      `${record._id},kept note,${record.version},edited note`,
    ]);
    expect(await importFile(revision, edited)).toMatchObject({ updated: 1, unchanged: 0, complete: true });
    const rerun = await importFile(revision, edited);
    expect(rerun.rowProblems).toEqual([]);
    expect(rerun).toMatchObject({ updated: 0, unchanged: 1, rejected: 0, complete: true, wrote: false });
  });

  it.skipIf(libreOffice !== undefined && process.env.CI !== 'true')(
    'imports a CSV of versions re-saved by LibreOffice ("1.0" saved as 1); a record changed since is still refused',
    async () => {
      if (libreOffice) throw new Error(libreOffice);
      const revision = await approvedTopic(t, 'Saved by LibreOffice');
      const alpha = await createNoteRecord(t, revision, 'alpha');
      const beta = await createNoteRecord(t, revision, 'beta');
      expect(alpha.version).toBe('1.0');
      const file = csv('versions.csv', [
        '_id,name,version,Note',
        `${alpha._id},alpha,1.0,alpha edited`,
        `${beta._id},beta,1.0,beta`,
      ]);
      // A person opens the file in LibreOffice Calc and saves it again: "1.0" is the number 1 there.
      const saved = join(dir, 'saved');
      const profile = mkdtempSync(join(tmpdir(), 'rxs-lo-profile-'));
      try {
        const run = spawnSync(
          'soffice',
          [
            `-env:UserInstallation=file://${profile}`,
            '--headless',
            // Comma, quote, UTF-8, from line 1; the ids as text (a hex id may read as a number).
            '--infilter=Text - txt - csv (StarCalc):44,34,76,1,1/2',
            '--convert-to',
            'csv:Text - txt - csv (StarCalc):44,34,76,1',
            '--outdir',
            saved,
            file,
          ],
          { encoding: 'utf8', timeout: 120_000 },
        );
        expect(run.status, run.stderr).toBe(0);
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
      const resaved = join(saved, 'versions.csv');
      // Its version cell is a number now: 1 (quoted text cells around it).
      expect(readFileSync(resaved, 'utf8').split(/\r?\n/)[1]!.split(',')[2]).toBe('1');

      const report = await importFile(revision, resaved);
      expect(report.rowProblems).toEqual([]);
      expect(report).toMatchObject({ updated: 1, unchanged: 1, rejected: 0, complete: true });

      // Beta changed in the service since the file was written: its row would overwrite that.
      const changed = await t.api('PATCH', `/records/${beta._id}`, {
        body: { data: { note: 'beta changed' } },
      });
      expect(changed.status, changed.text).toBe(200);
      const refused = await importFile(revision, resaved);
      expect(refused).toMatchObject({ rejected: 1, wrote: false, complete: false });
      expect(refused.rowProblems.map((row) => row.where)).toEqual(['line 3']);
      expect(refused.rowProblems[0]!.problems[0]).toContain(
        `record ${beta._id} changed since the file was written (version 1 in the file, 2.0 now)`,
      );
    },
    180_000,
  );
});
