import type { WriteStream } from 'node:fs';
import { open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { durableWriteStream } from '@rxs/sdk/exporter';

/**
 * An output file that appears whole or not at all: bytes go to a temporary file beside the target,
 * which is flushed to disk and renamed over the target only on `commit()`. `abort()` (or a crash)
 * leaves the previous file untouched.
 */
export interface AtomicFile {
  readonly path: string;
  readonly stream: WriteStream;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/** The temporary files of `target` written by process `pid` are `<prefix><time>.tmp`. */
function tempPrefix(target: string, pid: number): string {
  return `.${basename(target)}.${pid}.`;
}

/**
 * Removes what process `pid`, known to be gone (a sync that died holding its lock), left half
 * written beside `path`: its temporary files of that output only, by their exact names.
 */
export async function removeAbandonedTemps(path: string, pid: number): Promise<void> {
  const target = resolve(path);
  const prefix = tempPrefix(target, pid);
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  for (const name of names)
    if (name.startsWith(prefix) && /^\d+\.tmp$/.test(name.slice(prefix.length)))
      await rm(join(dirname(target), name), { force: true });
}

export function createAtomicFile(path: string): AtomicFile {
  const target = resolve(path);
  const temp = join(dirname(target), `${tempPrefix(target, process.pid)}${Date.now()}.tmp`);
  // Written to disk as it goes, so that the flush at the commit waits for the last bytes only.
  const stream = durableWriteStream(temp, { flags: 'wx', mode: 0o644 });
  let settled = false;
  return {
    path: target,
    stream,
    async commit() {
      if (settled) return;
      settled = true;
      if (!stream.writableFinished) {
        stream.end();
        await finished(stream);
      }
      const handle = await open(temp, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
      // The rename itself is durable only once the folder is synced.
      const folder = await open(dirname(target), 'r');
      try {
        await folder.sync();
      } finally {
        await folder.close();
      }
    },
    async abort() {
      if (settled) return;
      settled = true;
      stream.destroy();
      await rm(temp, { force: true });
    },
  };
}
