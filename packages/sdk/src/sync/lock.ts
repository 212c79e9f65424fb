import { randomBytes } from 'node:crypto';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive, processLife, processSpace } from './process-space.js';
import { removeAbandonedTemps, tempPath } from './temp-files.js';

/**
 * One sync at a time per state folder: `DIR/sync.lock` holds the PID, host and start time of the
 * sync running there. The file is written whole under a temporary name and linked into place, so
 * it never appears half written and only one of two racing syncs gets it. A lock whose process is
 * gone (same host and PID namespace, no such PID) is stale and taken over.
 *
 * The temporary file is named as every temporary file (`temp-files.ts`, with the writer's process
 * space and PID): one left by a sync killed while taking the lock is removed by the next sync that
 * holds it.
 */

export const LOCK_FILE = 'sync.lock';

interface LockContent {
  pid: number;
  hostname: string;
  /** Where `pid` can be checked (`processSpace()`); absent in locks of earlier versions. */
  space?: string;
  /** Which process of that PID (`processLife()`); absent in locks of earlier versions. */
  life?: string;
  startedAt: string;
  token: string;
}

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

export async function acquireSyncLock(dir: string): Promise<SyncLock> {
  const path = join(dir, LOCK_FILE);
  const content: LockContent = {
    pid: process.pid,
    hostname: hostname(),
    space: processSpace(),
    life: processLife(),
    startedAt: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  };
  const temp = tempPath(path);
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
        // This PID: an earlier process's lock (the PID reused), unless this process holds it.
        (holder.pid === process.pid
          ? holder.life !== undefined && holder.life !== content.life
          : !processAlive(holder.pid));
      if (!stale || attempt >= 3)
        throw new SyncLockedError(path, holder?.pid, holder?.hostname, holder?.startedAt);
      // The holder died without releasing: take its lock over.
      staleHolder = holder.pid;
      await rm(path, { force: true });
    }
  } finally {
    await rm(temp, { force: true });
  }
  await removeAbandonedTemps(dir, LOCK_FILE);

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
