import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import {
  earlierProcessSpace,
  LIFE_LENGTH,
  once,
  processLife,
  processSpace,
  writerGone,
} from './process-space.js';

/**
 * Temporary files (and folders) written beside their target and renamed over it, and the removal
 * of those a killed writer left. The name says whose one is: `.NAME.HOST-SPACE.PID.STAMP.tmp`, the
 * stamp starting with the writer's `processLife`, so that a later writer removes only those of
 * processes gone from its own process space (`processSpace`), or of an earlier process of its own
 * PID; another machine's or container's stay, as whether their writer still runs cannot be told.
 */

const hostTag = () => hostname().replace(/[^A-Za-z0-9-]/g, '-') || 'host';
/** The host name (letters, digits and dashes only) and the process space's hash. */
const spaceTag = once(() => `${hostTag()}-${processSpace()}`);
/** The same as versions before the machine id counted (their files are judged by PID only). */
const earlierSpaceTag = once(() => `${hostTag()}-${earlierProcessSpace()}`);
/** Where the life is unknown (not Linux): never a boot's six hex digits. */
const UNKNOWN_LIFE = 'z'.repeat(LIFE_LENGTH);

/** A target's name longer than this (in bytes) is shortened in its temporary names. */
const LONG_NAME_BYTES = 120;

/**
 * How a temporary name names its target: the name itself, or for a long one its first 80 bytes,
 * `~` and a hash of the whole: the rest of a temporary name takes about 60 bytes more, and a name
 * may have 255 (a 204-byte output name failed with ENAMETOOLONG).
 */
function targetTag(name: string): string {
  if (Buffer.byteLength(name) <= LONG_NAME_BYTES) return name;
  let head = '';
  for (const char of name) {
    if (Buffer.byteLength(head + char) > 80) break;
    head += char;
  }
  return `${head}~${createHash('sha256').update(name).digest('hex').slice(0, 12)}`;
}

/** The prefix of the temporary files of `target` written in this process space. */
export function tempPrefix(target: string): string {
  return `.${targetTag(basename(target))}.${spaceTag()}.`;
}

let made = 0;
/**
 * A new temporary name for `target`, in its folder, unique to this call: worker threads and copies
 * of this module share the PID and the life, not the count, hence the random part.
 */
export function tempPath(target: string): string {
  return join(
    dirname(target),
    `${tempPrefix(target)}${process.pid}.${processLife() ?? UNKNOWN_LIFE}${(made++).toString(36)}${randomBytes(4).toString('hex')}.tmp`,
  );
}

// `s`: a target's name may hold line breaks.
const TEMP_NAME = /^\.(.+)\.([A-Za-z0-9-]+)\.(\d+)\.([0-9a-z]+)\.tmp$/s;

/** The target and the writer named by a temporary name, if `name` is one. */
export function tempNameParts(
  name: string,
): { target: string; space: string; pid: number; stamp: string } | undefined {
  const parts = TEMP_NAME.exec(name);
  return parts ? { target: parts[1]!, space: parts[2]!, pid: Number(parts[3]), stamp: parts[4]! } : undefined;
}

/**
 * Whether `name` is a temporary name (of the target named `of`, if given) whose writer is gone:
 * written in this process space by a process that no longer runs, or by an earlier one of this
 * process's PID in this boot.
 */
export function isAbandonedTemp(name: string, of?: string): boolean {
  const temp = tempNameParts(name);
  if (!temp || (of !== undefined && temp.target !== targetTag(of))) return false;
  // `earlier`: written by an earlier version on this machine, by its PID, its life unknown.
  const space = temp.space === spaceTag() ? 'this' : temp.space === earlierSpaceTag() ? 'earlier' : undefined;
  return (
    space !== undefined &&
    writerGone(temp.pid, space === 'this' ? temp.stamp.slice(0, LIFE_LENGTH) : undefined, space)
  );
}

/**
 * Whether an entry judged abandoned may be removed: it is this user's (in a folder others share,
 * such as /tmp, theirs are theirs to remove), and a folder no one else may write into. A folder is
 * removed by listing it after it was checked: were others able to write in it, they could swap a
 * subfolder for a link to anything this user may delete in between, and the removal would follow it
 * (a planted "abandoned" folder in /tmp made an export delete a root-owned folder's files).
 */
async function mayRemove(path: string): Promise<boolean> {
  const uid = process.getuid?.();
  if (uid === undefined) return true; // not POSIX: no owners to tell apart
  const entry = await lstat(path).catch(() => undefined);
  return entry !== undefined && entry.uid === uid && (!entry.isDirectory() || (entry.mode & 0o022) === 0);
}

/** Removes `path`, a temporary file or folder judged abandoned, if it may (`mayRemove`); tidying only. */
export async function removeAbandoned(path: string): Promise<void> {
  if (await mayRemove(path)) await rm(path, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * Removes from `dir` the temporary files and folders (of the target named `of`, if given) that
 * gone writers left. Tidying only: what cannot be listed or removed is left (its writer, or the
 * next one, reports a real problem better).
 */
export async function removeAbandonedTemps(dir: string, of?: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) if (isAbandonedTemp(name, of)) await removeAbandoned(join(dir, name));
}

/**
 * A new, private scratch folder for work that is thrown away (an export's spooled rows, a
 * comparison's snapshots, an upload): `parent/.NAME.HOST-SPACE.PID.STAMP.tmp`, in the system's
 * temporary folder unless told otherwise. Named as the temporary files are, so that each new one
 * first removes those that killed processes left: a killed export of a million records left
 * hundreds of megabytes behind for good.
 */
export async function makeScratchFolder(name: string, parent: string = tmpdir()): Promise<string> {
  await removeAbandonedTemps(parent, name);
  const folder = tempPath(join(parent, name));
  // Readable by its owner only, as mkdtemp makes them: the system's temporary folder is shared.
  await mkdir(folder, { mode: 0o700 });
  return folder;
}
