import type { WriteStream } from 'node:fs';
import { open, readlink, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { durableWriteStream, removeAbandonedTemps, tempPath } from '@rxs/sdk/exporter';
import { UserError } from './errors.js';

/**
 * An output file that appears whole or not at all: bytes go to a temporary file beside the target,
 * which is flushed to disk and renamed over the target only on `commit()`. `abort()` (or a crash)
 * leaves the previous file untouched; what a killed writer left half written is removed by the
 * next writer of that output on the same machine.
 */
export interface AtomicFile {
  /** The file replaced: the one named, or the one it links to. */
  readonly path: string;
  readonly stream: WriteStream;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

function cannotCreate(target: string, error: NodeJS.ErrnoException): string {
  const folder = dirname(target);
  switch (error.code) {
    case 'ENOENT':
      return `Cannot write ${target}: the folder ${folder} does not exist. Create it, or name a file in an existing folder.`;
    case 'ENOTDIR':
      return `Cannot write ${target}: ${folder} is not a folder. Name a file in an existing folder.`;
    case 'EACCES':
    case 'EPERM':
      return `Cannot write ${target}: no permission to create files in ${folder}. Choose a folder you may write to.`;
    case 'EROFS':
      return `Cannot write ${target}: ${folder} is on a read-only file system. Choose another folder.`;
    case 'ENOSPC':
      return `Cannot write ${target}: the disk of ${folder} is full. Free some space and run it again.`;
    default:
      return `Cannot write ${target}: ${error.message}`;
  }
}

/** Symbolic links followed at most (the operating system's own limit on Linux). */
const MAX_LINKS = 40;

/**
 * The file `path` names, through symbolic links, also one that points to a file not there yet: the
 * output replaces that file, as writing to the link would, instead of replacing the link with a
 * file and leaving the file it pointed to as it was.
 */
async function throughLinks(path: string): Promise<string> {
  let target = resolve(path);
  for (let links = 0; links <= MAX_LINKS; links++) {
    let to: string;
    try {
      to = await readlink(target);
    } catch {
      return target; // not a link (or not there): this is the file
    }
    target = resolve(dirname(target), to);
  }
  throw new UserError(
    `Cannot write ${path}: it is a symbolic link that leads through more than ${MAX_LINKS} others (a loop?). Name the file itself.`,
  );
}

/** Opens the temporary file of `path`, first removing those its killed writers left. */
export async function createAtomicFile(path: string): Promise<AtomicFile> {
  if (path.endsWith('/') || (process.platform === 'win32' && path.endsWith('\\')))
    throw new UserError(`Cannot write ${path}: it names a folder (it ends with a slash). Name a file in it.`);
  const target = await throughLinks(path);
  // Found now, not after the whole export when the rename fails.
  if ((await stat(target).catch(() => undefined))?.isDirectory())
    throw new UserError(`Cannot write ${target}: it is a folder. Name a file in it.`);
  await removeAbandonedTemps(dirname(target), basename(target));
  const temp = tempPath(target);
  // Created here, so that a folder that is missing or not writable is a message, not a stream's
  // error event that nobody listens to yet.
  try {
    await (await open(temp, 'wx', 0o644)).close();
  } catch (error) {
    throw new UserError(cannotCreate(target, error as NodeJS.ErrnoException));
  }
  // Written to disk as it goes, so that the flush at the commit waits for the last bytes only.
  const stream = durableWriteStream(temp, { flags: 'r+' });
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
      try {
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
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
