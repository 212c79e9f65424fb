import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const isolatedHome = mkdtempSync(join(tmpdir(), 'rxs-home-'));

/** The `rxs` npm links at install time (packages/cli/bin/rxs.js): run as users run it, by its shebang. */
export const cliBin = fileURLToPath(new URL('../../../node_modules/.bin/rxs', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `rxs` command as a user would, with optional standard input. */
export function runCli(
  args: string[],
  options: { input?: string | Buffer; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(cliBin, args, {
      // A home of its own: no user config file (~/.config/rxs/config.json) leaks into the test.
      env: { ...process.env, HOME: isolatedHome, RXS_API_KEY: '', ...options.env },
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
