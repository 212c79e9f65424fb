import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';

/** Buffers a stream keeps for reading into again. */
const SPARE = 2;
/** Pushed buffers followed until the consumer lets go of them; older ones are left to the collector. */
const FOLLOWED = 4;

/**
 * A kept listing's file as a stream that reads into a few buffers it reuses, instead of a new one
 * per read as `createReadStream` does. A gigabyte read 4 MiB at a time would otherwise allocate 250
 * buffers that only the garbage collector frees; once they reach the old generation (as after any
 * large listing built in the same process), only full collections free them, and a large listing
 * would pay for many of them.
 *
 * A buffer is read into again only when nothing can still hold it. The consumer takes chunks in
 * order and `held()` says how many of the bytes it was given it still holds (for an HTTP response:
 * `writableLength`, which counts a write until it completes): with this stream's own buffered bytes,
 * they are the newest chunks pushed; every chunk before them is free.
 */
export class KeptFileStream extends Readable {
  private position = 0;
  private readonly spare: Buffer[] = [];
  /** Pushed chunks that may still be held, oldest first: each buffer and the bytes of it pushed. */
  private sent: { buffer: Buffer; length: number }[] = [];

  constructor(
    private readonly handle: FileHandle,
    private readonly size: number,
    private readonly bufferBytes: number,
    private readonly held: () => number,
  ) {
    super({ highWaterMark: bufferBytes });
  }

  override _read(): void {
    this.release();
    const length = Math.min(this.bufferBytes, this.size - this.position);
    if (length <= 0) {
      this.push(null);
      return;
    }
    const buffer = this.spare.pop() ?? Buffer.allocUnsafeSlow(this.bufferBytes);
    this.handle.read(buffer, 0, length, this.position).then(
      ({ bytesRead }) => {
        if (bytesRead === 0) {
          this.destroy(new Error(`The kept listing ended at byte ${this.position} of ${this.size}.`));
          return;
        }
        this.position += bytesRead;
        this.sent.push({ buffer, length: bytesRead });
        if (this.sent.length > FOLLOWED) this.sent.shift();
        this.push(buffer.subarray(0, bytesRead));
      },
      (error: Error) => this.destroy(error),
    );
  }

  /** Moves the chunks nobody holds any more to the spare buffers. */
  private release(): void {
    let held = this.readableLength + this.held();
    let newestHeld = this.sent.length;
    while (newestHeld > 0 && held > 0) held -= this.sent[--newestHeld]!.length;
    for (const { buffer } of this.sent.slice(0, newestHeld))
      if (this.spare.length < SPARE) this.spare.push(buffer);
    this.sent = this.sent.slice(newestHeld);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.handle.close().then(
      () => callback(error),
      () => callback(error),
    );
  }
}
