import type { Writable } from 'node:stream';
import { whenDrained } from '../export/writers/output.js';

/** Text and bytes are written in pieces of about this many bytes. */
const PIECE_BYTES = 1024 * 1024;
/** At most this many bytes wait in the stream before `flush` waits for it. */
const QUEUED_BYTES = 8 * 1024 * 1024;

/**
 * Gathers text and bytes for a stream and writes them in large pieces with backpressure (flat
 * memory, one write per piece instead of one per row; a few pieces in flight). Each piece is a fresh buffer: a stream may
 * keep the chunks it is given until they are written.
 */
export class PieceWriter {
  private bytes = Buffer.allocUnsafe(PIECE_BYTES);
  private length = 0;
  /** Pieces complete before `bytes`, waiting for the next flush, and their size. */
  private sealed: Buffer[] = [];
  private sealedBytes = 0;
  /** Bytes handed to the stream so far. */
  private handed = 0;

  constructor(private readonly out: Writable) {}

  /** Where the next byte pushed will be in the stream. */
  get offset(): number {
    return this.handed + this.sealedBytes + this.length;
  }

  push(text: string): void {
    this.reserve(text.length * 3); // UTF-8 takes at most 3 bytes per UTF-16 code unit
    this.length += this.bytes.write(text, this.length);
  }

  pushBytes(bytes: Uint8Array): void {
    if (bytes.length >= PIECE_BYTES) {
      // A large range (unchanged rows copied from the previous output) is a piece of its own: one
      // copy (the caller reuses its buffer), where gathering it would grow a buffer and copy again.
      this.seal();
      this.sealed.push(Buffer.from(bytes));
      this.sealedBytes += bytes.length;
      return;
    }
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** True when enough is gathered to be worth writing. */
  get full(): boolean {
    return this.length >= PIECE_BYTES || this.sealed.length > 0;
  }

  async flush(): Promise<void> {
    this.seal();
    if (this.sealed.length === 0) return;
    const pieces = this.sealed;
    this.handed += this.sealedBytes;
    this.sealed = [];
    this.sealedBytes = 0;
    const out = this.out;
    if (out.errored) throw out.errored;
    for (const piece of pieces) out.write(piece);
    // A few pieces may wait in the stream (bounded memory) while the next ones are gathered.
    if (out.writableLength >= QUEUED_BYTES) await whenDrained(out);
  }

  /** The gathered bytes become a piece of their own, after those sealed before. */
  private seal(): void {
    if (this.length === 0) return;
    this.sealed.push(this.bytes.subarray(0, this.length));
    this.sealedBytes += this.length;
    this.bytes = Buffer.allocUnsafe(PIECE_BYTES);
    this.length = 0;
  }

  private reserve(room: number): void {
    if (this.bytes.length - this.length >= room) return;
    const larger = Buffer.allocUnsafe(Math.max(PIECE_BYTES, 2 * this.length + room)); // doubling: linear time
    this.bytes.copy(larger, 0, 0, this.length);
    this.bytes = larger;
  }
}
