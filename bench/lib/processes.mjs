/**
 * Child processes for the benchmark: servers (RXS, json-server, the transfer-limit server) started
 * as their own processes so their memory can be read from /proc, and timed commands (curl, jq, the
 * rxs CLI) with their peak memory.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { secondsSince } from './stats.mjs';

export const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

let timedCount = 0;

/** Every child process still running, so an interrupted benchmark leaves no server behind. */
const children = new Set();
function stopChildrenAndExit(signal) {
  for (const child of children) child.kill('SIGKILL');
  process.stderr.write(`\nbench: ${signal}: stopped ${children.size} child process(es).\n`);
  process.exit(130);
}
process.once('SIGINT', () => stopChildrenAndExit('SIGINT'));
process.once('SIGTERM', () => stopChildrenAndExit('SIGTERM'));

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** `VmRSS` and `VmHWM` (peak RSS) of a live process, in bytes; undefined once it is gone. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

/**
 * Resets a process's peak RSS (VmHWM) to its current RSS (Linux >= 4.0, needs permission over the
 * process). Returns false when the kernel refuses; callers then fall back to sampling.
 */
export function resetPeakMemory(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** User + system CPU time of a process in clock ticks. */
function cpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Clock ticks a second of /proc's CPU times (`getconf CLK_TCK`; 100 on Linux as built). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** User + system CPU seconds a live process has used so far; undefined once it is gone. */
export function cpuSecondsOf(pid) {
  const ticks = cpuTicks(pid);
  return ticks === undefined ? undefined : ticks / CLOCK_TICKS;
}

/**
 * Waits until a process has used no CPU for `quietMs` (e.g. json-server still writing its file, or a
 * garbage collection after a burst), at most `limitMs`, so one measurement does not bleed into the next.
 */
/**
 * Writes every dirty page to disk (`sync`), so that a timed command does not share the disk with
 * the write-back of what ran before it (the server's kept listing of a million records is 1 GB).
 */
export function flushDisk() {
  spawnSync('sync', { stdio: 'ignore' });
}

export async function settle(pid, { quietMs = 300, limitMs = 60_000 } = {}) {
  const start = Date.now();
  let last = cpuTicks(pid);
  let quietSince = Date.now();
  while (Date.now() - start < limitMs) {
    await sleep(50);
    const now = cpuTicks(pid);
    if (now === undefined) return;
    if (now !== last) {
      last = now;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= quietMs) return;
  }
}

/**
 * Starts a long-running server process and waits until `ready()` resolves true. Its output goes to
 * `logFile`. `stop()` sends SIGTERM (then SIGKILL) to this process only.
 */
export async function startProcess({ name, command, args, cwd, env, logFile, ready, timeoutMs = 120_000 }) {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = track(
    spawn(command, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  let exited = false;
  let exitInfo = '';
  const exit = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      exited = true;
      exitInfo = signal ? `signal ${signal}` : `exit code ${code}`;
      resolve();
    }),
  );
  const started = Date.now();
  while (true) {
    if (exited) {
      log.end();
      throw new Error(`${name} stopped while starting (${exitInfo}); see ${logFile}`);
    }
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      log.end();
      throw new Error(`${name} did not become ready within ${timeoutMs / 1000} s; see ${logFile}`);
    }
    try {
      if (await ready()) break;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  return {
    name,
    pid: child.pid,
    child,
    /** SIGTERM (or `signal`), then SIGKILL after 10 s. */
    async stop(signal = 'SIGTERM') {
      if (!exited) {
        child.kill(signal);
        const killed = await Promise.race([exit.then(() => true), sleep(10_000, false, { ref: false })]);
        if (!killed) {
          child.kill('SIGKILL');
          await exit;
        }
      }
      log.end();
    },
  };
}

/** True when `url` answers with the expected status (used as a readiness probe). */
export async function answers(url, headers = {}, status = 200) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  await response.arrayBuffer();
  return response.status === status;
}

/**
 * Runs a command to completion and returns its wall time (from spawn to exit, measured here) and,
 * when GNU time is available, its peak RSS (for a shell pipeline: the largest process in it).
 */
export async function timed(command, args, { cwd, env, input, timeoutMs = 30 * 60_000 } = {}) {
  let argv = [command, ...args];
  const memoryFile = GNU_TIME ? join(tmpdir(), `rxs-bench-${process.pid}-${++timedCount}.mem`) : undefined;
  // Two lines: user and system CPU seconds, then the peak RSS in KiB (the last line).
  if (GNU_TIME) argv = [GNU_TIME, '-f', '%U %S\n%M', '-o', memoryFile, ...argv];
  const start = process.hrtime.bigint();
  const child = track(
    spawn(argv[0], argv.slice(1), {
      cwd,
      env: { ...process.env, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    }),
  );
  if (input !== undefined) child.stdin.end(input);
  const out = [];
  const err = [];
  child.stdout.on('data', (c) => out.push(c));
  child.stderr.on('data', (c) => err.push(c));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise((resolve) => child.on('close', (c, signal) => resolve(signal ? 128 : c)));
  clearTimeout(timer);
  const seconds = secondsSince(start);
  let peakRss;
  let cpuSeconds;
  if (memoryFile) {
    try {
      const text = readFileSync(memoryFile, 'utf8').trim().split('\n');
      peakRss = Number(text[text.length - 1]) * 1024;
      if (!Number.isFinite(peakRss)) peakRss = undefined;
      const [user, system] = (text[text.length - 2] ?? '').split(' ').map(Number);
      cpuSeconds = Number.isFinite(user + system) ? user + system : undefined;
    } catch {
      peakRss = undefined;
    }
    rmSync(memoryFile, { force: true });
  }
  return {
    code,
    seconds,
    peakRss,
    /** User + system CPU seconds of the command (GNU time), when known. */
    cpuSeconds,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
  };
}

/** Like `timed`, but throws with the command's stderr when it fails. */
export async function timedOk(command, args, options) {
  const result = await timed(command, args, options);
  if (result.code !== 0) {
    const shown = [command, ...args].map((a) => (/[\s"'|]/.test(a) ? JSON.stringify(a) : a)).join(' ');
    throw new Error(
      `${shown} failed (exit ${result.code}): ${result.stderr.trim().slice(-2000) || result.stdout.trim().slice(-500)}`,
    );
  }
  return result;
}
