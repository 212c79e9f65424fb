import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { sizeText, type ImportLimits } from './limits.js';
import type { ImportLimitError } from './errors.js';

/**
 * Zip archives to import (an .xlsx workbook, a .reqifz ReqIF archive), read with unzipper (as
 * exceljs reads workbooks) at a cost bounded by the import's limits: entries are counted as they
 * inflate, whatever sizes the zip declares, and listing the central directory reads a bounded
 * number of bytes.
 */

/** An entry of unzipper's streaming parser, which exceljs reads workbooks with. */
export interface ZipEntry extends Readable {
  path: string;
  vars?: { uncompressedSize?: number; flags?: number };
}

/** An entry of the zip's central directory, as unzipper's `Open` lists it. */
export interface DirectoryEntry {
  path: string;
  /** 'Directory' for a folder's own entry (a name ending in `/`, no bytes). */
  type: 'File' | 'Directory';
  /** What the directory declares; what an entry really inflates to is counted (InflatedBytes). */
  uncompressedSize: number;
  stream(): Readable;
}

/** Where unzipper's `Open` reads a zip's bytes from. */
interface ZipSource {
  size(): Promise<number>;
  stream(offset: number, length?: number): Readable;
}

/** unzipper, as exceljs resolves it (it is exceljs's dependency, not ours). */
export function unzipper(): {
  Parse(options: { forceStream: true }): NodeJS.ReadWriteStream & AsyncIterable<ZipEntry>;
  Open: { custom(source: ZipSource, options: { tailSize: number }): Promise<{ files: DirectoryEntry[] }> };
} {
  const require = createRequire(import.meta.url);
  return createRequire(require.resolve('exceljs'))('unzipper');
}

/** The limits of one kind of archive, and how its messages name it and say what to do. */
export interface ZipBounds {
  readonly limits: ImportLimits;
  /** An entry that inflates to more than `maxEntryBytes`. */
  entryTooLarge(path: string): ImportLimitError;
  /** Entries that inflate to more than `maxArchiveBytes` together. */
  archiveTooLarge(): ImportLimitError;
}

/** Bytes of one zip entry as they inflate, counted against the entry's and the whole archive's limits. */
export class InflatedBytes extends Transform {
  private bytes = 0;

  constructor(
    private readonly path: string,
    private readonly bounds: ZipBounds,
    /** The bytes every entry read so far inflated to. */
    private readonly archive: { bytes: number },
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    this.archive.bytes += chunk.length;
    if (this.bytes > this.bounds.limits.maxEntryBytes) return done(this.bounds.entryTooLarge(this.path));
    if (this.archive.bytes > this.bounds.limits.maxArchiveBytes) return done(this.bounds.archiveTooLarge());
    done(null, chunk);
  }
}

/** An entry's bytes as they inflate, counted (InflatedBytes), then through `checks` of what they hold. */
export function inflatedBytes(
  entry: Readable,
  path: string,
  bounds: ZipBounds,
  archive: { bytes: number },
  checks: Transform[] = [],
): Transform {
  return pipeline(
    [entry, new InflatedBytes(path, bounds, archive), ...checks],
    () => {},
  ) as unknown as Transform;
}

const END_RECORD_SIGNATURE = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
/** The zip's end record: 22 bytes, then a comment of up to 65,535. */
const END_RECORD_BYTES = 22;
const MAX_ZIP_COMMENT = 0xffff;
/** An archive to import lists its entries (dozens; thousands with many images) in far less: room for some 10,000. */
const MAX_DIRECTORY_BYTES = 1024 * 1024;

/** The entries of a zip's central directory by path; `close` closes what reading them opened. */
export interface ZipDirectory {
  readonly entries: ReadonlyMap<string, DirectoryEntry>;
  close(): void;
}

/**
 * The entries of the zip's central directory, as unzipper lists them. Listing reads at most
 * MAX_DIRECTORY_BYTES from any place; an entry's bytes are read when its stream is, until `close`.
 * `kind` names the archive in what is wrong with its directory ("a workbook").
 */
export async function openZipDirectory(file: string, kind: string): Promise<ZipDirectory> {
  const end = await directoryEnd(file, kind);
  const opened: Readable[] = [];
  const close = () => {
    for (const stream of opened) stream.destroy();
  };
  let listing = true;
  const source: ZipSource = {
    size: async () => end.fileSize,
    stream: (offset, length) => {
      const bytes = listing ? Math.min(length ?? MAX_DIRECTORY_BYTES, MAX_DIRECTORY_BYTES) : length;
      const stream = createReadStream(file, {
        start: offset,
        ...(bytes !== undefined && { end: offset + bytes - 1 }),
      });
      opened.push(stream);
      return stream;
    },
  };
  try {
    const { files } = await unzipper().Open.custom(source, { tailSize: end.tailSize });
    listing = false;
    return { entries: new Map(files.map((entry) => [entry.path, entry])), close };
  } catch (error) {
    close();
    throw error;
  }
}

/** Runs `use` with the entries of the zip's central directory (openZipDirectory), and closes it after. */
export async function withZipDirectory<T>(
  file: string,
  kind: string,
  use: (entries: ReadonlyMap<string, DirectoryEntry>) => Promise<T>,
): Promise<T> {
  const zip = await openZipDirectory(file, kind);
  try {
    return await use(zip.entries);
  } finally {
    zip.close();
  }
}

/**
 * The file's size and where the zip's end record starts, counted from the end of the file, after
 * checking what the record claims: unzipper sets up a promise for every entry the record claims
 * before it reads one, so a record claiming billions (zip64) would exhaust memory. An archive
 * within the import's limits needs no zip64 (fewer than 65,535 entries, less than 4 GiB).
 */
async function directoryEnd(file: string, kind: string): Promise<{ fileSize: number; tailSize: number }> {
  const handle = await open(file);
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, END_RECORD_BYTES + MAX_ZIP_COMMENT);
    const tail = Buffer.alloc(length);
    await handle.read(tail, 0, length, size - length);
    const at =
      length < END_RECORD_BYTES ? -1 : tail.lastIndexOf(END_RECORD_SIGNATURE, length - END_RECORD_BYTES);
    if (at < 0) throw new Error('it has no zip directory at its end');
    const entries = tail.readUInt16LE(at + 10);
    const directoryBytes = tail.readUInt32LE(at + 12);
    const directoryStart = tail.readUInt32LE(at + 16);
    if (entries === 0xffff || directoryStart === 0xffffffff || directoryBytes > MAX_DIRECTORY_BYTES)
      throw new Error(
        `its zip directory claims ${entries === 0xffff ? 'more than 65,534 parts' : `${sizeText(directoryBytes)} of parts`}, more than ${kind} has`,
      );
    return { fileSize: size, tailSize: length - at };
  } finally {
    await handle.close();
  }
}
