import type { WriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { durableWriteStream, removeAbandonedTemps, tempPath } from '@rxs/sdk/exporter';

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

/** Opens the temporary file of `path`, first removing those its killed writers left. */
export async function createAtomicFile(path: string): Promise<AtomicFile> {
  const target = resolve(path);
  await removeAbandonedTemps(dirname(target), basename(target));
  const temp = tempPath(target);
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
