import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const cliBin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `rxs` command as a user would, with optional standard input. */
export function runCli(
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cliBin, ...args], {
      env: { ...process.env, RXS_CONFIG: '/nonexistent/rxs-config.json', ...options.env },
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
