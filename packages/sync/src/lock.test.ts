import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireSyncLock, LOCK_FILE, SyncLockedError } from './lock.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-lock-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => {
  const dir = join(root, `lock-${++dirs}`);
  mkdirSync(dir);
  return dir;
};
/** The PID of a process that has ended. */
const gonePid = () => spawnSync(process.execPath, ['-e', '0']).pid!;
const lockOf = (pid: number, host = hostname(), startedAt = '2026-08-11T09:00:00.000Z') =>
  JSON.stringify({ pid, hostname: host, startedAt });

/** A process that tries to take the lock of `dir` at `at` (ms), holds it a while and says when. */
function contender(dir: string, at: number): Promise<string> {
  const built = fileURLToPath(new URL('../dist/lock.js', import.meta.url));
  if (!existsSync(built))
    throw new Error('Build the packages first (npm run build): this test runs its output.');
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
  it('is refused while held, naming the holder and what to do; released, it is free again', async () => {
    const dir = freshDir();
    const lock = await acquireSyncLock(dir);
    expect(lock.staleHolder).toBeUndefined();
    await expect(acquireSyncLock(dir)).rejects.toThrow(
      `${join(dir, LOCK_FILE)} is held by this process (PID ${process.pid}), since `,
    );
    await lock.release();
    await lock.release(); // twice: no effect
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    const next = await acquireSyncLock(dir);
    await next.release();
  });

  it("respects a live process's lock, another host's, and an unreadable one, each with its message", async () => {
    const dir = freshDir();
    const refusal = async (content: string) => {
      writeFileSync(join(dir, LOCK_FILE), content);
      const error = await acquireSyncLock(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SyncLockedError);
      expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(content);
      return (error as SyncLockedError).message;
    };
    expect(await refusal(lockOf(process.ppid))).toBe(
      `Another sync is running on this folder: ${join(dir, LOCK_FILE)} is held by process ${process.ppid}, ` +
        `since 2026-08-11T09:00:00.000Z. Wait for it to finish, or remove the lock file if process ${process.ppid} is not an rxs sync.`,
    );
    expect(await refusal(lockOf(gonePid(), 'another-host'))).toMatch(
      /held by process \d+ on another-host, since/,
    );
    expect(await refusal('{"pid":')).toMatch(/is unreadable\. Remove it if no sync runs here/);
  });

  it("takes over a gone process's lock, and one of this PID taken before this process started (a restarted container)", async () => {
    const dir = freshDir();
    const gone = gonePid();
    writeFileSync(join(dir, LOCK_FILE), lockOf(gone));
    const lock = await acquireSyncLock(dir);
    expect(lock.staleHolder).toBe(gone);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    await lock.release();
    // A taker killed after it removed the dead lock left its takeover file: the next holder removes it.
    writeFileSync(join(dir, `${LOCK_FILE}.takeover`), '');
    const next = await acquireSyncLock(dir);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    await next.release();
    writeFileSync(join(dir, LOCK_FILE), lockOf(process.pid, hostname(), '2020-01-01T00:00:00.000Z'));
    const again = await acquireSyncLock(dir);
    expect(again.staleHolder).toBe(process.pid);
    await again.release();
  });

  it("several syncs finding a dead sync's lock at the same moment: one takes it over, never two at once", async () => {
    for (let round = 0; round < 4; round++) {
      const dir = freshDir();
      writeFileSync(join(dir, LOCK_FILE), lockOf(gonePid()));
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
      expect(readdirSync(dir)).toEqual([]);
    }
  }, 60_000);
});
