import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { acquireSyncLock, LOCK_FILE, SyncLockedError } from './lock.js';
import { processLife, processSpace } from '../files/process-space.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-lock-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A process that tries to take the lock of `dir` at `at` (ms), holds it a while and says when. */
function contender(dir: string, at: number): Promise<string> {
  const built = fileURLToPath(new URL('../../dist/sync/lock.js', import.meta.url));
  if (!existsSync(built)) throw new Error('Build the sdk first (npm run build): this test runs its output.');
  const script = `
    const { acquireSyncLock } = await import(${JSON.stringify(built)});
    while (Date.now() < ${at}) {}
    try {
      const lock = await acquireSyncLock(${JSON.stringify(dir)});
      const from = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const to = Date.now();
      await lock.release();
      process.stdout.write(JSON.stringify({ from, to }));
    } catch (error) {
      process.stdout.write(JSON.stringify({ refused: error.constructor.name }));
    }`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('close', () => resolve(out));
  });
}

describe('sync lock', () => {
  it("a worker thread is this process: the same life, and it does not take the main thread's lock over", async () => {
    const built = fileURLToPath(new URL('../../dist/exporter.js', import.meta.url));
    if (!existsSync(built))
      throw new Error('Build the sdk first (npm run build): this test runs its output.');
    const dir = join(root, 'threads');
    mkdirSync(dir);
    const lock = await acquireSyncLock(dir);
    try {
      const script = `
        const { parentPort } = require('node:worker_threads');
        import(${JSON.stringify(built)}).then(async ({ acquireSyncLock, processLife }) => {
          const taken = await acquireSyncLock(${JSON.stringify(dir)}).then(() => 'taken', (error) => error.constructor.name);
          parentPort.postMessage({ life: processLife(), taken });
        });`;
      const answer = await new Promise<{ life: string; taken: string }>((resolve, reject) => {
        const worker = new Worker(script, { eval: true });
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(answer).toEqual({ life: processLife(), taken: 'SyncLockedError' });
    } finally {
      await lock.release();
    }
  });

  it('a chain of takeover files left by takers killed one after another does not block the folder', async () => {
    const dir = join(root, 'chain');
    mkdirSync(dir);
    const dead = (token: string) =>
      JSON.stringify({ pid: 4_000_000, hostname: hostname(), space: processSpace(), startedAt: 'x', token });
    const takeoverOf = (token: string) =>
      join(dir, `${LOCK_FILE}.takeover-${createHash('sha256').update(token).digest('hex').slice(0, 16)}`);
    writeFileSync(join(dir, LOCK_FILE), dead('t0'));
    // Each taker was killed holding the takeover file of the one before it.
    for (let i = 0; i < 12; i++) writeFileSync(takeoverOf(`t${i}`), dead(`t${i + 1}`));
    // One file for every lock, as an early version named it, left by a taker killed then.
    writeFileSync(join(dir, `${LOCK_FILE}.takeover`), dead('t0'));
    const lock = await acquireSyncLock(dir);
    expect(lock.staleHolder).toBe(4_000_000);
    expect(readdirSync(dir).filter((name) => name.startsWith(`${LOCK_FILE}.takeover`))).toEqual([]);
    await lock.release();
  });

  it('a sync that finds another taking the dead lock over waits for it, then names it, not the dead one', async () => {
    const dir = join(root, 'taker');
    mkdirSync(dir);
    const lockOf = (pid: number, token: string) =>
      JSON.stringify({ pid, hostname: hostname(), space: processSpace(), startedAt: 'then', token });
    writeFileSync(join(dir, LOCK_FILE), lockOf(4_000_000, 't0'));
    // A live process (the test runner) holds the takeover file and never finishes.
    writeFileSync(
      join(dir, `${LOCK_FILE}.takeover-${createHash('sha256').update('t0').digest('hex').slice(0, 16)}`),
      lockOf(process.ppid, 'taker'),
    );
    const started = Date.now();
    const refused = await acquireSyncLock(dir).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SyncLockedError);
    expect((refused as SyncLockedError).pid).toBe(process.ppid);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900); // it waited about a second
  });

  it("several syncs finding a dead sync's lock at the same moment (also one a taker was killed taking over): one takes it over, never two at once", async () => {
    for (let round = 0; round < 6; round++) {
      const dir = join(root, `race-${round}`);
      mkdirSync(dir);
      // The lock of a process of this machine that is gone (no PID this high runs).
      writeFileSync(
        join(dir, LOCK_FILE),
        JSON.stringify({
          pid: 4_000_000,
          hostname: hostname(),
          space: processSpace(),
          startedAt: 'x',
          token: 'dead',
        }),
      );
      if (round % 2 === 1)
        // A sync killed while it took that lock over: its takeover file, named by the dead lock's token.
        writeFileSync(
          join(
            dir,
            `${LOCK_FILE}.takeover-${createHash('sha256').update('dead').digest('hex').slice(0, 16)}`,
          ),
          JSON.stringify({
            pid: 4_000_001,
            hostname: hostname(),
            space: processSpace(),
            startedAt: 'x',
            token: 'taker',
          }),
        );
      const at = Date.now() + 700; // after the processes started
      const results = (await Promise.all(Array.from({ length: 6 }, () => contender(dir, at)))).map(
        (out) => JSON.parse(out) as { from?: number; to?: number; refused?: string },
      );
      const held = results.filter((result) => result.from !== undefined);
      expect(held.length, JSON.stringify(results)).toBeGreaterThanOrEqual(1);
      for (const result of results) if (result.refused) expect(result.refused).toBe('SyncLockedError');
      held.sort((a, b) => a.from! - b.from!);
      for (let i = 1; i < held.length; i++)
        expect(held[i]!.from!, `round ${round}: ${JSON.stringify(held)}`).toBeGreaterThanOrEqual(
          held[i - 1]!.to!,
        );
      expect(readdirSync(dir).filter((name) => name.startsWith(`${LOCK_FILE}.takeover`))).toEqual([]);
    }
  }, 60_000);
});
