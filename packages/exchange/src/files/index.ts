import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { finished } from 'node:stream/promises';

/** fsync a file or a folder by its path: its bytes, or its entries (a rename), survive a crash. */
export const fsyncPath = (path: string): Promise<void> =>
  open(path, 'r').then((handle) => handle.sync().finally(() => handle.close()));

/** This program's temporary files and folders: `.NAME.rxs-RANDOM.tmp`, NAME cut to fit 255 bytes. */
const TEMP_NAME = /^\..*\.rxs-[0-9a-f]{16}\.tmp$/s;
const tempPrefix = (target: string) => `.${basename(target).slice(0, 50)}.rxs-`;
export const tempPath = (target: string): string =>
  join(dirname(target), `${tempPrefix(target)}${randomBytes(8).toString('hex')}.tmp`);

/**
 * Removes from `dir` this user's temporary files and folders whose writer was killed: those unchanged
 * for a day, and at once those `locked` names (the caller's lock makes it their only writer).
 */
export async function removeLeftovers(dir: string, locked: (name: string) => boolean = () => false) {
  for (const name of (await readdir(dir).catch(() => [])).filter((name) => TEMP_NAME.test(name))) {
    const entry = await lstat(join(dir, name)).catch(() => undefined);
    const mine = entry !== undefined && entry.uid === (process.getuid?.() ?? entry.uid);
    if (mine && (locked(name) || Date.now() - entry.mtimeMs > 864e5))
      await rm(join(dir, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

export type AtomicWrite = Awaited<ReturnType<typeof openAtomic>>;

/**
 * Replaces `target` whole on `commit`, or leaves it untouched (`abort`, a failure, a crash): the bytes
 * go to a temporary file beside it, created with O_CREAT|O_EXCL (never through a link planted at
 * its name), flushed, given `mode` and renamed over `target`; then the folder is flushed too.
 * `locked`: the caller holds a lock over `target` (rxs sync's), so its earlier temporary files are abandoned.
 */
export async function openAtomic(target: string, mode?: number, locked = false) {
  await removeLeftovers(dirname(target), locked ? (name) => name.startsWith(tempPrefix(target)) : undefined);
  const temp = tempPath(target);
  const fd = await open(temp, 'wx', 0o644);
  // A write error stays on the stream (`errored`), for the writer and `commit` to find.
  const stream = createWriteStream(temp, { fd }).on('error', () => undefined);
  const discard = () => rm(temp, { force: true }).finally(() => stream.destroy());
  const publish = async () => {
    if (!stream.writableFinished) await finished(stream.end());
    if (mode !== undefined) await chmod(temp, mode);
    await fsyncPath(temp);
    await rename(temp, target);
    await fsyncPath(dirname(target));
  };
  let settled: Promise<void> | undefined; // by the first of commit and abort
  const commit = () => (settled ??= publish().catch((error) => discard().then(() => Promise.reject(error))));
  return { stream, commit, abort: () => (settled ??= discard()).catch(() => undefined) };
}

export const writeFileAtomic = (path: string, content: string): Promise<void> =>
  openAtomic(path).then((file) => (file.stream.end(content), file.commit()));

/** A new private scratch folder (spooled rows, snapshots to compare, an upload), named as temporary files are. */
export async function makeScratchFolder(name: string, parent: string = tmpdir()): Promise<string> {
  await removeLeftovers(parent);
  const folder = tempPath(join(parent, name));
  return mkdir(folder, { mode: 0o700 }).then(() => folder);
}
