import { open } from 'node:fs/promises';
import { ImportChoiceError, ImportFileError } from './errors.js';
import { limitError, sizeText, type ImportLimits } from './limits.js';
import { decodeText, decodeTextFile } from './text-decoding.js';
import { CLI_WORDING, listed, type ImportWording } from './wording.js';
import { inflatedBytes, openZipDirectory, withZipDirectory, type ZipBounds } from './zip-bounds.js';

/** The first bytes of a zip archive (its first local file header): a .reqifz, or an .xlsx. */
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
/** How messages name a ReqIF archive's kind (openZipDirectory). */
const ARCHIVE_KIND = 'a ReqIF archive';

export interface ReqifInputOptions {
  /** A ReqIF archive's .reqif file to read, by its path in the archive; default: its only one. */
  entry?: string;
  limits: ImportLimits;
  /** How advice names the options (default: `rxs import`'s). */
  wording?: ImportWording;
}

/** The ReqIF text to read, and what a report says of where it came from. */
export interface ReqifInput {
  /** What else the archive holds (its attachments, not imported); none for a .reqif file. */
  readonly notes: readonly string[];
  /** The text from its start, chunk by chunk: each call reads it again. */
  text(): AsyncGenerator<string>;
}

/** A file of an archive, with the size its directory declares. */
interface ArchivedFile {
  path: string;
  size: number;
}

/**
 * The ReqIF text of a file: a .reqif file itself, or, for a zip (a ReqIF archive, .reqifz, whatever
 * its file's name), the one .reqif file it holds (or `entry`), inflated as it is read within the
 * import's limits (a zip bomb stops at maxEntryBytes or maxArchiveBytes). The archive's other files
 * (its attachments: images, OLE objects) are listed in the notes, not read.
 */
export async function openReqifInput(file: string, options: ReqifInputOptions): Promise<ReqifInput> {
  if (!(await startsAsZip(file))) return { notes: [], text: () => decodeTextFile(file) };
  const files = await listArchive(file);
  const chosen = chooseReqif(file, files, options);
  const bounds = archiveBounds(file, options.limits);
  if (chosen.size > options.limits.maxEntryBytes) throw bounds.entryTooLarge(chosen.path);
  if (chosen.size > options.limits.maxArchiveBytes) throw bounds.archiveTooLarge();
  const others = files.filter((other) => other !== chosen);
  return {
    notes:
      others.length === 0
        ? []
        : [
            `${file} holds ${others.length === 1 ? 'a file' : `${others.length} files`} besides ${chosen.path}, not imported (the import reads the ReqIF file's values only): ${listed(others.map((other) => `${other.path} (${sizeText(other.size)})`))}.`,
          ],
    text: () => decodeText(inflatedEntry(file, chosen.path, bounds), `${chosen.path} in ${file}`),
  };
}

async function startsAsZip(file: string): Promise<boolean> {
  const head = Buffer.alloc(ZIP_MAGIC.length);
  const handle = await open(file, 'r');
  try {
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  return head.equals(ZIP_MAGIC);
}

/** The files of the archive (folders left out), as its directory lists them. */
async function listArchive(file: string): Promise<ArchivedFile[]> {
  try {
    return await withZipDirectory(file, ARCHIVE_KIND, async (entries) =>
      [...entries.values()]
        .filter((entry) => entry.type !== 'Directory')
        .map((entry) => ({ path: entry.path, size: entry.uncompressedSize })),
    );
  } catch (error) {
    throw unreadable(file, error);
  }
}

/** The .reqif file to read: `entry`, else the only one; none or several is said with what the archive holds. */
function chooseReqif(file: string, files: ArchivedFile[], options: ReqifInputOptions): ArchivedFile {
  const reqifs = files.filter((candidate) => /\.reqif$/i.test(candidate.path));
  const names = (list: ArchivedFile[]) => listed(list.map((candidate) => `"${candidate.path}"`));
  if (options.entry !== undefined) {
    const wanted = options.entry.toLowerCase();
    const named = files.find((candidate) => candidate.path.toLowerCase() === wanted);
    if (named) return named;
    throw new ImportFileError(
      `${file} holds no file "${options.entry}"; its ReqIF files: ${reqifs.length === 0 ? 'none' : names(reqifs)}.`,
    );
  }
  if (reqifs.length === 1) return reqifs[0]!;
  if (reqifs.length === 0)
    throw new ImportFileError(
      `${file} is a zip archive holding no .reqif file, so it is not a ReqIF archive (.reqifz), which holds one: it holds ${files.length === 0 ? 'nothing' : names(files)}.`,
    );
  throw new ImportChoiceError(
    `${file} is a ReqIF archive holding ${reqifs.length} ReqIF files: ${names(reqifs)}. ${(options.wording ?? CLI_WORDING).chooseEntry}`,
    { option: 'entry', names: reqifs.map((candidate) => candidate.path) },
  );
}

/** The entry's bytes as they inflate, bounded; the archive is open while they are read. */
async function* inflatedEntry(file: string, path: string, bounds: ZipBounds): AsyncGenerator<Buffer> {
  try {
    const zip = await openZipDirectory(file, ARCHIVE_KIND);
    try {
      const entry = zip.entries.get(path);
      if (!entry) throw new Error(`it no longer holds ${path}`);
      yield* inflatedBytes(entry.stream(), path, bounds, { bytes: 0 });
    } finally {
      zip.close();
    }
  } catch (error) {
    throw unreadable(file, error);
  }
}

/** A failure to read the archive as an ImportFileError: a limit as it is, anything else as a damaged file. */
function unreadable(file: string, error: unknown): ImportFileError {
  if (error instanceof ImportFileError) return error;
  return new ImportFileError(
    `${file} cannot be read as a ReqIF archive (${(error as Error).message}): it may be cut short or not a .reqifz file. Export it again.`,
  );
}

/** A ReqIF archive's bounds: its zip's limits, in words about ReqIF archives. */
const archiveBounds = (file: string, limits: ImportLimits): ZipBounds => ({
  limits,
  entryTooLarge: (path) =>
    limitError(
      'maxEntryBytes',
      limits.maxEntryBytes,
      `${path} in the ReqIF archive ${file} unpacks to more than ${sizeText(limits.maxEntryBytes)}, the most one file of an archive may: export the requirements in several smaller files.`,
    ),
  archiveTooLarge: () =>
    limitError(
      'maxArchiveBytes',
      limits.maxArchiveBytes,
      `The ReqIF archive ${file} unpacks to more than ${sizeText(limits.maxArchiveBytes)}, the most an archive may: export the requirements in several smaller files.`,
    ),
});
