import type { Writable } from 'node:stream';
import { whenDrained } from '@rxs/exchange/export';

/** Text and bytes are written in pieces of about this many bytes. */
const PIECE_BYTES = 1024 * 1024;
/** At most this many bytes wait in the stream before `flush` waits for it. */
const QUEUED_BYTES = 8 * 1024 * 1024;

/** Written pieces' buffers kept for the next ones: as many as may wait in the stream, and two. */
const SPARE_PIECES = QUEUED_BYTES / PIECE_BYTES + 2;

/**
 * Gathers text and bytes for a stream and writes them in large pieces with backpressure (flat
 * memory, one write per piece instead of one per row; a few pieces in flight). A stream may keep
 * the chunks it is given until they are written, so a piece's buffer is used again only once the
 * stream has written it: a poll copying a large output allocates a few buffers, not one per piece
 * (fresh memory costs page faults and garbage collections).
 */
export class PieceWriter {
  private bytes: Buffer = Buffer.allocUnsafe(PIECE_BYTES);
  private length = 0;
  /** Buffers of pieces written, to gather the next ones in. */
  private readonly spare: Buffer[] = [];
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
    let from = 0;
    if (this.bytes.length - this.length < bytes.length) {
      // The piece is filled up and sealed, the rest starts the next one: no buffer grows (and is
      // copied again) on its way to the stream.
      from = this.bytes.length - this.length;
      this.bytes.set(bytes.subarray(0, from), this.length);
      this.length += from;
      this.seal();
    }
    this.bytes.set(from === 0 ? bytes : bytes.subarray(from), this.length);
    this.length += bytes.length - from;
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
    for (const piece of pieces) {
      // A whole gathering buffer comes back once written; grown ones and copies are left to the GC.
      const reusable = piece.buffer.byteLength === PIECE_BYTES && piece.byteOffset === 0;
      out.write(piece, reusable ? () => this.reuse(piece) : undefined);
    }
    // A few pieces may wait in the stream (bounded memory) while the next ones are gathered.
    if (out.writableLength >= QUEUED_BYTES) await whenDrained(out);
  }

  /** The gathered bytes become a piece of their own, after those sealed before. */
  private seal(): void {
    if (this.length === 0) return;
    this.sealed.push(this.bytes.subarray(0, this.length));
    this.sealedBytes += this.length;
    this.bytes = this.spare.pop() ?? Buffer.allocUnsafe(PIECE_BYTES);
    this.length = 0;
  }

  /** A written piece's buffer, back for gathering (when few are kept already). */
  private reuse(piece: Buffer): void {
    if (this.spare.length < SPARE_PIECES) this.spare.push(Buffer.from(piece.buffer, 0, PIECE_BYTES));
  }

  private reserve(room: number): void {
    if (this.bytes.length - this.length >= room) return;
    if (room <= PIECE_BYTES) {
      // Written as a piece of its own, what is gathered needs no larger buffer.
      this.seal();
      return;
    }
    const larger = Buffer.allocUnsafe(Math.max(PIECE_BYTES, 2 * this.length + room)); // doubling: linear time
    this.bytes.copy(larger, 0, 0, this.length);
    this.bytes = larger;
  }
}
