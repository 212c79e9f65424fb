import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { processAlive } from '@rxs/sync';
import { KeptFileStream } from './kept-file-stream.js';

/**
 * Finished listings on disk. A revision's listing (`GET /records/?context__knowledge_unit_topic_id=REV`
 * without other filters) is written to a file while it is first streamed, named by the listing's
 * ETag; the next request with the same tag gets the file's bytes with `sendfile`-like cost instead of
 * the database building 100 MB of JSON again. The tag moves with every change under the revision
 * (listing-tag.ts), so a changed listing never finds an old file: nothing is ever invalidated, old
 * files only age out.
 *
 * A file is kept only when the tag read after the listing was streamed equals the tag read before
 * it: no change committed in between, so the bytes are exactly the listing at that tag. Files live
 * in a directory of this process (`run-<pid>-<random>`), removed on close; directories of processes
 * that are gone are removed on open, so a restored database can never meet files of its future.
 * Memory stays flat: the file is written at the listing's pace, a buffer at a time.
 */

export interface ListingCacheOptions {
  /** The directory holding every server's run directory (default `<data dir>/listing-cache`). */
  dir: string;
  /** Bytes of finished listings kept at most; the least recently used go first. */
  maxBytes: number;
}

/** A kept listing, opened: its bytes as a stream, and their count (the Content-Length). */
export interface CachedListing {
  size: number;
  stream: Readable;
}

interface Entry {
  scope: string;
  size: number;
  used: number;
}

/** Bytes a file being written may hold before the listing waits for the disk. */
const FILE_BUFFER_BYTES = 4 * 1024 * 1024;
/** Bytes per read of a kept file: large reads keep a listing near the speed of serving it from memory. */
const READ_BYTES = 4 * 1024 * 1024;
const RUN_DIR = /^run-(\d+)-[0-9a-f]+$/;
/** Run directories of caches open in this process (tests run several servers in one). */
const openRuns = new Set<string>();

function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

/** Until the file wants more, or failed (then the listing goes on without it). */
function drained(file: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      file.off('drain', done);
      file.off('close', done);
      resolve();
    };
    file.on('drain', done);
    file.on('close', done);
  });
}

export class ListingCache {
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  private uses = 0;
  private closed = false;

  private constructor(
    private readonly runDir: string,
    private readonly maxBytes: number,
  ) {}

  /** Creates this process's run directory, after removing those of processes that are gone. */
  static async open(options: ListingCacheOptions): Promise<ListingCache> {
    if (!Number.isFinite(options.maxBytes) || options.maxBytes <= 0) {
      throw new Error(`The listing cache needs a positive size, got ${options.maxBytes} bytes.`);
    }
    await mkdir(options.dir, { recursive: true });
    for (const name of await readdir(options.dir)) {
      const match = RUN_DIR.exec(name);
      if (!match) continue;
      const path = join(options.dir, name);
      const pid = Number(match[1]);
      // Same pid in a container restart, or another server of this process: only unknown ones go.
      if (pid === process.pid ? !openRuns.has(path) : !processAlive(pid))
        await rm(path, { recursive: true, force: true });
    }
    const runDir = join(options.dir, `run-${process.pid}-${randomBytes(6).toString('hex')}`);
    await mkdir(runDir, { recursive: true });
    openRuns.add(runDir);
    return new ListingCache(runDir, options.maxBytes);
  }

  /** Removes this process's files. Listings being written are abandoned. */
  async close(): Promise<void> {
    this.closed = true;
    openRuns.delete(this.runDir);
    this.entries.clear();
    this.total = 0;
    await rm(this.runDir, { recursive: true, force: true });
  }

  /**
   * The kept bytes of the listing of `revisionId` at `tag`, or undefined. `held` says how many of
   * the bytes given to the consumer it still holds (kept-file-stream.ts reuses the buffers of the
   * others); by default all, so nothing is reused.
   */
  async find(
    tenantId: string,
    revisionId: string,
    tag: string,
    held: () => number = () => Infinity,
  ): Promise<CachedListing | undefined> {
    const name = this.fileName(tenantId, revisionId, tag);
    const entry = this.entries.get(name);
    if (!entry || this.closed) return undefined;
    let handle: FileHandle;
    try {
      // Open before answering: a file evicted after this still reads whole through its handle.
      handle = await open(join(this.runDir, name), 'r');
    } catch {
      this.forget(name);
      return undefined;
    }
    const { size } = await handle.stat();
    if (size !== entry.size) {
      await handle.close();
      this.forget(name);
      return undefined;
    }
    entry.used = ++this.uses;
    return { size, stream: new KeptFileStream(handle, size, READ_BYTES, held) };
  }

  /**
   * The response body `parts`, passed through unchanged while they are written to a file. When the
   * body was read to its end and `unchanged()` says the listing's tag is still `tag`, the file is
   * kept; otherwise (client gone, tag moved, write error, write too slow) it is removed.
   */
  record(
    tenantId: string,
    revisionId: string,
    tag: string,
    parts: AsyncIterable<Buffer | string>,
    unchanged: () => Promise<boolean>,
  ): AsyncGenerator<Buffer | string> {
    const cache = this;
    const name = this.fileName(tenantId, revisionId, tag);
    const scope = digest(tenantId, revisionId);
    return (async function* () {
      const temp = join(cache.runDir, `${name}.${randomBytes(4).toString('hex')}.tmp`);
      let file: WriteStream | undefined = cache.closed
        ? undefined
        : createWriteStream(temp, { highWaterMark: FILE_BUFFER_BYTES });
      let failed = false;
      file?.on('error', () => {
        failed = true;
      });
      let size = 0;
      let complete = false;
      try {
        for await (const part of parts) {
          if (file && !failed) {
            size += Buffer.byteLength(part);
            // The file takes the listing's pace: a disk slower than the client holds the listing
            // (memory stays at the file's buffer), it does not pile the bytes up.
            if (!file.write(part)) await drained(file);
          }
          yield part;
        }
        complete = true;
      } finally {
        if (file) void cache.settle(file, temp, name, scope, size, complete && !failed, unchanged);
        file = undefined;
      }
    })();
  }

  /** Keeps the written file under its name, or removes it. Never throws: the answer was sent. */
  private async settle(
    file: WriteStream,
    temp: string,
    name: string,
    scope: string,
    size: number,
    keep: boolean,
    unchanged: () => Promise<boolean>,
  ): Promise<void> {
    try {
      const closed = new Promise<void>((resolve) => file.once('close', () => resolve()));
      if (keep) file.end();
      else file.destroy();
      await closed;
      const kept =
        keep &&
        !file.errored &&
        size <= this.maxBytes &&
        !this.closed &&
        (await unchanged().catch(() => false));
      if (!kept || this.closed) {
        await unlink(temp).catch(() => {});
        return;
      }
      await rename(temp, join(this.runDir, name));
      this.forget(name);
      // Older tags of the same listing can never be asked for again: tags only move forward.
      for (const [other, entry] of this.entries) if (entry.scope === scope) await this.evict(other);
      this.entries.set(name, { scope, size, used: ++this.uses });
      this.total += size;
      while (this.total > this.maxBytes) {
        let oldest: string | undefined;
        let oldestUse = Infinity;
        for (const [other, entry] of this.entries) {
          if (entry.used < oldestUse) [oldest, oldestUse] = [other, entry.used];
        }
        if (oldest === undefined) break;
        await this.evict(oldest);
      }
    } catch {
      await unlink(temp).catch(() => {});
    }
  }

  /** Bytes kept now (tests and diagnostics). */
  get keptBytes(): number {
    return this.total;
  }

  private fileName(tenantId: string, revisionId: string, tag: string): string {
    return `${digest(tenantId, revisionId)}-${digest(tag)}.json`;
  }

  private forget(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.entries.delete(name);
    this.total -= entry.size;
  }

  private async evict(name: string): Promise<void> {
    this.forget(name);
    await unlink(join(this.runDir, name)).catch(() => {});
  }
}
