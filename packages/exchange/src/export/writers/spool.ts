import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { makeScratchFolder } from '../../files/index.js';
import { endOutput, writeChunk } from './output.js';

/**
 * Items parked on disk as JSON lines. Formats that must know everything before their first byte
 * (all columns, all link targets) keep records here instead of in memory, then replay them.
 */
export class Spool<T> {
  private dir: string | undefined;
  private file: string | undefined;
  private stream: WriteStream | undefined;

  /** `tempDir`: where its folder goes (the system's temporary folder when not given). */
  constructor(private readonly tempDir?: string) {}

  async append(item: T): Promise<void> {
    if (!this.stream) {
      this.dir = await makeScratchFolder('rxs-export', this.tempDir);
      this.file = join(this.dir, 'spool.jsonl');
      // 'wx': the folder is new and empty; never a file (or link) another put there.
      this.stream = createWriteStream(this.file, { flags: 'wx' });
    }
    // JSON escapes line breaks inside strings, so one item is exactly one line.
    await writeChunk(this.stream, `${JSON.stringify(item)}\n`);
  }

  /** The items in the order they were appended. Ends appending. */
  async *replay(): AsyncGenerator<T> {
    if (!this.stream || !this.file) return;
    await endOutput(this.stream);
    const lines = createInterface({ input: createReadStream(this.file, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) if (line !== '') yield JSON.parse(line) as T;
  }

  async dispose(): Promise<void> {
    if (this.stream && !this.stream.closed) {
      this.stream.destroy();
      await once(this.stream, 'close');
    }
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
    this.stream = undefined;
    this.dir = this.file = undefined;
  }
}
