import { createHash, randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { link, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * One sync at a time per state folder: `DIR/sync.lock` holds the PID, host and start time of the
 * sync running there. The file is written whole under a temporary name and linked into place, so
 * it never appears half written and only one of two racing syncs gets it. A lock whose process is
 * gone (same host and PID namespace, no such PID) is stale and taken over.
 *
 * The temporary name carries the writer's PID (`sync.lock.PID.TOKEN.tmp`): one left by a sync
 * killed while taking the lock is removed by the next sync that holds it.
 */

export const LOCK_FILE = 'sync.lock';

interface LockContent {
  pid: number;
  hostname: string;
  /** Where `pid` can be checked (`processSpace()`); absent in locks of earlier versions. */
  space?: string;
  startedAt: string;
  token: string;
}

/**
 * The processes whose PIDs this one can check: this host and, on Linux, this PID namespace. Two
 * containers may share a host name (host networking, one pod) and a folder while each sees only
 * its own processes: a PID of the other one looks gone from here. A short hash, safe in file names.
 */
export const processSpace: () => string = (() => {
  let space: string | undefined;
  return () => {
    if (space === undefined) {
      let namespace = '';
      try {
        namespace = readlinkSync('/proc/self/ns/pid'); // e.g. "pid:[4026531836]"
      } catch {
        // Not Linux: the host name alone.
      }
      space = createHash('sha256').update(`${hostname()}\0${namespace}`).digest('hex').slice(0, 12);
    }
    return space;
  };
})();

export class SyncLockedError extends Error {
  constructor(
    readonly lockPath: string,
    readonly pid: number | undefined,
    readonly host: string | undefined,
    readonly startedAt: string | undefined,
  ) {
    const holder =
      pid === undefined
        ? 'an unknown process (the lock file is unreadable)'
        : pid === process.pid && host === hostname()
          ? `this process (PID ${pid})`
          : `process ${pid}${host && host !== hostname() ? ` on host ${host}` : ''}`;
    super(
      `Another sync is running on this folder: ${lockPath} is held by ${holder}` +
        `${startedAt ? `, since ${startedAt}` : ''}. Wait for it to finish` +
        `${pid !== undefined && pid !== process.pid ? `, or remove the lock file if process ${pid} is not an rxs sync` : ''}.`,
    );
  }
}

export interface SyncLock {
  readonly path: string;
  /**
   * The process whose lock was taken over because it was gone (killed, or its machine restarted):
   * what it left half written beside its output may be removed (`removeAbandonedTemps`).
   */
  readonly staleHolder: number | undefined;
  /** Removes the lock file if it is still this lock's. */
  release(): Promise<void>;
}

/** Whether a process with this id runs on this machine (one of another user's counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(path: string): Promise<LockContent | undefined | 'missing'> {
  try {
    const content = JSON.parse(await readFile(path, 'utf8')) as Partial<LockContent>;
    return typeof content.pid === 'number' && Number.isInteger(content.pid) && content.pid > 0
      ? (content as LockContent)
      : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    return undefined;
  }
}

/**
 * Removes the temporary lock files of processes that are gone (killed between writing one and
 * removing it). Called while holding the lock, so a live writer is only ever mid-acquisition.
 */
async function removeAbandonedLockTemps(dir: string): Promise<void> {
  const pattern = /^sync\.lock\.(\d+)\.[0-9a-f]+\.tmp$/;
  for (const name of await readdir(dir)) {
    const pid = pattern.exec(name)?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !processAlive(Number(pid)))
      await rm(join(dir, name), { force: true });
  }
}

export async function acquireSyncLock(dir: string): Promise<SyncLock> {
  const path = join(dir, LOCK_FILE);
  const content: LockContent = {
    pid: process.pid,
    hostname: hostname(),
    space: processSpace(),
    startedAt: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  };
  const temp = `${path}.${process.pid}.${content.token}.tmp`;
  const writeTemp = () => writeFile(temp, `${JSON.stringify(content)}\n`, { flag: 'wx', mode: 0o644 });
  await writeTemp();
  let staleHolder: number | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(temp, path);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // ENOENT: the holder took our temporary file for a dead process's (another host's PID).
        if (code === 'ENOENT' && attempt < 3) {
          await writeTemp();
          continue;
        }
        if (code !== 'EEXIST') throw error;
      }
      const holder = await readLock(path);
      if (holder === 'missing') continue; // released meanwhile
      const stale =
        holder !== undefined &&
        holder.hostname === content.hostname &&
        (holder.space === undefined || holder.space === content.space) &&
        holder.pid !== process.pid &&
        !processAlive(holder.pid);
      if (!stale || attempt >= 3)
        throw new SyncLockedError(path, holder?.pid, holder?.hostname, holder?.startedAt);
      // The holder died without releasing: take its lock over.
      staleHolder = holder.pid;
      await rm(path, { force: true });
    }
  } finally {
    await rm(temp, { force: true });
  }
  // Tidying only: a folder that cannot be listed fails the sync later, with a better message.
  await removeAbandonedLockTemps(dir).catch(() => {});

  let released = false;
  return {
    path,
    staleHolder,
    async release() {
      if (released) return;
      released = true;
      const holder = await readLock(path);
      if (holder !== 'missing' && holder?.token === content.token) await rm(path, { force: true });
    },
  };
}
