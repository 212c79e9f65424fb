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
  /** Bytes handed to the stream so far. */
  private handed = 0;

  constructor(private readonly out: Writable) {}

  /** Where the next byte pushed will be in the stream. */
  get offset(): number {
    return this.handed + this.length;
  }

  push(text: string): void {
    this.reserve(text.length * 3); // UTF-8 takes at most 3 bytes per UTF-16 code unit
    this.length += this.bytes.write(text, this.length);
  }

  pushBytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** True when enough is gathered to be worth writing. */
  get full(): boolean {
    return this.length >= PIECE_BYTES;
  }

  async flush(): Promise<void> {
    if (this.length === 0) return;
    const piece = this.bytes.subarray(0, this.length);
    this.bytes = Buffer.allocUnsafe(PIECE_BYTES);
    this.handed += this.length;
    this.length = 0;
    const out = this.out;
    if (out.errored) throw out.errored;
    out.write(piece);
    // A few pieces may wait in the stream (bounded memory) while the next ones are gathered.
    if (out.writableLength >= QUEUED_BYTES) await whenDrained(out);
  }

  private reserve(room: number): void {
    if (this.bytes.length - this.length >= room) return;
    const larger = Buffer.allocUnsafe(Math.max(PIECE_BYTES, 2 * this.length + room)); // doubling: linear time
    this.bytes.copy(larger, 0, 0, this.length);
    this.bytes = larger;
  }
}
