import { createHash, randomBytes } from 'node:crypto';
import { link, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { earlierProcessSpace, processLife, processSpace, writerGone } from '../files/process-space.js';
import { fsyncPath } from '../files/durable.js';
import { removeAbandonedTemps, tempPath } from '../files/temp-files.js';

/**
 * One sync at a time per state folder: `DIR/sync.lock` holds the PID, host and start time of the
 * sync running there. The file is written whole under a temporary name and linked into place, so
 * it never appears half written and only one of two racing syncs gets it. A lock whose process is
 * gone (same host and PID namespace, no such PID) is stale and taken over.
 *
 * The temporary file is named as every temporary file (`files/temp-files.ts`, with the writer's process
 * space and PID): one left by a sync killed while taking the lock is removed by the next sync that
 * holds it.
 */

export const LOCK_FILE = 'sync.lock';

interface LockContent {
  pid: number;
  hostname: string;
  /** Where `pid` can be checked (`processSpace()`); absent in locks of earlier versions. */
  space?: string;
  /** Which process of that PID (`processLife()`); absent in locks of earlier versions, and where unknown. */
  life?: string;
  startedAt: string;
  token: string;
}

/** The tokens of the locks this process (this copy of the module) holds. */
const heldTokens = new Set<string>();

export class SyncLockedError extends Error {
  constructor(
    readonly lockPath: string,
    readonly pid: number | undefined,
    readonly host: string | undefined,
    readonly startedAt: string | undefined,
    /** The lock is one this process took and has not released. */
    heldHere = false,
    /** The lock names this process's life: another thread or copy of the SDK holds it. */
    sameLife = false,
  ) {
    const holder =
      pid === undefined
        ? 'an unknown process (the lock file is unreadable)'
        : heldHere
          ? `this process (PID ${pid})`
          : sameLife
            ? `this process (PID ${pid}: another thread, or another copy of the SDK in it)`
            : `process ${pid}${host && host !== hostname() ? ` on host ${host}` : pid === process.pid ? ' (the PID of this process, which does not hold it: an earlier process of that PID, or one of another machine or container)' : ''}`;
    super(
      `Another sync is running on this folder: ${lockPath} is held by ${holder}` +
        `${startedAt ? `, since ${startedAt}` : ''}. Wait for it to finish` +
        `${
          pid === undefined
            ? ', or remove the lock file if no sync runs on this folder'
            : !heldHere && !sameLife
              ? `, or remove the lock file if process ${pid} is not an rxs sync`
              : ''
        }.`,
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

/**
 * Whether the lock's process is gone: of this process space (or an earlier version's count of it,
 * or a lock of a version that did not say) and no process of its PID runs, or of this PID but
 * an earlier life of it in this boot (the PID reused, a restarted container's PID 1).
 */
function isStale(holder: LockContent): boolean {
  if (holder.hostname !== hostname()) return false;
  if (holder.space !== undefined && holder.space !== processSpace() && holder.space !== earlierProcessSpace())
    return false;
  return writerGone(holder.pid, holder.life, holder.space === processSpace() ? 'this' : 'earlier');
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

const TAKEOVER_PREFIX = `${LOCK_FILE}.takeover-`;

/** The takeover file of a lock (or takeover file) holding `token`: `sync.lock.takeover-HASH`. */
function takeoverPath(dir: string, token: unknown): string {
  return join(
    dir,
    `${TAKEOVER_PREFIX}${createHash('sha256').update(String(token)).digest('hex').slice(0, 16)}`,
  );
}

/**
 * Removes `file` (the lock, or a takeover file) if it still holds `stale`, one remover at a time:
 * two syncs that both found it stale must not both remove it, as the second would remove the lock
 * the first has just taken. The remover holds the takeover file named by the stale content's token
 * (linked from its own temporary file, so only one gets it; only those that found that same stale
 * content compete for it) while it checks that `file` still holds it and removes it. A remover
 * killed in between leaves its takeover file, itself stale: it is removed the same way, one level
 * up (each level is another dead process's, so the chain ends). Returns what happened: `removed`
 * (something stale went), or the live remover at work (the caller waits and tries again).
 */
async function removeStale(
  dir: string,
  file: string,
  stale: LockContent,
  temp: string,
  seen = new Set<string>(),
): Promise<'removed' | LockContent | undefined> {
  const takeover = takeoverPath(dir, stale.token);
  if (seen.has(takeover)) return undefined; // a loop of takeover files: only by hand
  seen.add(takeover);
  try {
    await link(temp, takeover);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const other = await readLock(takeover);
    if (other !== 'missing' && other !== undefined && isStale(other))
      return removeStale(dir, takeover, other, temp, seen);
    return other === 'missing' ? 'removed' : other; // gone meanwhile, or at work
  }
  try {
    const now = await readLock(file);
    if (now !== 'missing' && now?.token === stale.token) await rm(file, { force: true });
    return 'removed';
  } finally {
    await rm(takeover, { force: true });
  }
}

/**
 * Removes the takeover files left by removers that were killed. Called while holding the lock: a
 * takeover file then names a token no lock holds any more, so a remover still at work finds the
 * lock changed and removes nothing.
 */
async function removeTakeoverFiles(dir: string): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[]))
    // `sync.lock.takeover`: one file for every lock, as an early version named it.
    if (name.startsWith(TAKEOVER_PREFIX) || name === `${LOCK_FILE}.takeover`)
      await rm(join(dir, name), { force: true }).catch(() => undefined);
}

export async function acquireSyncLock(dir: string): Promise<SyncLock> {
  const path = join(dir, LOCK_FILE);
  const content: LockContent = {
    pid: process.pid,
    hostname: hostname(),
    space: processSpace(),
    ...(processLife() !== undefined && { life: processLife() }),
    startedAt: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  };
  const temp = tempPath(path);
  // Flushed before it is linked: a lock (or takeover file) is never found empty after a power cut.
  const writeTemp = async () => {
    await writeFile(temp, `${JSON.stringify(content)}\n`, { flag: 'wx', mode: 0o644 });
    await fsyncPath(temp);
  };
  await writeTemp();
  let staleHolder: number | undefined;
  /** Another sync taking the dead lock over right now, and how long it has been waited for. */
  let taker: LockContent | undefined;
  let waits = 0;
  /** Stale files removed: a chain of killed takers' takeover files costs a try each. */
  let removed = 0;
  let rewrites = 0;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(temp, path);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // ENOENT: the holder took our temporary file for a dead process's (another host's PID).
        if (code === 'ENOENT' && rewrites++ < 3) {
          await writeTemp();
          continue;
        }
        if (code !== 'EEXIST') throw error;
      }
      const holder = await readLock(path);
      if (holder === 'missing') continue; // released meanwhile
      const stale = holder !== undefined && isStale(holder);
      if (stale && taker !== undefined && waits >= 50)
        // The one taking it over holds it in effect: name that process, not the dead one.
        throw new SyncLockedError(path, taker.pid, taker.hostname, taker.startedAt);
      if (!stale || attempt >= 8 + waits + Math.min(removed, 100))
        throw new SyncLockedError(
          path,
          holder?.pid,
          holder?.hostname,
          holder?.startedAt,
          holder !== undefined && heldTokens.has(holder.token),
          holder !== undefined &&
            holder.pid === process.pid &&
            holder.life !== undefined &&
            holder.life === processLife(),
        );
      // The holder died without releasing: take its lock over.
      staleHolder = holder.pid;
      const outcome = await removeStale(dir, path, holder, temp);
      if (outcome === 'removed') removed++;
      taker = outcome === 'removed' ? undefined : outcome;
      if (taker !== undefined) {
        waits++;
        await new Promise((resolve) => setTimeout(resolve, 20)); // let it finish
      }
    }
  } finally {
    await rm(temp, { force: true });
  }
  await removeAbandonedTemps(dir, LOCK_FILE);
  await removeTakeoverFiles(dir);

  heldTokens.add(content.token);
  let released = false;
  return {
    path,
    staleHolder,
    async release() {
      if (released) return;
      released = true;
      heldTokens.delete(content.token);
      const holder = await readLock(path);
      if (holder !== 'missing' && holder?.token === content.token) await rm(path, { force: true });
    },
  };
}
