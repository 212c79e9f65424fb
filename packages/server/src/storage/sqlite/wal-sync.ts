import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';

/**
 * Group sync: the function returned resolves once a sync that began after the call has ended, so
 * everything written before the call is on disk. While one sync runs, every call made meanwhile
 * waits for the one next sync, which starts when the running one ends: many commits, one sync.
 */
export function groupSync(syncOnce: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const start = (): Promise<void> => {
    const run = syncOnce().finally(() => {
      if (running === run) running = undefined;
    });
    running = run;
    return run;
  };
  return () => {
    if (!running) return start();
    // A sync is under way, but it may have begun before this call's writes: wait for the next.
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}

/** Bytes written since the last sync up to which the sync is made at once, on the event loop's thread. */
export const INLINE_SYNC_BYTES = 256 * 1024;

export interface WalSync {
  /**
   * Resolves once everything committed so far is on disk. `bytes`, about what was written since the
   * last call, chooses how: a small write is synced at once (as SQLite's synchronous = FULL would,
   * a fraction of a millisecond); a large one in libuv's thread pool, so that its sync (tens to
   * hundreds of milliseconds on a slow disk) never holds the event loop, shared by the commits made
   * meanwhile.
   */
  sync(bytes: number): Promise<void>;
  close(): void;
}

/**
 * Makes SQLite commits durable. The write connection runs with `synchronous = NORMAL`: a commit
 * writes its WAL frames and returns without syncing them. Syncing the WAL file before the commit
 * is acknowledged gives what synchronous = FULL gives (SQLite's FULL syncs the WAL at each commit).
 * The WAL file lives as long as any connection to the database: it is opened once.
 */
export function walSync(databaseFile: string, inlineBytes = INLINE_SYNC_BYTES): WalSync {
  let fd: number | undefined;
  /** The WAL file; none before the first write made it, and then nothing to sync. */
  const wal = (): number | undefined => {
    try {
      return (fd ??= openSync(`${databaseFile}-wal`, 'r'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  };
  const inBackground = groupSync(
    () =>
      new Promise<void>((resolve, reject) => {
        const file = wal();
        if (file === undefined) resolve();
        else fdatasync(file, (error) => (error ? reject(error) : resolve()));
      }),
  );
  return {
    async sync(bytes) {
      if (bytes > inlineBytes) return inBackground();
      const file = wal();
      if (file !== undefined) fdatasyncSync(file);
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
