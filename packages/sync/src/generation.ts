import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncPath, removeLeftovers, writeFileAtomic } from '@rxs/exchange/export';
import { REPORTS_DIR } from './report-file.js';
import { GENERATION_PREFIX, STATE_FILE, TEMP_GENERATION_PREFIX, type SyncState } from './state.js';

/**
 * A new state being written. Its files go into a temporary folder `DIR/.tmp-gen-<id>` that no
 * reader looks at. `commit` switches to it in a crash-safe order:
 *
 *   1. every file is flushed (the writers fsync on close) and so is the temporary folder;
 *   2. the folder is renamed to `DIR/gen-<id>` and DIR is flushed;
 *   3. `state.json` naming `gen-<id>` replaces the old one by rename (writeFileAtomic);
 *   4. only then older generations are removed.
 *
 * Until step 3 `state.json` names the old generation, which nothing touched; from step 3 on it
 * names the new one, which is complete on disk. A crash leaves at most unreferenced folders, which
 * the next sync removes (`removeStrayGenerations`) while it holds the lock.
 */
export class Generation {
  private settled = false;

  private constructor(
    readonly dir: string,
    readonly id: string,
  ) {}

  static async create(dir: string): Promise<Generation> {
    const id = `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;
    const generation = new Generation(dir, id);
    await mkdir(generation.tempDir);
    return generation;
  }

  /** The folder files are written to until the commit. */
  get tempDir(): string {
    return join(this.dir, `${TEMP_GENERATION_PREFIX}${this.id}`);
  }

  /** The folder's name once committed, as `state.json` names it. */
  get name(): string {
    return `${GENERATION_PREFIX}${this.id}`;
  }

  /** Where a file of this generation is written (before the commit). */
  path(file: string): string {
    return join(this.tempDir, file);
  }

  /** Switches DIR to this generation with `state` (whose `generation` is set here). */
  async commit(state: Omit<SyncState, 'generation'>): Promise<SyncState> {
    if (this.settled) throw new Error('This sync state generation was already committed or discarded.');
    this.settled = true;
    const committed: SyncState = { ...state, generation: this.name };
    await fsyncPath(this.tempDir);
    await rename(this.tempDir, join(this.dir, this.name));
    await fsyncPath(this.dir);
    await writeFileAtomic(join(this.dir, STATE_FILE), `${JSON.stringify(committed, null, 2)}\n`);
    await removeStrayGenerations(this.dir, this.name);
    return committed;
  }

  /** Removes the temporary folder; the current state stays as it is. */
  async discard(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await rm(this.tempDir, { recursive: true, force: true });
  }
}

/** A temporary `state.json` (`tempPath`) of any writer: only a lock holder writes one. */
const isStateTemp = (name: string) => name.startsWith(`.${STATE_FILE}.rxs-`) && name.endsWith('.tmp');

/**
 * Removes from a state folder, and its reports, the temporary files and folders of killed writers
 * (`removeLeftovers`): safe without the lock, so also on a poll that found nothing changed.
 */
export async function removeAbandonedStateTemps(dir: string): Promise<void> {
  await removeLeftovers(dir);
  await removeLeftovers(join(dir, REPORTS_DIR));
}

/**
 * Removes generation folders other than `current` and leftovers of interrupted writes: temporary
 * generations, every temporary `state.json`, and the temporary files and folders of killed writers
 * (state, probe, feed cache, lock, reports). Call only while holding the lock.
 */
export async function removeStrayGenerations(dir: string, current: string | undefined): Promise<void> {
  const stray = (entry: Dirent) =>
    (entry.isDirectory() &&
      ((entry.name.startsWith(GENERATION_PREFIX) && entry.name !== current) ||
        entry.name.startsWith(TEMP_GENERATION_PREFIX))) ||
    (entry.isFile() && isStateTemp(entry.name));
  let removed = false;
  // The generations must go (an error here fails the sync); the rest is tidying.
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!stray(entry)) continue;
    await rm(join(dir, entry.name), { recursive: true, force: true });
    removed = true;
  }
  if (removed) await fsyncPath(dir);
  await removeAbandonedStateTemps(dir);
}
