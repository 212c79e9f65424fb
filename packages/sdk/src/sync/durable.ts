import { open, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Durability on disk: a file's bytes, or a folder's entries (creations, renames, removals), are
 * flushed with fsync before the next step relies on them.
 */

/** fsync a file or a folder by its path. */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `content` in one step: the bytes go to a temporary file beside it, which is
 * flushed and renamed over the target; then the folder is flushed so the rename survives a crash.
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temp = `${path}.${process.pid}.${Date.now().toString(36)}.tmp`;
  try {
    await writeFile(temp, content, { flag: 'wx', mode: 0o644 });
    await fsyncPath(temp);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await fsyncPath(dirname(path));
}
