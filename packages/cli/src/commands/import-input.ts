import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { IMPORT_FORMATS, importFormatOf, type ImportFormat } from '@rxs/exchange/import';
import { UserError } from '../errors.js';

/**
 * What `rxs import` reads: a file it may read more than once (the import reads a file first for
 * its columns and ids, then again to check its rows). Standard input (`-`), a pipe or a process
 * substitution (`<(…)`) can be read once only: its bytes are copied to a scratch file first, and
 * messages name the input as the user gave it, not the copy.
 */
export interface ImportInput {
  /** The file the readers open. */
  path: string;
  /** How messages name it. */
  name: string;
  /** A message about `path`, naming the input instead. */
  named(message: string): string;
  /** Removes the copy, if one was made. */
  remove(): Promise<void>;
}

/** The zip signature: an XLSX workbook or a ReqIF archive (.reqifz). */
const ZIP = Buffer.from('PK\u0003\u0004', 'latin1');

export async function importInput(file: string, format: ImportFormat | undefined): Promise<ImportInput> {
  const fromStdin = file === '-';
  if (!fromStdin) {
    // A missing file is answered where the import reads it ("no such file").
    const kind = await stat(file).catch(() => undefined);
    if (!kind || kind.isFile() || kind.isDirectory()) return asItIs(file);
  }
  const name = fromStdin ? 'standard input' : file;
  if (fromStdin && process.stdin.isTTY)
    throw new UserError(
      'Standard input is a terminal: pipe a file into rxs import - (for example: curl … | rxs import --kt REV - --format csv), or name the file.',
    );
  const known = format ?? importFormatOf(file);
  if (known === undefined)
    throw new UserError(
      `Cannot tell the format of ${name} from a file name: say it with --format (${IMPORT_FORMATS.join(', ')}).`,
    );
  const dir = await mkdtemp(join(tmpdir(), 'rxs-import-input-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    const copy = join(dir, 'input');
    let first: Buffer | undefined;
    const noteStart = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        first ??= chunk.subarray(0, ZIP.length);
        done(null, chunk);
      },
    });
    await pipeline(
      fromStdin ? process.stdin : createReadStream(file),
      noteStart,
      createWriteStream(copy, { mode: 0o600 }),
    );
    // The readers tell a ReqIF archive from a ReqIF file by its name: the copy is named for what
    // the input's name or first bytes say it is.
    const given = fromStdin ? undefined : basename(file);
    const zipped = first !== undefined && first.equals(ZIP);
    const path = join(
      dir,
      given && importFormatOf(given) === known ? given : `input${extensionOf(known, zipped)}`,
    );
    await rename(copy, path);
    return { path, name, named: (message) => message.split(path).join(name), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

function asItIs(file: string): ImportInput {
  return { path: file, name: file, named: (message) => message, remove: async () => {} };
}

function extensionOf(format: ImportFormat, zipped: boolean): string {
  if (format === 'reqif') return zipped ? '.reqifz' : '.reqif';
  return `.${format}`;
}
