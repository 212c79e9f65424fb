import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

const SCHEMA = {
  components: [
    { type: 'textfield', key: 'commit', label: 'Commit', validate: { required: true } },
    { type: 'number', key: 'score', label: 'Risk score' },
    { type: 'checkbox', key: 'passed', label: 'Gate passed' },
    {
      type: 'select',
      key: 'select_x1',
      label: 'Gate result',
      values: [
        { value: 'ok', label: 'Passed' },
        { value: 'ko', label: 'Failed' },
      ],
    },
    {
      type: 'checklist',
      key: 'areas',
      label: 'Areas',
      values: [
        { value: 'sw', label: 'Software' },
        { value: 'hw', label: 'Hardware' },
      ],
    },
    { type: 'textarea', key: 'evidence', label: 'Evidence' },
  ],
};

/** `rxs record create|update`: one record written from the command line, fields by semantic name. */
describe('rxs record', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let revision: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile]);
  const count = async () =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body.count as number;

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-record-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    revision = await approvedTopic(t, 'Release Records', { schema: SCHEMA });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a record from semantic names and form keys, values converted, and prints its id', async () => {
    const created = await rxs(
      'record',
      'create',
      '--kt',
      revision,
      '--name',
      'Release 2.4.0',
      '--set',
      'Commit=3f2a9c1',
      '--set',
      'Risk score=4',
      '--set',
      'gate passed=yes',
      '--set',
      'Gate result=Passed',
      '--set',
      'areas=Software,hw',
      '--set',
      'Evidence=https://ci.example/run/512?a=1&b=2\nsecond line = still evidence',
      '--reason',
      'CI write-back',
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    const record = (await t.api('GET', `/records/${id}`)).body;
    expect(record.name).toBe('Release 2.4.0');
    expect(record.data).toEqual({
      commit: '3f2a9c1',
      score: 4,
      passed: true,
      select_x1: 'ok',
      areas: ['sw', 'hw'],
      evidence: 'https://ci.example/run/512?a=1&b=2\nsecond line = still evidence',
    });
    expect((await t.api('GET', `/records/${id}/versions`)).body[0].reason).toBe('CI write-back');
  });

  it('a re-run with the same --idempotency-key answers the record made the first time', async () => {
    const before = await count();
    const run = () =>
      rxs(
        'record',
        'create',
        '--kt',
        revision,
        '--name',
        'Release 2.5.0',
        '--set',
        'Commit=9e8d7c6',
        '--idempotency-key',
        'ci-run-4711',
      );
    const first = await run();
    const again = await run();
    expect([first.code, again.code]).toEqual([0, 0]);
    expect(again.stdout).toBe(first.stdout);
    expect(await count()).toBe(before + 1);
  });

  it('refuses unknown names and wrong values before writing anything, saying what is valid', async () => {
    const before = await count();
    const unknown = await rxs('record', 'create', '--kt', revision, '--name', 'x', '--set', 'Severity=3');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No field is named "Severity"');
    expect(unknown.stderr).toContain('"Gate result" (select_x1)');
    expect(unknown.stderr).toContain('Nothing was written');
    const wrong = await rxs('record', 'create', '--kt', revision, '--name', 'x', '--set', 'Risk score=high');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('takes a number, not "high"');
    const option = await rxs(
      'record',
      'create',
      '--kt',
      revision,
      '--name',
      'x',
      '--set',
      'Gate result=Maybe',
    );
    expect(option.stderr).toContain('"ok" (Passed), "ko" (Failed)');
    const shape = await rxs('record', 'create', '--kt', revision, '--name', 'x', '--set', 'no equals sign');
    expect(shape.stderr).toContain('is not NAME=VALUE');
    // The server's own rules: a required field missing is its 422, with the detail.
    const missing = await rxs('record', 'create', '--kt', revision, '--name', 'x', '--set', 'Risk score=1');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/422/);
    expect(missing.stderr).toMatch(/[Cc]ommit/);
    const badKt = await rxs('record', 'create', '--kt', 'REQ-1', '--name', 'x');
    expect(badKt.stderr).toContain('is not a revision id');
    expect(await count()).toBe(before);
  });

  it('takes the data from a JSON file (with a BOM), --set winning over it', async () => {
    const file = join(dir, 'data.json');
    writeFileSync(file, `\uFEFF${JSON.stringify({ Commit: 'from file', 'Risk score': 2, areas: ['hw'] })}`);
    const created = await rxs(
      'record',
      'create',
      '--kt',
      revision,
      '--name',
      'From a file',
      '--data-file',
      file,
      '--set',
      'Risk score=3',
      '--json',
    );
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout).data).toEqual({ commit: 'from file', score: 3, areas: ['hw'] });
    writeFileSync(file, '{"Commit": ');
    const broken = await rxs('record', 'create', '--kt', revision, '--name', 'x', '--data-file', file);
    expect(broken.stderr).toContain('is not JSON');
  });

  it('updates fields by name, keeping the others, and refuses when the record changed meanwhile', async () => {
    const created = await rxs(
      'record',
      'create',
      '--kt',
      revision,
      '--name',
      'To change',
      '--set',
      'Commit=a1',
      '--json',
    );
    const record = JSON.parse(created.stdout);
    const updated = await rxs('record', 'update', record._id, '--set', 'Gate result=Failed', '--json');
    expect(updated.stderr).toBe('');
    const changed = JSON.parse(updated.stdout);
    expect(changed.data).toEqual({ commit: 'a1', select_x1: 'ko' });
    expect(changed.version).not.toBe(record.version);
    // A stale expected version: nothing written, and what to do.
    const stale = await rxs(
      'record',
      'update',
      record._id,
      '--set',
      'Commit=b2',
      '--expect-version',
      record.version,
    );
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(`is no longer at version ${record.version}`);
    expect(stale.stderr).toContain(`rxs history ${record._id}`);
    expect((await t.api('GET', `/records/${record._id}`)).body.data.commit).toBe('a1');
    const nothing = await rxs('record', 'update', record._id);
    expect(nothing.stderr).toContain('Nothing to change');
    const gone = await rxs('record', 'update', '0123456789abcdef01234567', '--set', 'Commit=x');
    expect(gone.stderr).toContain('does not exist in your tenant');
  });
});
