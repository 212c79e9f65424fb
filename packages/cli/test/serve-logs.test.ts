import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PrettyLines } from '../../server/src/logging/pretty.js';
import { cliBin } from './run-cli.js';

/** `rxs serve --log-format`: readable lines for a person at a terminal, JSON lines for machines. */
describe('rxs serve logs', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts `rxs serve` with these flags, asks one request, and returns what it logged by then. */
  async function logOf(...flags: string[]): Promise<string[]> {
    const dir = mkdtempSync(join(tmpdir(), 'rxs-logs-'));
    dirs.push(dir);
    const child = spawn(cliBin, ['serve', '--data-dir', dir, '--port', '0', ...flags], {
      env: { ...process.env, RXS_LOG_FORMAT: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 30_000);
      const check = () => {
        const match = /RXS is running at (http:\/\/\S+)/.exec(out);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        } else setTimeout(check, 50);
      };
      check();
    });
    await fetch(`${url}/records/?api_key=secret-in-url`, { headers: { 'x-api-key': 'rxs_nope' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    return out
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith(' ') && !line.startsWith('RXS is'));
  }

  it('--log-format pretty: one readable line per request, secrets redacted', async () => {
    const lines = await logOf('--log-format', 'pretty');
    const request = lines.find((line) => line.includes('GET /records/'));
    expect(request).toMatch(
      /^\d\d:\d\d:\d\d INFO  GET \/records\/\?api_key=\[Redacted\] 401 \d+ ms \[[0-9a-f-]{36}\]$/,
    );
    expect(lines.some((line) => line.startsWith('{'))).toBe(false);
    expect(lines.join('\n')).not.toContain('secret-in-url');
  }, 60_000);

  it('JSON lines when asked, and by default when the output is not a terminal', async () => {
    for (const flags of [['--log-format', 'json'], []]) {
      const lines = await logOf(...flags);
      const entries = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
      expect(entries.some((e) => e.msg === 'request completed' && e.res.statusCode === 401)).toBe(true);
      expect(lines.join('\n')).not.toContain('secret-in-url');
    }
  }, 60_000);

  it('shows other messages with their error, and passes a line that is not JSON as it is', () => {
    const pretty = new PrettyLines();
    const prettyLine = (line: string) => pretty.line(line);
    expect(
      prettyLine(
        JSON.stringify({
          level: 50,
          time: Date.UTC(2026, 0, 1, 9, 5, 7),
          msg: 'Export failed',
          err: { message: 'disk full' },
        }),
      ),
    ).toBe('09:05:07 ERROR Export failed: disk full');
    expect(prettyLine(JSON.stringify({ level: 30, msg: 'incoming request', req: {} }))).toBeUndefined();
    expect(prettyLine('not json')).toBe('not json');
  });
});
