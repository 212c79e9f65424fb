import { constants, createWriteStream } from 'node:fs';
import { open, readlink, realpath, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { openAtomic, type AtomicWrite } from '@rxs/exchange/export';
import { UserError } from './errors.js';

/** An output; `scratchDir`: where an export spools its rows (beside the file; for a device, anywhere). */
export type AtomicFile = AtomicWrite & { path: string; scratchDir?: string; failure(e: unknown): unknown };

function cannotWrite(path: string, error: NodeJS.ErrnoException): UserError {
  const why = {
    ENOENT: `the folder ${dirname(path)} does not exist. Create it, or name a file in an existing folder.`,
    ENOTDIR: `a part of ${dirname(path)} is not a folder. Name a file in an existing folder.`,
    ENOSPC: 'the disk is full. Free some space and run it again.',
    EPIPE: 'the program reading it stopped before the end (EPIPE).',
    ENXIO: `${error.message}. To write to standard output, use --out -.`,
  }[error.code ?? ''];
  return new UserError(`Cannot write ${path}: ${why ?? error.message}`);
}

/** Where `path` leads: through its links, as the kernel follows them, also to a file not there yet. */
const placeOf = async (path: string): Promise<string> => {
  const link = await readlink(path).catch(() => undefined);
  return link === undefined ? path : placeOf(resolve(await realpath(dirname(path)), link));
};

/**
 * Opens an output (`--out`, `--report`) as curl -o does, where the path leads: a file is replaced whole
 * (`openAtomic`); a device, pipe or descriptor (/dev/stdout, /dev/fd/3) is written into (appended: `>>`).
 * `locked`: the caller's lock (rxs sync's) makes it the file's only writer.
 */
export async function createAtomicFile(path: string, locked = false): Promise<AtomicFile> {
  let target = path;
  try {
    // Not there yet (ENOENT): created; any other failure (ENOTDIR, EACCES) is the message.
    const found = await stat(path).catch((e) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
    if (found?.isDirectory() || path.endsWith('/'))
      throw new UserError(`Cannot write ${path}: it names a folder. Name a file in it.`);
    if (found && (!found.isFile() || /^\/(dev|proc\/\w+)\/(fd\/\d+|stdout|stderr)$/.test(path))) {
      const fd = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOCTTY);
      const stream = createWriteStream(path, { fd }).on('error', () => undefined);
      const commit = () => (stream.writableFinished ? Promise.resolve() : finished(stream.end()));
      return outputFile(path, undefined, { stream, commit, abort: async () => void stream.destroy() });
    }
    target = await placeOf(path);
    // This user's file keeps its permissions (private stays private); another user's gives none.
    const mode = found && found.uid === process.getuid?.() ? found.mode & 0o777 : undefined;
    return outputFile(target, dirname(target), await openAtomic(target, mode, locked));
  } catch (error) {
    throw error instanceof UserError ? error : cannotWrite(target, error as NodeJS.ErrnoException);
  }
}

function outputFile(path: string, scratchDir: string | undefined, write: AtomicWrite): AtomicFile {
  const failure = (error: unknown) =>
    error instanceof Error && error === write.stream.errored ? cannotWrite(path, error) : error;
  const commit = () =>
    write.commit().catch((error) => Promise.reject(error.code ? cannotWrite(path, error) : error));
  return { ...write, path, scratchDir, commit, failure };
}
