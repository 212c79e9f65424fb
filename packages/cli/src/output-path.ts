import type { Stats } from 'node:fs';
import { lstat, readlink, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse, resolve, sep } from 'node:path';
import { UserError } from './errors.js';

/**
 * What an output path (`--out`, `--report`) names, found before anything is exported:
 * - `file`: a regular file, there or not yet, reached through any symbolic links: it is replaced
 *   whole (atomic-file.ts), as writing to the link would replace it, and the link stays;
 * - `special`: a device, named pipe or socket (`/dev/null`, `/dev/stdout`, a FIFO another program
 *   reads): written into as it is, never replaced by a regular file.
 */
export type OutputTarget = { kind: 'file'; path: string } | { kind: 'special'; path: string };

/** Symbolic links followed at most (the operating system's own limit on Linux). */
const MAX_LINKS = 40;

/**
 * Whether the link `entry` in the real folder `folder` may be followed, by the rule Linux applies
 * when it opens one (`fs.protected_symlinks`), which a rename onto the file it names would not:
 * in a sticky folder anyone may write to (/tmp), only a link of this user or of the folder's owner.
 * Else another user could plant `/tmp/reqs.csv -> ~/.ssh/authorized_keys` (or a folder link on the
 * way to it) and have an export, whose cells the service's users write, replace that file.
 */
async function mayFollow(entry: Stats, folder: string): Promise<boolean> {
  const uid = process.getuid?.();
  if (uid === undefined) return true; // not POSIX: no such folders
  const parent = await stat(folder);
  const sharedSticky = (parent.mode & 0o1002) === 0o1002; // sticky and writable by anyone
  return !sharedSticky || entry.uid === uid || entry.uid === parent.uid;
}

/**
 * The path `path` comes to once every symbolic link on the way is followed, component by
 * component as the kernel does (a `..` after a link leaves the folder the link led to), each link
 * checked by `mayFollow`. Where a component is not there (a file to be created, or a missing
 * folder that the caller reports), the rest is appended as it is.
 */
async function followLinks(path: string): Promise<string> {
  const absolute = resolve(path);
  let real = parse(absolute).root;
  const rest = absolute.slice(real.length).split(sep);
  let links = 0;
  while (rest.length > 0) {
    const name = rest.shift()!;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      real = dirname(real); // `real` holds no link: its parent is the folder above
      continue;
    }
    const next = join(real, name);
    const entry = await lstat(next).catch(() => undefined);
    if (!entry) return join(next, ...rest);
    if (!entry.isSymbolicLink()) {
      real = next;
      continue;
    }
    if (++links > MAX_LINKS)
      throw new UserError(
        `Cannot write ${path}: it leads through more than ${MAX_LINKS} symbolic links (a loop?). Name the file itself.`,
      );
    if (!(await mayFollow(entry, real)))
      throw new UserError(
        `Cannot write ${path}: ${next} is a symbolic link another user made in a folder anyone may write to; it is not followed. Remove it, or write the output elsewhere.`,
      );
    const to = await readlink(next);
    rest.unshift(...to.split(sep));
    if (isAbsolute(to)) real = parse(to).root;
  }
  return real;
}

/** Finds what `path` names (see `OutputTarget`); a folder, or a path ending with a slash, is refused. */
export async function outputTarget(path: string): Promise<OutputTarget> {
  if (path.endsWith('/') || (process.platform === 'win32' && path.endsWith('\\')))
    throw new UserError(`Cannot write ${path}: it names a folder (it ends with a slash). Name a file in it.`);
  if (process.platform === 'win32') return { kind: 'file', path: resolve(path) };
  // Every link on the way is checked, also on the way to a device.
  const followed = await followLinks(path);
  const through = followed === resolve(path) ? '' : ` (${path} leads there through a symbolic link)`;
  // What the path opens, as the kernel sees it: also links only it can follow (/dev/stdout's
  // /proc/self/fd/1 names "pipe:[…]", which is not a path).
  const opened = await stat(path).catch(() => undefined);
  if (opened && !opened.isFile() && !opened.isDirectory()) return { kind: 'special', path: resolve(path) };
  const found = await stat(followed).catch(() => undefined);
  if (found?.isDirectory() || opened?.isDirectory())
    throw new UserError(`Cannot write ${followed}: it is a folder${through}. Name a file in it.`);
  if (opened && !found)
    throw new UserError(
      `Cannot write ${path}: it leads to a file that has no name to write beside (${followed}). Name the file itself.`,
    );
  return { kind: 'file', path: followed };
}
