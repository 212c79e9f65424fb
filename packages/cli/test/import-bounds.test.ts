import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hugeSharedString, writeZip } from '../../exchange/test/support/bounded-uploads.js';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic, NOTE_SCORE_SCHEMA as SCHEMA } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

/**
 * `rxs import` of a hostile file: refused with the limit it went past, in one line on
 * stderr and exit code 1, after reading no more of it than the limit.
 */
describe('rxs import: bounded reading', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let revision: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet']);

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-import-bounds-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    revision = await approvedTopic(t, 'Import bounds', { schema: SCHEMA });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a CSV header of 200,000 columns and a workbook of one 300 MB shared string, in one line', async () => {
    const wide = join(dir, 'wide.csv');
    writeFileSync(wide, `${Array.from({ length: 200_000 }, (_, i) => `c${i}`).join(',')}\r\nx\r\n`);
    const columns = await rxs('import', '--kt', revision, wide, '--dry-run');
    expect(columns.code).toBe(1);
    expect(columns.stderr.trim().split('\n')).toHaveLength(1);
    expect(columns.stderr).toContain('line 1 has more than 5,000 columns');
    expect(columns.stderr).toContain('Nothing was written.');

    const workbook = join(dir, 'huge-string.xlsx');
    await writeZip(workbook, hugeSharedString(300 * 1024 * 1024));
    const cell = await rxs('import', '--kt', revision, workbook, '--dry-run');
    expect(cell.code).toBe(1);
    expect(cell.stderr.trim().split('\n')).toHaveLength(1);
    expect(cell.stderr).toContain('more than 5 MiB of text, the most one cell may hold');
  }, 60_000);
});
