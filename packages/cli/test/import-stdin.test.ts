import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

const samples = new URL('../../../reference/samples/', import.meta.url);
const sampleTopic = JSON.parse(readFileSync(new URL('kt_system_requirements.json', samples), 'utf8'));

/**
 * `rxs import -` and pipes: the import reads a file more than once, so standard input, a named
 * pipe or a process substitution is copied to a scratch file first (removed afterwards), and the
 * report and messages name the input as given.
 */
describe('rxs import from standard input and pipes', () => {
  let t: TestServer;
  let dir: string;
  let scratch: string;
  let keyFile: string;
  let topic: string;
  const rxs = (args: string[], input?: string | Buffer) =>
    runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet'], {
      input,
      // The copies go here, to see that none is left behind.
      env: { TMPDIR: scratch },
    });
  const CSV = [
    'name,Name,Description,Type,Priority',
    'Piped 1,REQ_901 — piped,"First line\nsecond line, with a comma",functional,high',
    'Piped 2,REQ_902 — piped too,"Quoted ""text""",regulatory,low',
    '',
  ].join('\r\n');

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-import-stdin-'));
    scratch = join(dir, 'tmp');
    mkdirSync(scratch);
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    topic = await approvedTopic(t, 'Piped requirements', { schema: sampleTopic.knowledge_topic_schema });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports a CSV from standard input, and again unchanged; no copy left behind', async () => {
    const first = await rxs(['import', '--kt', topic, '-', '--format', 'csv'], CSV);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('Import of standard input (csv) into "Piped requirements"');
    expect(first.stdout).toContain('2 created');
    const again = await rxs(['import', '--kt', topic, '-', '--format', 'csv', '--json'], CSV);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 2, created: 0, unchanged: 2 });
    const listed = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}`);
    const byName = Object.fromEntries(
      (listed.body as { name: string; data: Record<string, unknown> }[]).map((r) => [r.name, r.data]),
    );
    expect(byName['Piped 1']).toMatchObject({ description: 'First line\nsecond line, with a comma' });
    expect(byName['Piped 2']).toMatchObject({ description: 'Quoted "text"', type: 'regulatory' });
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('asks for --format when standard input has no name to tell it by, and names it in file errors', async () => {
    const unnamed = await rxs(['import', '--kt', topic, '-', '--dry-run'], CSV);
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain(
      'Cannot tell the format of standard input from a file name: say it with --format',
    );
    const empty = await rxs(['import', '--kt', topic, '-', '--format', 'csv', '--dry-run'], '');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('standard input is empty: a CSV import needs a header row');
    expect(empty.stderr).not.toContain(scratch);
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('reads a named pipe as the file its name says', async () => {
    const fifo = join(dir, 'requirements.csv');
    execFileSync('mkfifo', [fifo]);
    // A writer on the other end, as `mkfifo` pipelines and process substitutions have.
    const writer = spawn('sh', ['-c', 'printf "%s" "$CSV" > "$FIFO"'], {
      env: { ...process.env, CSV, FIFO: fifo },
      stdio: 'ignore',
    });
    const piped = await rxs(['import', '--kt', topic, fifo, '--dry-run']);
    writer.kill();
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toContain(`Dry run: import of ${fifo} (csv)`);
    expect(piped.stdout).toContain('0 would be created, 0 would be updated, 2 unchanged');
  });

  it('takes a ReqIF archive from standard input, told from a ReqIF file by its bytes', async () => {
    const archive = join(dir, 'piped.reqifz');
    const exported = await rxs(['export', '--kt', topic, '--format', 'reqifz', '--out', archive]);
    expect(exported.code, exported.stderr).toBe(0);
    const checked = await rxs(
      ['import', '--kt', topic, '-', '--format', 'reqif', '--dry-run', '--json'],
      readFileSync(archive),
    );
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({ rows: 2, unchanged: 2, rejected: 0 });
  });
});
