import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { endOutput, writeChunk } from '../export/writers/output.js';
import { fsyncPath } from './durable.js';

/**
 * A file of JSON lines written front to back with backpressure (flat memory), flushed to disk by
 * `close`. JSON escapes line breaks inside strings, so one value is exactly one line.
 */
export class JsonLinesSink {
  private readonly stream: WriteStream;
  private closed = false;
  count = 0;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { flags: 'wx', mode: 0o644 });
  }

  /** Appends a line already serialized with `JSON.stringify` (no line break of its own). */
  async appendLine(line: string): Promise<void> {
    await writeChunk(this.stream, `${line}\n`);
    this.count++;
  }

  append(value: unknown): Promise<void> {
    return this.appendLine(JSON.stringify(value));
  }

  /** Ends the file and flushes it to disk. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await endOutput(this.stream);
    await fsyncPath(this.path);
  }

  /** Stops writing without flushing (the file is about to be removed). */
  async destroy(): Promise<void> {
    this.closed = true;
    const stream = this.stream;
    if (stream.closed) return;
    const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
    // Writes still pending fail with ERR_STREAM_DESTROYED: expected, the file is being dropped.
    stream.on('error', () => undefined);
    stream.destroy();
    await closed;
  }
}

/** The values of a JSON lines file, one at a time (flat memory); blank lines are skipped. */
export async function* readJsonLines<T>(path: string): AsyncGenerator<T> {
  const input = createReadStream(path, 'utf8');
  const lines = createInterface({ input, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const line of lines) {
      number++;
      if (line === '') continue;
      let value: T;
      try {
        value = JSON.parse(line) as T;
      } catch {
        throw new Error(`${path}, line ${number}: not valid JSON; the sync state is damaged.`);
      }
      yield value;
    }
  } finally {
    lines.close();
    input.destroy();
  }
}
