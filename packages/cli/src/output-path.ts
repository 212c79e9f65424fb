import type { Stats } from 'node:fs';
import { lstat, readlink, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse, resolve, sep } from 'node:path';
import { UserError } from './errors.js';

/**
 * What an output path (`--out`, `--report`) names, found before anything is exported:
 * - `file`: a regular file, there or not yet, reached through any symbolic links: it is replaced
 *   whole (atomic-file.ts), as writing to the link would replace it, and the link stays;
 * - `special`: a device, named pipe or socket (`/dev/null`, a FIFO another program reads), or a
 *   descriptor this process was given (`/dev/stdout`, `/dev/fd/3`: a pipe, or a file the shell
 *   opened, appended to as `>>` asks): written into as it is, never replaced by a regular file.
 */
export type OutputTarget =
  /** `replaced`: the file there when the path was checked (lstat), if any. */
  | { kind: 'file'; path: string; replaced: Stats | undefined }
  /**
   * `found`: what the path led to when it was checked; the file opened later must be that one.
   * `follow`: `path` is an open descriptor's /proc link, opened through (else never through a link).
   */
  | { kind: 'special'; path: string; found: Stats; follow: boolean };

/** Symbolic links followed at most (the operating system's own limit on Linux). */
const MAX_LINKS = 40;

/**
 * Whether a symbolic link may be followed (or a named pipe written into): one this user or the
 * administrator (root) made. A link another user made leads where that user chose: `/tmp/reqs.csv -> ~/.ssh/authorized_keys` (or a
 * folder of theirs holding such a link) would have an export, whose cells the service's users
 * write, replace that file. Stricter than Linux's `fs.protected_symlinks`, which trusts a link
 * in a folder of its maker; the output is then refused with a message, not written elsewhere.
 */
function mayFollow(entry: Stats): boolean {
  const uid = process.getuid?.();
  return uid === undefined || entry.uid === uid || entry.uid === 0;
}

/** A process's open descriptor as /proc shows it: a link the kernel follows to the open file itself. */
const DESCRIPTOR_FOLDER = /^\/proc\/\d+(\/task\/\d+)?\/fd$/;

/**
 * Where `path` comes to once every symbolic link on the way is followed, component by component
 * as the kernel does (a `..` after a link leaves the folder the link led to), each link checked by
 * `mayFollow`: `{ path }` with no link left in it, whose last component may not be there yet (a
 * file to be created); or `{ descriptor }`, an open descriptor of this process (`/dev/stdout`,
 * `/dev/fd/3` lead to /proc/PID/fd/N), which names a pipe or socket, or the file the shell opened
 * (perhaps to append to it).
 */
async function followLinks(path: string): Promise<{ path: string } | { descriptor: string }> {
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
    const more = rest.some((part) => part !== '' && part !== '.');
    if (!entry || (more && !entry.isDirectory() && !entry.isSymbolicLink())) {
      // As the kernel: `x/../y` fails with no folder x (`join` would take it as `y`).
      if (more)
        throw new UserError(
          entry
            ? `Cannot write ${path}: ${next} is not a folder. Name a file in an existing folder.`
            : `Cannot write ${path}: the folder ${next} does not exist. Create it, or name a file in an existing folder.`,
        );
      return { path: next };
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
    if (!more && DESCRIPTOR_FOLDER.test(real)) return { descriptor: next };
    const to = await readlink(next);
    rest.unshift(...to.split(sep));
    if (isAbsolute(to)) real = parse(to).root;
  }
  return { path: real };
}

/** Finds what `path` names (see `OutputTarget`); a folder, or a path ending with a slash, is refused. */
export async function outputTarget(path: string): Promise<OutputTarget> {
  if (path.endsWith('/') || (process.platform === 'win32' && path.endsWith('\\')))
    throw new UserError(`Cannot write ${path}: it names a folder (it ends with a slash). Name a file in it.`);
  if (process.platform === 'win32') {
    const replaced = await lstat(resolve(path)).catch(() => undefined);
    return { kind: 'file', path: resolve(path), replaced };
  }
  const followed = await followLinks(path);
  if ('descriptor' in followed) {
    // The kernel follows it to what this process has open: written into, appending to a file.
    const found = await stat(followed.descriptor);
    if (found.isDirectory()) throw new UserError(`Cannot write ${path}: it is an open folder. Name a file.`);
    return { kind: 'special', path: followed.descriptor, found, follow: true };
  }
  // Decided by what the checked walk found, never by the path again (it may have changed since).
  const found = await lstat(followed.path).catch(() => undefined);
  const through = followed.path === resolve(path) ? '' : ` (${path} leads there through a symbolic link)`;
  if (found?.isDirectory())
    throw new UserError(`Cannot write ${followed.path}: it is a folder${through}. Name a file in it.`);
  if (found && !found.isFile() && !found.isSymbolicLink()) {
    // A named pipe (or device) another user made would hand them the export: `mkfifo /tmp/reqs.csv`
    // and read it. Linux's `fs.protected_fifos` guards only opens that may create the file.
    if (!mayFollow(found))
      throw new UserError(
        `Cannot write ${path}: ${followed.path} is a named pipe or device another user made; rxs does not write into it (that user would get the export). Name another file, or remove it.`,
      );
    return { kind: 'special', path: followed.path, found, follow: false };
  }
  return { kind: 'file', path: followed.path, replaced: found };
}
