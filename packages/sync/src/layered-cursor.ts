import { compareIds } from './json-values.js';
import { SortedLineCursor } from './line-cursor.js';

/**
 * The previous snapshot's records of a topic, as the session reads them: either one records file,
 * or (after a spliced poll, state.ts) a base file with an overlay of the lines changed since.
 */
export interface PreviousLines {
  /** True when the next line (or the end) is known without reading. */
  readonly ready: boolean;
  fill(): Promise<void>;
  /** The next record's id, undefined at the end. Only while `ready`. */
  peekId(): string | undefined;
  parse<T>(): T;
  /** The next line's bytes, its line break left out (valid until the next `fill`). */
  line(): Buffer;
  take(): void;
  /** Takes the next line when it is exactly `bytes[from, to)`, the line of record `id`. */
  takeIfSame(bytes: Buffer, from: number, to: number, id: string): boolean;
  sameBytes(bytes: Buffer, from: number, to: number): boolean;
  close(): Promise<void>;
}

const GONE_SUFFIX = Buffer.from(',"gone":true}');

/** The overlay's line saying that record `id` of the base is gone. */
export function goneLine(id: string): string {
  return JSON.stringify({ id, gone: true });
}

/** Whether an overlay line says its record is gone (a record's line ends with its values' `}}`). */
export function isGoneLine(line: Buffer): boolean {
  return (
    line.length > GONE_SUFFIX.length &&
    line.compare(GONE_SUFFIX, 0, GONE_SUFFIX.length, line.length - GONE_SUFFIX.length) === 0
  );
}

/**
 * A base records file read through its overlay, both sorted by id: an overlay line replaces the
 * base line of the same id, or adds a record, and a gone line (`goneLine`) hides the base line;
 * what comes out is the merged sequence, as one records file holding it would give. The base is
 * never rewritten by a spliced poll (it is linked into the next snapshot), so only the overlay
 * grows with the changes, until a full run writes one file again.
 */
export class LayeredLineCursor implements PreviousLines {
  /** The side whose next line is the merged next line, once known. */
  private head: SortedLineCursor | undefined;

  constructor(
    private readonly base: SortedLineCursor,
    private readonly overlay: SortedLineCursor,
  ) {}

  get ready(): boolean {
    return this.settle();
  }

  async fill(): Promise<void> {
    while (!this.settle()) {
      if (!this.base.ready) await this.base.fill();
      if (!this.overlay.ready) await this.overlay.fill();
    }
  }

  /** Where the base goes on, in bytes: positions in the base are what the row index keeps. */
  get offset(): number {
    return this.base.offset;
  }

  /**
   * Goes on at byte `position` of the base (never back) and past every overlay line up to
   * `lastId`: the records before are taken as unchanged, without being read.
   */
  async skipTo(position: number, lastId: string): Promise<void> {
    this.head = undefined;
    if (position > this.base.offset) this.base.skipTo(position);
    for (;;) {
      if (!this.overlay.ready) await this.overlay.fill();
      const id = this.overlay.peekId();
      if (id === undefined || compareIds(id, lastId) > 0) return;
      this.overlay.take();
    }
  }

  peekId(): string | undefined {
    if (!this.settle())
      throw new Error('LayeredLineCursor: read past the bytes in memory; call fill() first.');
    return this.head!.peekId();
  }

  parse<T>(): T {
    return this.current().parse<T>();
  }

  line(): Buffer {
    return this.current().line();
  }

  take(): void {
    this.current().take();
    this.head = undefined;
  }

  takeIfSame(bytes: Buffer, from: number, to: number, id: string): boolean {
    if (!this.settle() || !this.head!.takeIfSame(bytes, from, to, id)) return false;
    this.head = undefined;
    return true;
  }

  sameBytes(bytes: Buffer, from: number, to: number): boolean {
    return this.current().sameBytes(bytes, from, to);
  }

  async close(): Promise<void> {
    this.head = undefined;
    await Promise.all([this.base.close(), this.overlay.close()]);
  }

  private current(): SortedLineCursor {
    if (!this.settle()) throw new Error('LayeredLineCursor: no line in memory; call fill() first.');
    return this.head!;
  }

  /** Finds the side holding the merged next line; false when either side must be read first. */
  private settle(): boolean {
    if (this.head) return true;
    const { base, overlay } = this;
    for (;;) {
      if (!base.ready || !overlay.ready) return false;
      const baseId = base.peekId();
      const overlayId = overlay.peekId();
      if (overlayId === undefined || (baseId !== undefined && compareIds(baseId, overlayId) < 0)) {
        this.head = base; // also at the end of both
        return true;
      }
      if (baseId === overlayId) {
        base.take(); // replaced or gone: the overlay's line says which
        continue;
      }
      if (isGoneLine(overlay.line())) {
        overlay.take();
        continue;
      }
      this.head = overlay;
      return true;
    }
  }
}
