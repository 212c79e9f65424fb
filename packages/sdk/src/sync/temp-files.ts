import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { processAlive, processSpace } from './process-space.js';

/**
 * Temporary files written beside their target and renamed over it, and the removal of those a
 * killed writer left. The name says whose a file is: `.NAME.HOST-SPACE.PID.STAMP.tmp`, so that a
 * later writer removes only files of processes gone from its own process space (`processSpace`);
 * another machine's or container's stay, as whether their writer still runs cannot be told here.
 */

let space: string | undefined;
/** The host name (letters, digits and dashes only) and the process space's hash. */
function spaceTag(): string {
  space ??= `${hostname().replace(/[^A-Za-z0-9-]/g, '-') || 'host'}-${processSpace()}`;
  return space;
}

/** The prefix of the temporary files of `target` written in this process space. */
export function tempPrefix(target: string): string {
  return `.${basename(target)}.${spaceTag()}.`;
}

/** A new temporary file name for `target`, in its folder, unique to this process and call. */
export function tempPath(target: string): string {
  return join(dirname(target), `${tempPrefix(target)}${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

const TEMP_NAME = /^\.(.+)\.([A-Za-z0-9-]+)\.(\d+)\.[0-9a-z]+\.tmp$/;

/**
 * Whether `name` is a temporary file (of the target named `of`, if given) whose writer is gone:
 * written in this process space by another process that no longer runs.
 */
export function isAbandonedTemp(name: string, of?: string): boolean {
  const parts = TEMP_NAME.exec(name);
  if (!parts || parts[2] !== spaceTag() || (of !== undefined && parts[1] !== of)) return false;
  const pid = Number(parts[3]);
  return pid !== process.pid && !processAlive(pid);
}

/**
 * Removes from `dir` the temporary files (of the target named `of`, if given) that gone writers
 * left. A folder that cannot be listed is left alone: its writer reports that better.
 */
export async function removeAbandonedTemps(dir: string, of?: string): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names)
    if (isAbandonedTemp(name, of)) {
      await rm(join(dir, name), { force: true });
      removed++;
    }
  return removed;
}
