import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const rxsBin = fileURLToPath(new URL('../../../../cli/dist/bin.js', import.meta.url));

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** performance.now() when the process was spawned (its V8 clock starts about then). */
  spawnedAt: number;
  output(): string;
  /** Sends the signal (SIGTERM by default) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Kills every `rxs serve` this module started and that still runs (for afterAll). */
export function killAll(): void {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  running.clear();
}

/**
 * `rxs serve` as a real process (the built CLI), resolved once it listens (and, with --demo, once
 * the demo is seeded). A process that fails to start is killed, never left behind.
 */
export async function startServe(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  nodeArgs: string[] = [],
): Promise<ServeProcess> {
  const spawnedAt = performance.now();
  const child = spawn(
    process.execPath,
    [...nodeArgs, rxsBin, 'serve', '--port', '0', '--log-level', 'warn', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    },
  );
  running.add(child);
  let output = '';
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  const wantsDemo = args.includes('--demo');
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`rxs serve did not start within 30 s: ${output}`)),
        30_000,
      );
      const check = () => {
        const match = /RXS is running at (http:\/\/\S+)/.exec(output);
        if (match && (!wantsDemo || output.includes('Try:'))) {
          clearTimeout(timer);
          resolve(match[1]!);
        } else if (/^rxs: /m.test(output)) {
          clearTimeout(timer);
          reject(new Error(`rxs serve failed: ${output}`));
        }
      };
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`rxs serve exited with ${child.exitCode ?? child.signalCode}: ${output}`));
      });
    });
    return { url, child, spawnedAt, output: () => output, stop };
  } catch (error) {
    await stop('SIGKILL');
    throw error;
  }
}

/** Resident memory of a process in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
  return kb * 1024;
}

/** Node flags that make `rxs serve` report its heap after a full collection on SIGUSR2. */
export const memoryProbeArgs = [
  '--expose-gc',
  '--require',
  fileURLToPath(new URL('./memory-probe.cjs', import.meta.url)),
];

export interface HeapProbe {
  /** Date.now() of the probe. */
  at: number;
  heapUsed: number;
  external: number;
  rss: number;
}

/** Asks a process started with `memoryProbeArgs` for its heap after a full collection. */
export async function probeHeap(server: ServeProcess): Promise<HeapProbe> {
  const count = () => (server.output().match(/RXS-MEMORY /g) ?? []).length;
  const before = count();
  server.child.kill('SIGUSR2');
  for (let i = 0; i < 500 && count() === before; i++) await new Promise((r) => setTimeout(r, 10));
  const lines = [...server.output().matchAll(/RXS-MEMORY (\{[^\n]*\})/g)];
  if (lines.length === before) throw new Error('the server did not answer the memory probe');
  return JSON.parse(lines[lines.length - 1]![1]!) as HeapProbe;
}
