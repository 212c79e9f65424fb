import { open, rm, type FileHandle } from 'node:fs/promises';
import { SyncError } from './errors.js';

/**
 * Where each record of a spliced topic sits: its line in the snapshot's records file and its row
 * in the output the same sync wrote, in `_id` order (the order of both files). The next spliced
 * poll finds the changed records here and copies everything between them as byte ranges, without
 * reading a row (splice.ts). Kept in the snapshot's generation beside the records file
 * (`topic-N.rows`, named by the stored topic), written and read front to back in chunks, so memory
 * stays flat whatever the number of records.
 *
 * A file is a header, then one entry of `idBytes + 24` bytes per record:
 *
 *     header  "RXSROWS2", count u32, idBytes u32, lines end f64, rows end f64
 *     entry   id (ASCII, idBytes), readable-id hash (2 x i32), line start f64, row start f64
 *
 * Ids are ASCII of one width (service ids are); a topic with other ids gets no index, and its polls
 * walk the rows. The hash is 64 bits of the readable id as the row writes it (FNV-1a forwards and
 * backwards): each copied record's is checked against the changed records', so that no two records
 * share a readable id (a match, in practice a real duplicate, refuses the splice).
 */
const MAGIC = Buffer.from('RXSROWS2');
const HEADER_BYTES = 32;
/** Bytes of an entry besides its id. */
const ENTRY_EXTRA = 24;
/** Entries read or written at a time. */
const ENTRIES_PER_CHUNK = 16_384;

export interface RowIndexHeader {
  count: number;
  idBytes: number;
  /** The end of the records file (after the last line). */
  linesEnd: number;
  /** The end of the last record's row in the output (where the parts after the records start). */
  rowsEnd: number;
}

/** A readable id's 64-bit hash, as two int32 halves. */
export type ReadableIdHash = readonly [number, number];

/** FNV-1a of the UTF-16 code units, forwards and (from another basis) backwards. */
export function readableIdHash(text: string): ReadableIdHash {
  let forwards = 0x811c9dc5;
  let backwards = 0x050c5d1f;
  for (let i = 0, j = text.length - 1; i < text.length; i++, j--) {
    forwards = Math.imul(forwards ^ text.charCodeAt(i), 0x01000193);
    backwards = Math.imul(backwards ^ text.charCodeAt(j), 0x01000193);
  }
  return [forwards | 0, backwards | 0];
}

/** Hashes to look for, keyed by their first half (a plain number lookup per entry checked). */
export class HashSet {
  private readonly halves = new Map<number, number[]>();
  /**
   * A bit per value of the first half's low 16 bits: most lookups (every copied record is one) end
   * at a typed array read, before the map.
   */
  private readonly lowBits = new Uint8Array(1 << 13);

  constructor(hashes: Iterable<ReadableIdHash>) {
    for (const [first, second] of hashes) {
      this.lowBits[(first & 0xffff) >>> 3]! |= 1 << (first & 7);
      const seconds = this.halves.get(first);
      if (seconds) seconds.push(second);
      else this.halves.set(first, [second]);
    }
  }

  get size(): number {
    return this.halves.size;
  }

  has(first: number, second: number): boolean {
    if ((this.lowBits[(first & 0xffff) >>> 3]! & (1 << (first & 7))) === 0) return false;
    return this.halves.get(first)?.includes(second) ?? false;
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * A typed array over `count` entries of `size` bytes in `bytes`, starting `from` bytes into the
 * first, when the machine stores numbers as the index does (little-endian) and the numbers are
 * aligned to their width; else undefined (the caller reads them through the Buffer).
 */
function aligned<T extends Int32Array | Float64Array>(
  Type: { new (buffer: ArrayBufferLike, offset: number, length: number): T; BYTES_PER_ELEMENT: number },
  bytes: Buffer,
  from: number,
  size: number,
  count: number,
): T | undefined {
  const width = Type.BYTES_PER_ELEMENT;
  const offset = bytes.byteOffset + from;
  if (!LITTLE_ENDIAN || offset % width !== 0 || size % width !== 0 || count === 0) return undefined;
  return new Type(bytes.buffer, offset, ((count - 1) * size) / width + 2);
}

/** The index is not what it should be: the poll walks the rows instead. */
export class RowIndexError extends SyncError {
  override name = 'RowIndexError';
  readonly code = 'RXS_ERR_ROW_INDEX';
}

/** Reads an index front to back, a chunk of entries at a time (synchronous within a chunk). */
export class RowIndexReader {
  private buffer = Buffer.alloc(0);
  /** Entries in `buffer`, and the next one to read. */
  private inBuffer = 0;
  private at = 0;
  /** Entries read from the file so far. */
  private read = 0;

  private constructor(
    private readonly handle: FileHandle,
    readonly header: RowIndexHeader,
  ) {}

  static async open(path: string): Promise<RowIndexReader> {
    const handle = await open(path, 'r');
    try {
      const head = Buffer.alloc(HEADER_BYTES);
      const { bytesRead } = await handle.read(head, 0, HEADER_BYTES, 0);
      if (bytesRead !== HEADER_BYTES || !head.subarray(0, MAGIC.length).equals(MAGIC))
        throw new RowIndexError(`${path} is not a row index.`);
      const header: RowIndexHeader = {
        count: head.readUInt32LE(8),
        idBytes: head.readUInt32LE(12),
        linesEnd: head.readDoubleLE(16),
        rowsEnd: head.readDoubleLE(24),
      };
      const size = (await handle.stat()).size;
      if (header.idBytes === 0 || size !== HEADER_BYTES + header.count * (header.idBytes + ENTRY_EXTRA))
        throw new RowIndexError(`${path} does not hold the entries its header names.`);
      return new RowIndexReader(handle, header);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The width of the ids. */
  get idBytes(): number {
    return this.header.idBytes;
  }

  private get entryBytes(): number {
    return this.header.idBytes + ENTRY_EXTRA;
  }

  /** Makes the next entry readable synchronously; false at the end. */
  async fill(): Promise<boolean> {
    if (this.at < this.inBuffer) return true;
    const entries = Math.min(ENTRIES_PER_CHUNK, this.header.count - this.read);
    if (entries === 0) return false;
    const bytes = entries * this.entryBytes;
    if (this.buffer.length < bytes) this.buffer = Buffer.allocUnsafe(bytes);
    const position = HEADER_BYTES + this.read * this.entryBytes;
    const { bytesRead } = await this.handle.read(this.buffer, 0, bytes, position);
    if (bytesRead !== bytes) throw new RowIndexError('The row index ends early.');
    this.read += entries;
    this.inBuffer = entries;
    this.at = 0;
    return true;
  }

  /** Whether the next entry is in memory. */
  get ready(): boolean {
    return this.at < this.inBuffer;
  }

  /** The next entry's id compared with `id` (its bytes): negative when it comes first. */
  compareNext(id: Buffer): number {
    const from = this.at * this.entryBytes;
    return this.buffer.compare(id, 0, id.length, from, from + this.header.idBytes);
  }

  /**
   * How many of the entries in memory, from the next one, have ids before `id` (a binary search:
   * the ids ascend); all of them without `id`.
   */
  countBefore(id: Buffer | undefined): number {
    const ahead = this.inBuffer - this.at;
    if (id === undefined) return ahead;
    const width = this.entryBytes;
    let low = 0;
    let high = ahead;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const from = (this.at + middle) * width;
      if (this.buffer.compare(id, 0, id.length, from, from + this.header.idBytes) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The bytes of the next `count` entries (valid until the next `fill`); `skip(count)` passes them. */
  entriesBytes(count: number): Buffer {
    const from = this.at * this.entryBytes;
    return this.buffer.subarray(from, from + count * this.entryBytes);
  }

  /** The id of the entry read last, while its chunk is in memory (not after `fill`). */
  lastId(): string {
    if (this.at === 0) throw new RowIndexError('RowIndexReader: no entry read in this chunk.');
    const from = (this.at - 1) * this.entryBytes;
    return this.buffer.toString('latin1', from, from + this.header.idBytes);
  }

  /** The next entry's id. */
  nextId(): string {
    const from = this.at * this.entryBytes;
    return this.buffer.toString('latin1', from, from + this.header.idBytes);
  }

  nextHash(): ReadableIdHash {
    const from = this.at * this.entryBytes + this.header.idBytes;
    return [this.buffer.readInt32LE(from), this.buffer.readInt32LE(from + 4)];
  }

  nextLine(): number {
    return this.buffer.readDoubleLE(this.at * this.entryBytes + this.header.idBytes + 8);
  }

  nextRow(): number {
    return this.buffer.readDoubleLE(this.at * this.entryBytes + this.header.idBytes + 16);
  }

  skip(count = 1): void {
    if (this.at + count > this.inBuffer)
      throw new RowIndexError('RowIndexReader: skip past the entries read.');
    this.at += count;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

/**
 * Writes an index front to back. `add` an entry per record in `_id` order (or `copy` entries read
 * from another index, their rows moved); `finish` writes the header. An id that is not ASCII or
 * of another width than the first makes the index unusable: `finish` then removes the file.
 */
export class RowIndexWriter {
  private handle: FileHandle | undefined;
  private buffer = Buffer.alloc(0);
  private length = 0;
  private count = 0;
  private idBytes = 0;
  private usable = true;
  private written = HEADER_BYTES;

  private constructor(readonly path: string) {}

  static async create(path: string): Promise<RowIndexWriter> {
    const writer = new RowIndexWriter(path);
    writer.handle = await open(path, 'wx', 0o644);
    return writer;
  }

  /** Whether entries still go in (false once an unusable id came). */
  get open(): boolean {
    return this.usable;
  }

  add(id: string, [first, second]: ReadableIdHash, line: number, row: number): void {
    if (!this.usable) return;
    // ASCII only: then byte order is the string order compareIds uses.
    const width = Buffer.byteLength(id);
    if (width !== id.length) {
      this.usable = false;
      return;
    }
    if (!this.start(width, 1)) return;
    const at = this.length;
    this.buffer.write(id, at, 'latin1');
    this.buffer.writeInt32LE(first, at + width);
    this.buffer.writeInt32LE(second, at + width + 4);
    this.buffer.writeDoubleLE(line, at + width + 8);
    this.buffer.writeDoubleLE(row, at + width + 16);
    this.length += width + ENTRY_EXTRA;
    this.count++;
  }

  /**
   * `count` entries read from another index (`entries`, ids `width` bytes wide), their rows moved
   * by `rowShift` (their lines stay: a layered snapshot keeps the base they point into). Returns
   * the first whose hash is in `refused`, if any (then nothing was added).
   */
  copy(
    entries: Buffer,
    count: number,
    width: number,
    rowShift: number,
    refused: HashSet,
  ): string | undefined {
    const size = width + ENTRY_EXTRA;
    if (refused.size > 0) {
      const hashes = aligned(Int32Array, entries, width, size, count);
      if (hashes) {
        const stride = size / 4;
        for (let i = 0, at = 0; i < count; i++, at += stride)
          if (refused.has(hashes[at]!, hashes[at + 1]!))
            return entries.toString('latin1', i * size, i * size + width);
      } else {
        for (let i = 0, hash = width; i < count; i++, hash += size)
          if (refused.has(entries.readInt32LE(hash), entries.readInt32LE(hash + 4)))
            return entries.toString('latin1', i * size, i * size + width);
      }
    }
    if (!this.usable || count === 0 || !this.start(width, count)) return undefined;
    const at = this.length;
    entries.copy(this.buffer, at);
    if (rowShift !== 0) {
      const offsets = aligned(Float64Array, this.buffer.subarray(at), width + 8, size, count);
      if (offsets) {
        // The offsets (line, row) as doubles in place (entries of a width of 8 bytes, service
        // ids'): about ten times faster than reading and writing each through the Buffer.
        const stride = size / 8;
        for (let i = 0, j = 1; i < count; i++, j += stride) offsets[j]! += rowShift;
      } else {
        for (let i = 0, row = at + width + 16; i < count; i++, row += size)
          this.buffer.writeDoubleLE(this.buffer.readDoubleLE(row) + rowShift, row);
      }
    }
    this.length += count * size;
    this.count += count;
    return undefined;
  }

  /** True when the buffered entries should be written before more come. */
  get full(): boolean {
    return this.length >= ENTRIES_PER_CHUNK * (this.idBytes + ENTRY_EXTRA);
  }

  /** Writes the buffered entries; entries added meanwhile stay buffered. */
  async flush(): Promise<void> {
    const length = this.length;
    if (length === 0 || !this.handle) return;
    await this.handle.write(this.buffer, 0, length, this.written);
    this.written += length;
    this.buffer.copy(this.buffer, 0, length, this.length);
    this.length -= length;
  }

  /**
   * Writes the rest and the header, flushed to disk; false when the index is unusable or could not
   * be written (then it is removed). A failure here does not throw: an index only spares the next
   * poll reading the rows, and it is finished after the output was put in place, which a failed
   * sync would then leave without its snapshot.
   */
  async finish(ends: Omit<RowIndexHeader, 'count' | 'idBytes'>): Promise<boolean> {
    const handle = this.handle!;
    this.handle = undefined;
    let kept = false;
    try {
      if (this.usable && this.count > 0) {
        await handle.write(this.buffer, 0, this.length, this.written);
        const head = Buffer.alloc(HEADER_BYTES);
        MAGIC.copy(head, 0);
        head.writeUInt32LE(this.count, 8);
        head.writeUInt32LE(this.idBytes, 12);
        head.writeDoubleLE(ends.linesEnd, 16);
        head.writeDoubleLE(ends.rowsEnd, 24);
        await handle.write(head, 0, HEADER_BYTES, 0);
        await handle.sync();
        kept = true;
      }
    } catch {
      // Without an index the next poll walks the rows (disk full, an I/O error).
    } finally {
      await handle.close().catch(() => undefined);
    }
    if (!kept) await rm(this.path, { force: true }).catch(() => undefined);
    return kept;
  }

  /** Stops without an index (nothing once finished). */
  async abandon(): Promise<void> {
    if (!this.handle) return;
    this.usable = false;
    const handle = this.handle;
    this.handle = undefined;
    await handle.close();
    await rm(this.path, { force: true });
  }

  private start(width: number, entries: number): boolean {
    if (this.count === 0 && this.idBytes === 0) {
      if (width === 0) return (this.usable = false);
      this.idBytes = width;
      this.buffer = Buffer.allocUnsafe(ENTRIES_PER_CHUNK * (width + ENTRY_EXTRA));
    } else if (width !== this.idBytes) {
      this.usable = false;
      return false;
    }
    const room = this.length + entries * (width + ENTRY_EXTRA);
    if (room > this.buffer.length) {
      const larger = Buffer.allocUnsafe(Math.max(room, this.buffer.length * 2));
      this.buffer.copy(larger, 0, 0, this.length);
      this.buffer = larger;
    }
    return true;
  }
}
