import { readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { SyncError } from './errors.js';

/** One sync at a time per state folder: `DIR/sync.lock` names the PID and host of its sync, and since when. */
export const LOCK_FILE = 'sync.lock';

type Holder = { pid: number; hostname: string; startedAt: string };

export class SyncLockedError extends SyncError {
  override name = 'SyncLockedError';
  readonly code = 'RXS_ERR_SYNC_LOCKED';
  readonly pid?: number;
  constructor(lockPath: string, { pid, hostname: host, startedAt }: Partial<Holder>) {
    const mine = host === hostname() && pid === process.pid;
    const who = mine
      ? `this process (PID ${pid})`
      : `process ${pid}${host === hostname() ? '' : ` on ${host}`}`;
    super(
      pid === undefined
        ? `Another sync may be running on this folder: ${lockPath} is unreadable. Remove it if no sync runs here.`
        : `Another sync is running on this folder: ${lockPath} is held by ${who}` +
            `${startedAt ? `, since ${startedAt}` : ''}. Wait for it to finish, or remove the lock file if process ${pid} is not an rxs sync.`,
    );
    this.pid = pid;
  }
}

/** Whether a process of this PID runs on this machine (EPERM: it does, as another user's). */
export function processAlive(pid: number): boolean {
  try {
    return process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

const started = Date.now() - process.uptime() * 1000;
/** Gone: no process of its PID runs here; or this process's PID, taken before it began (a restarted container's PID 1). */
const isGone = ({ pid, hostname: host, startedAt }: Holder) =>
  host === hostname() && (pid === process.pid ? Date.parse(startedAt) < started : !processAlive(pid));

const contentOf = (path: string) => readFile(path, 'utf8').catch(() => undefined);
/** Creates `path` with `content` unless it exists (O_EXCL: one of two creators gets it): whether it did. */
const create = (path: string, content: string) =>
  writeFile(path, content, { flag: 'wx' })
    .then(() => true)
    .catch((error) => (error.code === 'EEXIST' ? false : Promise.reject(error)));

export type SyncLock = Awaited<ReturnType<typeof acquireSyncLock>>;

/** Takes the lock of `dir`, or that of a gone sync over (`staleHolder`: its PID). */
export async function acquireSyncLock(dir: string) {
  const [path, takeover] = [join(dir, LOCK_FILE), join(dir, `${LOCK_FILE}.takeover`)];
  const mine = JSON.stringify({ pid: process.pid, hostname: hostname(), startedAt: new Date() });
  let staleHolder: number | undefined;
  for (let attempt = 0; !(await create(path, mine)); attempt++) {
    const content = await contentOf(path);
    if (content === undefined) continue; // released meanwhile
    const holder: Partial<Holder> = await Promise.resolve(content)
      .then((text) => JSON.parse(text) ?? {})
      .catch(() => ({})); // unreadable: no holder
    if (!Number.isInteger(holder.pid) || !isGone(holder as Holder) || attempt > 100)
      throw new SyncLockedError(path, holder);
    staleHolder = holder.pid;
    // One taker at a time removes it, if still the same: two could remove the lock one just took.
    if (await create(takeover, '')) {
      if ((await contentOf(path)) === content) await rm(path, { force: true });
      await rm(takeover, { force: true });
    } else await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await rm(takeover, { force: true }); // a killed taker's: a taker at work finds the lock changed
  // Removes the lock if it is still this sync's.
  const release = () => contentOf(path).then((now) => (now === mine ? rm(path, { force: true }) : undefined));
  return { path, staleHolder, release };
}
