import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
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
  // Named as the input is, when its name says its format, else for the format (the ReqIF reader
  // tells an archive from a ReqIF file by its first bytes, whatever the name).
  const given = fromStdin ? undefined : basename(file);
  const path = join(dir, given && importFormatOf(given) === known ? given : `input.${known}`);
  try {
    await pipeline(
      fromStdin ? process.stdin : createReadStream(file),
      createWriteStream(path, { mode: 0o600 }),
    );
  } catch (error) {
    await remove();
    throw error;
  }
  return { path, name, named: (message) => message.split(path).join(name), remove };
}

function asItIs(file: string): ImportInput {
  return { path: file, name: file, named: (message) => message, remove: async () => {} };
}
