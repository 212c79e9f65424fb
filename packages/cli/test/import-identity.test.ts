import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

/** `rxs import --key` and `--remove-missing`: a source's newer file updates the records it keeps. */
describe('rxs import by source identity', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet']);
  const csv = (name: string, lines: string[]) => {
    const file = join(dir, name);
    writeFileSync(file, `${lines.join('\r\n')}\r\n`);
    return file;
  };
  const sourceIds = async (revision: string) =>
    (
      (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body as {
        context: { global_element_id?: string };
      }[]
    )
      .map((record) => record.context.global_element_id)
      .sort();

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-cli-identity-'));
    keyFile = join(dir, 'key');
    writeFileSync(keyFile, t.ownerKey, { mode: 0o600 });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a CSV with --key imported twice never duplicates; a newer one reports, then with --remove-missing deletes, what it lost', async () => {
    const revision = await approvedTopic(t, 'Tickets');
    const v1 = csv('tickets.csv', ['Ticket,name,Note', 'T-1,one,first', 'T-2,two,second', 'T-3,three,third']);
    const first = await rxs('import', '--kt', revision, v1, '--key', 'Ticket');
    expect(first.code, first.stderr + first.stdout).toBe(0);
    expect(first.stdout).toContain('3 created, 0 updated, 0 unchanged, 0 rejected.');
    const again = await rxs('import', '--kt', revision, v1, '--key', 'Ticket');
    expect(again.stdout).toContain('0 created, 0 updated, 3 unchanged, 0 rejected.');
    expect(await sourceIds(revision)).toEqual(['T-1', 'T-2', 'T-3']);

    const v2 = csv('tickets-2.csv', ['Ticket,name,Note', 'T-1,one,first', 'T-3,three,third edited']);
    const kept = await rxs('import', '--kt', revision, v2, '--key', 'Ticket');
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain(
      '0 created, 1 updated, 1 unchanged, 0 rejected; 1 no longer in the file, kept.',
    );
    expect(kept.stdout).toContain(
      'note: 1 record of "Tickets" has a source id the file no longer has: "two" (T-2). It is kept; delete it with --remove-missing.',
    );
    const dryRun = await rxs(
      'import',
      '--kt',
      revision,
      v2,
      '--key',
      'Ticket',
      '--remove-missing',
      '--dry-run',
    );
    expect(dryRun.stdout).toContain('1 no longer in the file, 1 would be deleted.');
    expect(await sourceIds(revision)).toEqual(['T-1', 'T-2', 'T-3']);
    const removed = await rxs(
      'import',
      '--kt',
      revision,
      v2,
      '--key',
      'Ticket',
      '--remove-missing',
      '--json',
    );
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({
      unchanged: 2,
      missing: 1,
      removed: 1,
      complete: true,
    });
    expect(await sourceIds(revision)).toEqual(['T-1', 'T-3']);
  });
});
