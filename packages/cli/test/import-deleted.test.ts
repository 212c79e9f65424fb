import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

/**
 * `rxs import` run again after someone deleted a record an earlier run created: the row is reported
 * as not written (exit 1), never counted as created; with --recreate-deleted it is created anew
 * once, and a further run creates nothing more.
 */
describe('rxs import of rows whose records were deleted since', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet']);
  const records = async (revision: string) =>
    (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body as {
      _id: string;
      name: string;
    }[];

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-import-deleted-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports the row, exits 1, and creates it anew only with --recreate-deleted', async () => {
    const revision = await approvedTopic(t, 'Deleted since import');
    const file = join(dir, 'notes.csv');
    writeFileSync(file, 'name,Note\r\nAlpha,first\r\nBeta,second\r\n');

    const first = await rxs('import', '--kt', revision, file, '--json');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ created: 2, complete: true });
    const alpha = (await records(revision)).find((r) => r.name === 'Alpha')!;
    const editor = t.demo.tenant.users.editor;
    const deleted = await t.api('DELETE', `/records/${alpha._id}?change_reason=withdrawn`, {
      key: editor.apiKey,
    });
    expect(deleted.status).toBe(204);

    // Run again: Alpha is reported as deleted since, not counted as created.
    const again = await rxs('import', '--kt', revision, file, '--json');
    expect(again.code, again.stderr).toBe(1);
    const report = JSON.parse(again.stdout);
    expect(report).toMatchObject({ complete: false, failed: 1, deletedSince: 1, recreated: 0 });
    expect(report.created + report.unchanged).toBe(1);
    expect(report.rowProblems).toHaveLength(1);
    expect(report.rowProblems[0].where).toBe('line 2');
    expect(report.rowProblems[0].phase).toBe('write');
    const problem = report.rowProblems[0].problems[0] as string;
    expect(problem).toContain('deleted since');
    expect(problem).toContain(alpha._id);
    expect(problem).toContain(editor.email);
    expect(problem).toContain('withdrawn');
    expect((await records(revision)).map((r) => r.name)).toEqual(['Beta']);

    // The same for a person: what happened and what to do.
    const text = await rxs('import', '--kt', revision, file);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('1 refused by the service (1 deleted since an earlier import');
    expect(text.stdout).toContain('--recreate-deleted');
    expect(text.stdout).not.toMatch(/^ {2}2 created/m);

    // Asked to, the import creates it anew, once.
    const recreated = await rxs('import', '--kt', revision, file, '--json', '--recreate-deleted');
    expect(recreated.code, recreated.stdout + recreated.stderr).toBe(0);
    const recreatedReport = JSON.parse(recreated.stdout);
    expect(recreatedReport).toMatchObject({ complete: true, recreated: 1, deletedSince: 0, failed: 0 });
    expect(recreatedReport.notes.join('\n')).toContain(
      'line 2: the record an earlier import created had been deleted since',
    );
    const now = await records(revision);
    expect(now.map((r) => r.name).sort()).toEqual(['Alpha', 'Beta']);
    expect(now.find((r) => r.name === 'Alpha')!._id).not.toBe(alpha._id);

    const third = await rxs('import', '--kt', revision, file, '--json', '--recreate-deleted');
    expect(third.code, third.stdout + third.stderr).toBe(0);
    expect(JSON.parse(third.stdout)).toMatchObject({ complete: true });
    expect((await records(revision)).map((r) => r._id).sort()).toEqual(now.map((r) => r._id).sort());
  });
});
