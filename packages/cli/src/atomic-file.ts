import type { WriteStream } from 'node:fs';
import { open, readdir, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { durableWriteStream, processAlive, processSpace } from '@rxs/sdk/exporter';

/**
 * An output file that appears whole or not at all: bytes go to a temporary file beside the target,
 * which is flushed to disk and renamed over the target only on `commit()`. `abort()` (or a crash)
 * leaves the previous file untouched; what a killed writer left half written is removed by the
 * next writer of that output on the same machine.
 */
export interface AtomicFile {
  readonly path: string;
  readonly stream: WriteStream;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * The processes whose PIDs this one can check, as temporary file names carry them: the host name
 * (letters, digits and dashes only) and a hash of it with the PID namespace (`processSpace`).
 */
const SPACE = `${hostname().replace(/[^A-Za-z0-9-]/g, '-') || 'host'}-${processSpace()}`;

/** The temporary files of `target` written in this process space are `<prefix><pid>.<time>.tmp`. */
export function tempPrefix(target: string): string {
  return `.${basename(target)}.${SPACE}.`;
}

/**
 * Removes what writers of `target` on this machine that are gone (killed, or the machine went
 * down) left half written beside it: their temporary files of that output only. Those of another
 * machine or PID namespace (a shared folder, another container) stay: whether their writer still
 * runs cannot be told from here.
 */
async function removeAbandonedTemps(target: string): Promise<void> {
  const prefix = tempPrefix(target);
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  for (const name of names) {
    const pid = name.startsWith(prefix)
      ? /^(\d+)\.\d+\.tmp$/.exec(name.slice(prefix.length))?.[1]
      : undefined;
    if (pid !== undefined && Number(pid) !== process.pid && !processAlive(Number(pid)))
      await rm(join(dirname(target), name), { force: true });
  }
}

/** Opens the temporary file of `path`, first removing those its killed writers left. */
export async function createAtomicFile(path: string): Promise<AtomicFile> {
  const target = resolve(path);
  await removeAbandonedTemps(target);
  const temp = join(dirname(target), `${tempPrefix(target)}${process.pid}.${Date.now()}.tmp`);
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
