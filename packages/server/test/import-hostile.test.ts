import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin } from '../../cli/test/run-cli.js';
import {
  billionLaughs,
  deepXhtml,
  externalEntity,
  hugeAttributeValue,
  manyAttributeDefinitions,
  reqifzBomb,
  writeChunks,
} from '../../exchange/test/support/hostile-reqif.js';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';
import { webClient, type WebClient } from './web-client.js';

const MiB = 1024 * 1024;
/** How long one `rxs import` of a hostile file may take before it is killed (and the test fails). */
const CLI_TIMEOUT_MS = 30_000;

/**
 * Hostile ReqIF files where they arrive: `rxs import` refuses each with one line naming what is
 * wrong, exit code 1 and nothing written, within a heap of 256 MB; the web app answers each, and
 * the same bytes under a spreadsheet's name, with 422 by the reader they reach (413 only for an upload
 * past the size limit), never 500. No
 * answer or message holds the text of a file an entity names, and the server stays responsive.
 */
describe('hostile ReqIF files: rxs import and the web app refuse them, in bounded time and memory', () => {
  let t: TestServer;
  let editor: WebClient;
  let revision: string;
  let keyFile: string;
  const dir = mkdtempSync(join(tmpdir(), 'rxs-import-hostile-'));
  /** A file an entity names: its text must never reach an answer or a message. */
  const secret = `RXS-SECRET-${randomBytes(8).toString('hex')}`;
  const secretFile = join(dir, 'secret.txt');
  const files: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestServer();
    editor = webClient(t.url);
    const users = t.demo.tenant.users;
    expect((await editor.signIn(users.editor.email, users.editor.password)).status).toBe(200);
    revision = await approvedTopic(t, 'Hostile imports');
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    writeFileSync(secretFile, `${secret}\n`);
    const write = async (name: string, chunks: Iterable<string | Buffer>) => {
      files[name] = join(dir, name);
      await writeChunks(files[name]!, chunks);
    };
    await write('xxe.reqif', externalEntity(`file://${secretFile}`));
    await write('billion-laughs.reqif', billionLaughs());
    await write('huge-attribute.reqif', hugeAttributeValue(100 * MiB));
    await write('many-attributes.reqif', manyAttributeDefinitions(100_000));
    await write('deep.reqif', deepXhtml(100_000));
    files['bomb.reqifz'] = join(dir, 'bomb.reqifz');
    await reqifzBomb(files['bomb.reqifz'], 1025 * MiB);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `rxs import --dry-run` of the file in a child process of at most 256 MB of heap, killed past CLI_TIMEOUT_MS. */
  const rxsImport = (file: string) =>
    new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) => {
      const start = performance.now();
      const child = spawn(
        cliBin,
        ['import', '--kt', revision, file, '--dry-run', '--url', t.url, '--api-key-file', keyFile, '--quiet'],
        {
          env: { ...process.env, HOME: dir, RXS_API_KEY: '', NODE_OPTIONS: '--max-old-space-size=256' },
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: CLI_TIMEOUT_MS,
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - start }));
    });

  it('rxs import refuses each with one line saying what is wrong, exit code 1, within 256 MB of heap', async () => {
    const expected: Record<string, string> = {
      'xxe.reqif': 'declares a DOCTYPE (<!DOCTYPE …>): RXS reads no DTD and expands no entity one declares',
      'billion-laughs.reqif': 'declares a DOCTYPE (<!DOCTYPE …>): RXS reads no DTD',
      'huge-attribute.reqif': 'holds more than 5 MiB of text, the most one cell may hold',
      'many-attributes.reqif': 'has a spec type of more than 5,000 attribute definitions',
      'deep.reqif': 'nests elements more than 1,000 deep',
      'bomb.reqifz': 'bomb.reqif in the ReqIF archive',
    };
    for (const [name, message] of Object.entries(expected)) {
      const run = await rxsImport(files[name]!);
      expect(run.code, `${name}: ${run.stderr}`).toBe(1);
      expect(run.stderr.trim().split('\n'), name).toHaveLength(1);
      expect(run.stderr, name).toContain(message);
      expect(run.stderr, name).toContain('Nothing was written.');
      expect(run.stdout + run.stderr, name).not.toContain(secret);
      expect(run.ms, name).toBeLessThan(CLI_TIMEOUT_MS);
    }
    const count = await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`);
    expect(count.body.count).toBe(0);
  }, 240_000);

  /** The web app's check of an upload: its answer, how long it took, and the health check right after. */
  const check = async (name: string, file: string) => {
    const start = performance.now();
    const response = await fetch(`${t.url}/api/import/check?${new URLSearchParams({ revision, name })}`, {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'application/octet-stream',
        cookie: editor.cookie!,
        'x-csrf-token': editor.csrfToken!,
      },
      body: readFileSync(file),
    });
    const text = await response.text();
    const ms = performance.now() - start;
    const health = await t.api('GET', '/healthz', { key: null });
    return {
      status: response.status,
      text,
      detail: JSON.parse(text).detail as string,
      ms,
      health: health.status,
    };
  };

  it('the web app reads them as rxs import does: each answered 422 with the reader’s message, never 500', async () => {
    const expected: Record<string, [number, string]> = {
      'xxe.reqif': [
        422,
        'declares a DOCTYPE (<!DOCTYPE …>): RXS reads no DTD and expands no entity one declares',
      ],
      'billion-laughs.reqif': [422, 'declares a DOCTYPE (<!DOCTYPE …>): RXS reads no DTD'],
      'many-attributes.reqif': [422, 'has a spec type of more than 5,000 attribute definitions'],
      'deep.reqif': [422, 'nests elements more than 1,000 deep'],
      'bomb.reqifz': [422, 'bomb.reqif in the ReqIF archive "bomb.reqifz" unpacks to more than'],
    };
    for (const [name, [status, message]] of Object.entries(expected)) {
      const answer = await check(name, files[name]!);
      expect(answer.status, answer.text).toBe(status);
      expect(answer.detail, name).toContain(message);
      expect(answer.detail, name).toContain('Nothing was written.');
      expect(answer.text, name).not.toContain(secret);
      expect(answer.ms).toBeLessThan(10_000);
      expect(answer.health).toBe(200);
    }
    // Past the web app's upload limit (50 MB), it is refused by its declared size.
    expect(statSync(files['huge-attribute.reqif']!).size).toBeGreaterThan(50 * MiB);
    const huge = await check('huge-attribute.reqif', files['huge-attribute.reqif']!);
    expect(huge.status, huge.text).toBe(413);
    const count = await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`);
    expect(count.body.count).toBe(0);
  }, 60_000);

  it("the same bytes under a spreadsheet's name reach a reader and are answered 422, never 500, without the secret", async () => {
    for (const [name, file] of [
      ['xxe.csv', files['xxe.reqif']!],
      ['billion-laughs.csv', files['billion-laughs.reqif']!],
      ['deep.csv', files['deep.reqif']!],
      ['bomb.xlsx', files['bomb.reqifz']!],
    ] as const) {
      const answer = await check(name, file);
      expect(answer.status, `${name}: ${answer.text.slice(0, 300)}`).toBe(422);
      expect(answer.text).not.toContain(secret);
      expect(answer.ms).toBeLessThan(10_000);
      expect(answer.health).toBe(200);
    }
  }, 60_000);
});
