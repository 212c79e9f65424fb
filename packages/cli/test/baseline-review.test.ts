import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { runCli } from './run-cli.js';

/** Baseline review from the command line, against the real server: propose, sign, refuse, show. */
describe('rxs baseline propose, sign, refuse and show', () => {
  let t: TestServer;
  let dir: string;
  let revision: string;
  const keyFiles: Record<string, string> = {};
  const rxs = (who: 'owner' | 'editor', command: string[], input?: string) =>
    runCli([...command, '--url', t.url, '--api-key-file', keyFiles[who]!], { input });

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-baseline-review-'));
    for (const who of ['owner', 'editor'] as const) {
      keyFiles[who] = join(dir, `${who}.key`);
      writeFileSync(keyFiles[who], `${t.demo.tenant.users[who].apiKey}\n`);
    }
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('proposes with signers, signs with the password on standard input, and shows who signed', async () => {
    const { owner, editor } = t.demo.tenant.users;
    const proposed = await rxs('owner', [
      'baseline',
      'propose',
      'v1.0',
      '--kt',
      revision,
      '--signer',
      owner.email,
      '--reviewer',
      editor.email,
    ]);
    expect(proposed.code, proposed.stderr).toBe(0);
    expect(proposed.stdout).toContain('status:      proposed: waiting for 2 of 2 signature(s)');
    expect(proposed.stdout).toContain(`${editor.email} (reviewed): not signed yet`);

    const noPassword = await rxs('editor', ['baseline', 'sign', 'v1.0', '--meaning', 'reviewed']);
    expect(noPassword.code).toBe(1);
    expect(noPassword.stderr).toMatch(/--password-stdin/);
    const wrong = await rxs(
      'editor',
      ['baseline', 'sign', 'v1.0', '--meaning', 'reviewed', '--password-stdin'],
      'not my password\n',
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/password is wrong, so nothing was signed/);

    const reviewed = await rxs(
      'editor',
      ['baseline', 'sign', 'v1.0', '--meaning', 'reviewed', '--password-stdin', '--reason', 'minutes 12'],
      `${editor.password}\n`,
    );
    expect(reviewed.code, reviewed.stderr).toBe(0);
    expect(reviewed.stdout).toMatch(/editor@\S+ \(reviewed\): signed reviewed at \S+ \(minutes 12\)/);

    const approved = await rxs(
      'owner',
      ['baseline', 'sign', 'v1.0', '--meaning', 'approved', '--password-stdin'],
      `${owner.password}\n`,
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(/status: {6}released at \S+/);

    const twice = await rxs(
      'owner',
      ['baseline', 'sign', 'v1.0', '--meaning', 'approved', '--password-stdin'],
      `${owner.password}\n`,
    );
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/never changes/);

    const json = await rxs('owner', ['baseline', 'show', 'v1.0', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const shown = JSON.parse(json.stdout);
    expect(shown.status).toBe('released');
    expect(shown.signatures.map((s: any) => [s.email, s.meaning])).toEqual([
      [editor.email, 'reviewed'],
      [owner.email, 'approved'],
    ]);
  });

  it('refuses with a reason, which ends the proposal; a new one supersedes it', async () => {
    const { owner } = t.demo.tenant.users;
    const proposed = await rxs('owner', [
      'baseline',
      'propose',
      'v2.0',
      '--kt',
      revision,
      '--signer',
      owner.email,
    ]);
    expect(proposed.code, proposed.stderr).toBe(0);
    const noSigners = await rxs('owner', ['baseline', 'propose', 'v2.x', '--kt', revision]);
    expect(noSigners.code).toBe(1);
    expect(noSigners.stderr).toMatch(/--signer/);

    const refused = await rxs(
      'owner',
      ['baseline', 'refuse', 'v2.0', '--reason', 'risk file not updated\n\u001b[2J', '--password-stdin'],
      owner.password,
    );
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.stdout).toContain(`status:      refused by ${owner.email}`);
    // What the refuser typed shows as text, on one line.
    expect(refused.stdout).toContain('refused at');
    expect(refused.stdout).toContain('risk file not updated \\u001b[2J');

    const next = await rxs('owner', [
      'baseline',
      'propose',
      'v2.1',
      '--kt',
      revision,
      '--signer',
      owner.email,
      '--supersedes',
      'v2.0',
      '--json',
    ]);
    expect(next.code, next.stderr).toBe(0);
    const v20 = JSON.parse((await rxs('owner', ['baseline', 'show', 'v2.0', '--json'])).stdout);
    expect(JSON.parse(next.stdout)).toMatchObject({ status: 'proposed', supersedes: v20._id });

    const list = await rxs('owner', ['baseline', 'list']);
    expect(list.stdout).toMatch(/^v1\.0 .*1 topic\(s\) {2}$/m);
    expect(list.stdout).toMatch(/^v2\.0 .* \(refused\)$/m);
    expect(list.stdout).toMatch(/^v2\.1 .* \(proposed\)$/m);
  });
});
