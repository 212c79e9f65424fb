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
export type OutputTarget =
  | { kind: 'file'; path: string }
  /** `found`: what the path opened when it was checked; the file opened later must be that one. */
  | { kind: 'special'; path: string; found: Stats };

/** Symbolic links followed at most (the operating system's own limit on Linux). */
const MAX_LINKS = 40;

/**
 * Whether a symbolic link may be followed: one this user or the administrator (root) made. A link
 * another user made leads where that user chose: `/tmp/reqs.csv -> ~/.ssh/authorized_keys` (or a
 * folder of theirs holding such a link) would have an export, whose cells the service's users
 * write, replace that file. Stricter than Linux's `fs.protected_symlinks`, which trusts a link
 * in a folder of its maker; the output is then refused with a message, not written elsewhere.
 */
function mayFollow(entry: Stats): boolean {
  const uid = process.getuid?.();
  return uid === undefined || entry.uid === uid || entry.uid === 0;
}

/**
 * The path `path` comes to once every symbolic link on the way is followed, component by
 * component as the kernel does (a `..` after a link leaves the folder the link led to), each link
 * checked by `mayFollow`. Where a component is not there (a file to be created, or a missing
 * folder that the caller reports), the rest is appended as it is.
 */
async function followLinks(path: string): Promise<string> {
  // Not `resolve`: it would take a `..` after a link lexically, where the kernel goes up from
  // where the link led.
  const absolute = isAbsolute(path) ? path : `${process.cwd()}${sep}${path}`;
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
    if (!entry) {
      // `x/../y` with no x fails where the kernel resolves it; `join` would take it as `y`.
      if (rest.includes('..'))
        throw new UserError(
          `Cannot write ${path}: the folder ${next} does not exist. Create it, or name another file.`,
        );
      return join(next, ...rest);
    }
    if (!entry.isSymbolicLink()) {
      real = next;
      continue;
    }
    if (++links > MAX_LINKS)
      throw new UserError(
        `Cannot write ${path}: it leads through more than ${MAX_LINKS} symbolic links (a loop?). Name the file itself.`,
      );
    if (!mayFollow(entry))
      throw new UserError(
        `Cannot write ${path}: ${next} is a symbolic link another user made; rxs does not follow it (it would write where that user chose). Name the file itself, or remove the link.`,
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
  if (opened && !opened.isFile() && !opened.isDirectory())
    return { kind: 'special', path: resolve(path), found: opened };
  const found = await stat(followed).catch(() => undefined);
  if (found?.isDirectory() || opened?.isDirectory())
    throw new UserError(`Cannot write ${followed}: it is a folder${through}. Name a file in it.`);
  if (opened && !found)
    throw new UserError(
      `Cannot write ${path}: it leads to a file that has no name to write beside (${followed}). Name the file itself.`,
    );
  return { kind: 'file', path: followed };
}
