import {
  constants,
  createWriteStream,
  fchmod,
  open as openFd,
  close,
  fstat,
  type Stats,
  type WriteStream,
} from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { promisify } from 'node:util';
import { durableWriteStream, fsyncPath, removeAbandonedTemps, tempPath } from '@rxs/sdk/exporter';
import { UserError } from './errors.js';
import { outputTarget } from './output-path.js';

/**
 * An output file that appears whole or not at all: bytes go to a temporary file beside the target,
 * which is flushed to disk and renamed over the target only on `commit()`. `abort()` (or a crash)
 * leaves the previous file untouched; what a killed writer left half written is removed by the
 * next writer of that output on the same machine. A device or named pipe is written into instead.
 */
export interface AtomicFile {
  /** The file replaced (the one named, or the one it links to), or the device written into. */
  readonly path: string;
  readonly stream: WriteStream;
  /** Where an export's scratch folder goes: beside the file; for a device, the system's temporary folder. */
  readonly scratchDir: string | undefined;
  commit(): Promise<void>;
  abort(): Promise<void>;
  /** What to report for an error met while writing: the stream's own error says which file and why. */
  failure(error: unknown): unknown;
}

const openRaw = promisify(openFd);
const fstatRaw = promisify(fstat);
const closeRaw = promisify(close);
const fchmodRaw = promisify(fchmod);

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

/** The message for a write to `path` that failed (the disk full, the reading program gone, ...). */
function writeFailed(path: string, error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOSPC':
      return `Cannot write ${path}: the disk is full. Free some space and run it again.`;
    case 'EPIPE':
      return `Cannot write ${path}: the program reading it stopped before the end (EPIPE).`;
    default:
      return `Cannot write ${path}: ${error.message}`;
  }
}

/**
 * The `AtomicFile` over `stream`, settled once: `commit` ends the stream, then `publish`es what it
 * wrote; `abort` destroys it, then `discard`s what it wrote. A write error is kept on the stream
 * (`errored`), where the writer and `commit` find it, instead of being an uncaught error event.
 */
function settling(
  path: string,
  stream: WriteStream,
  scratchDir: string | undefined,
  publish: () => Promise<void>,
  discard: () => Promise<void>,
): AtomicFile {
  stream.on('error', () => undefined);
  let settled = false;
  return {
    path,
    stream,
    scratchDir,
    async commit() {
      if (settled) return;
      settled = true;
      try {
        if (!stream.writableFinished) {
          stream.end();
          await finished(stream);
        }
      } catch (error) {
        await discard();
        throw this.failure(error);
      }
      await publish();
    },
    async abort() {
      if (settled) return;
      settled = true;
      stream.destroy();
      await discard();
    },
    failure(error: unknown) {
      return error === stream.errored && error instanceof Error
        ? new UserError(writeFailed(path, error as NodeJS.ErrnoException))
        : error;
    },
  };
}

/**
 * A device, named pipe or socket: written into as it is (there is nothing to replace). Opened
 * without creating or truncating anything, and only if it is still what `found` was when the path
 * was checked (another user may have swapped a link in since).
 */
async function specialFile(path: string, found: Stats, follow: boolean, named: string): Promise<AtomicFile> {
  // Opening a named pipe waits for a program to read it: say so if that takes a while.
  const waiting = found.isFIFO()
    ? setTimeout(
        () =>
          process.stderr.write(
            `rxs: waiting for a program to read the named pipe ${named} (Ctrl-C to stop)\n`,
          ),
        1000,
      )
    : undefined;
  let fd: number;
  try {
    // A descriptor's link is followed to the open file (appended to: `>>` may have opened it, and
    // `>` left it empty); anything else is opened only if it is not a link (swapped in since).
    const how = follow ? (found.isFile() ? constants.O_APPEND : 0) : constants.O_NOFOLLOW;
    fd = await openRaw(path, constants.O_WRONLY | constants.O_NOCTTY | how);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    // ENXIO: /dev/stdout when standard output is a socket (as a program's output often is).
    const instead = code === 'ENXIO' ? ' To write to standard output, use --out -.' : '';
    throw new UserError(`Cannot write ${named}: ${message}.${instead}`);
  } finally {
    clearTimeout(waiting);
  }
  const opened = await fstatRaw(fd);
  if (opened.dev !== found.dev || opened.ino !== found.ino) {
    await closeRaw(fd);
    throw new UserError(`Cannot write ${named}: it changed while it was being opened. Run it again.`);
  }
  const stream = createWriteStream(path, { fd });
  return settling(
    named,
    stream,
    undefined,
    async () => undefined,
    async () => undefined,
  );
}

/**
 * Creates the temporary file `temp` that will replace `target` and returns its descriptor (written
 * through, never opened again by name: another user could have swapped the name for a link). It
 * takes the replaced file's permissions when that file is this user's own (an export kept readable
 * by its owner only stays so; a file someone else planted gives nothing, nor its owner).
 */
async function createTemp(temp: string, replaced: Stats | undefined): Promise<number> {
  const fd = await openRaw(temp, 'wx', 0o644);
  try {
    if (replaced?.isFile() && replaced.uid === process.getuid?.()) await fchmodRaw(fd, replaced.mode & 0o777);
    return fd;
  } catch (error) {
    await closeRaw(fd);
    throw error;
  }
}

/**
 * Opens the temporary file of `path`, first removing those its killed writers left; a device or
 * named pipe is written into as it is.
 */
export async function createAtomicFile(path: string): Promise<AtomicFile> {
  const found = await outputTarget(path);
  // A descriptor is reported by the name it was given (/dev/stdout), not as /proc/PID/fd/1.
  if (found.kind === 'special')
    return specialFile(found.path, found.found, found.follow, found.follow ? resolve(path) : found.path);
  const target = found.path;
  await removeAbandonedTemps(dirname(target), basename(target));
  const temp = tempPath(target);
  // Created here, so that a folder that is missing or not writable is a message, not a stream's
  // error event that nobody listens to yet.
  let fd: number;
  try {
    fd = await createTemp(temp, found.replaced);
  } catch (error) {
    // Made, then refused its permissions (or never made: then nothing to remove).
    await rm(temp, { force: true }).catch(() => undefined);
    throw new UserError(await cannotCreate(target, error as NodeJS.ErrnoException));
  }
  // Written to disk as it goes, so that the flush at the commit waits for the last bytes only.
  const stream = durableWriteStream(temp, { flags: 'w', fd }, { syncAtClose: true });
  const discard = () => rm(temp, { force: true });
  return settling(
    target,
    stream,
    dirname(target),
    async () => {
      // The stream flushed the file before it closed (never opened again by name).
      try {
        await rename(temp, target);
      } catch (error) {
        await discard();
        // EBUSY: a file mounted onto the target (as `docker run -v file:file` does) cannot be replaced.
        if ((error as NodeJS.ErrnoException).code === 'EBUSY')
          throw new UserError(
            `Cannot replace ${target}: a file is mounted there (a container's file mount?), and a mounted file is never replaced whole. Write the output into a mounted folder instead.`,
          );
        throw error;
      }
      // The rename itself is durable only once the folder is synced.
      await fsyncPath(dirname(target));
    },
    discard,
  );
}
