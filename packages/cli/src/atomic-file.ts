import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { finished } from 'node:stream/promises';
import { durableWriteStream, fsyncPath, removeAbandonedTemps, tempPath } from '@rxs/sdk/exporter';
import { UserError } from './errors.js';
import { outputTarget } from './output-path.js';

/**
 * An output file that appears whole or not at all: bytes go to a temporary file beside the target,
 * which is flushed to disk and renamed over the target only on `commit()`. `abort()` (or a crash)
 * leaves the previous file untouched; what a killed writer left half written is removed by the
 * next writer of that output on the same machine.
 */
export interface AtomicFile {
  /** The file replaced (the one named, or the one it links to), or the device written into. */
  readonly path: string;
  readonly stream: WriteStream;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

async function cannotCreate(target: string, error: NodeJS.ErrnoException): Promise<string> {
  const folder = dirname(target);
  switch (error.code) {
    case 'ENOENT':
      return (await stat(folder).catch(() => undefined))?.isDirectory()
        ? `Cannot write ${target}: no file can be created in ${folder} (${error.code}). Choose another folder.`
        : `Cannot write ${target}: the folder ${folder} does not exist. Create it, or name a file in an existing folder.`;
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

/** A device, named pipe or socket: written into as it is (there is nothing to replace). */
async function specialFile(path: string): Promise<AtomicFile> {
  const stream = createWriteStream(path, { flags: 'w' });
  await once(stream, 'open').catch((error: NodeJS.ErrnoException) => {
    // ENXIO: /dev/stdout when standard output is a socket (as a program's output often is).
    const instead = error.code === 'ENXIO' ? ' To write to standard output, use --out -.' : '';
    throw new UserError(`Cannot write ${path}: ${error.message}.${instead}`);
  });
  return settling(
    path,
    stream,
    async () => undefined,
    async () => undefined,
  );
}

/**
 * The `AtomicFile` over `stream`, settled once: `commit` ends the stream, then `publish`es what it
 * wrote; `abort` destroys it, then `discard`s what it wrote.
 */
function settling(
  path: string,
  stream: WriteStream,
  publish: () => Promise<void>,
  discard: () => Promise<void>,
): AtomicFile {
  let settled = false;
  return {
    path,
    stream,
    async commit() {
      if (settled) return;
      settled = true;
      if (!stream.writableFinished) {
        stream.end();
        await finished(stream);
      }
      await publish();
    },
    async abort() {
      if (settled) return;
      settled = true;
      stream.destroy();
      await discard();
    },
  };
}

/**
 * Creates the temporary file `temp` that will replace `target`, with the replaced file's
 * permissions (an export kept readable by its owner only stays so) and, where this user may give
 * it, its owner.
 */
async function createTemp(temp: string, target: string): Promise<void> {
  const replaced = await stat(target).catch(() => undefined);
  const handle = await open(temp, 'wx', 0o644);
  try {
    if (!replaced) return;
    if (replaced.uid !== process.getuid?.() || replaced.gid !== process.getgid?.())
      await handle.chown(replaced.uid, replaced.gid).catch(() => undefined);
    await handle.chmod(replaced.mode & 0o777); // after chown, which may clear bits; not umasked
  } finally {
    await handle.close();
  }
}

/**
 * Opens the temporary file of `path`, first removing those its killed writers left; a device or
 * named pipe is written into as it is.
 */
export async function createAtomicFile(path: string): Promise<AtomicFile> {
  const found = await outputTarget(path);
  if (found.kind === 'special') return specialFile(found.path);
  const target = found.path;
  await removeAbandonedTemps(dirname(target), basename(target));
  const temp = tempPath(target);
  // Created here, so that a folder that is missing or not writable is a message, not a stream's
  // error event that nobody listens to yet.
  try {
    await createTemp(temp, target);
  } catch (error) {
    // Made, then refused its owner or permissions (or never made: then nothing to remove).
    await rm(temp, { force: true }).catch(() => undefined);
    throw new UserError(await cannotCreate(target, error as NodeJS.ErrnoException));
  }
  // Written to disk as it goes, so that the flush at the commit waits for the last bytes only.
  const stream = durableWriteStream(temp, { flags: 'r+' });
  return settling(
    target,
    stream,
    async () => {
      await fsyncPath(temp);
      try {
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
      // The rename itself is durable only once the folder is synced.
      await fsyncPath(dirname(target));
    },
    () => rm(temp, { force: true }),
  );
}
