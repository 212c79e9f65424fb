import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExportPart } from '../src/export/model.js';
import { createWriter, writeExport } from '../src/export/writers/index.js';
import { ImportFileError, openRowSource, type OpenSourceOptions, type SourceRow } from '../src/index.js';
import { repeated, writeZip } from './support/bounded-uploads.js';
import {
  collectParts,
  missingReader,
  PYTHON,
  referenceSource,
  scratchDir,
  shouldSkip,
} from './support/spreadsheet-readers.js';

/**
 * ReqIF archives (.reqifz): the import reads the .reqif file a zip holds, within the
 * import's limits, and lists the other files (attachments); `--format reqifz` writes the ReqIF
 * file of `--format reqif` into a zip that Python's zipfile reads and whose ReqIF validates.
 */
const scratch = scratchDir();
afterAll(() => scratch.dispose());
const dir = scratch.path;
const SCHEMA = new URL('../../../reference/reqif-xsd/reqif.xsd', import.meta.url).pathname;
const xmllint = missingReader('xmllint', 'libxml2-utils');
const python = missingReader(PYTHON, 'python3');
const MiB = 1024 * 1024;

/** The parts of an export of the reference sample, written once. */
let sample: ExportPart[] | undefined;
async function sampleParts(): Promise<ExportPart[]> {
  const { source, revisionIds } = referenceSource();
  sample ??= await collectParts(source, revisionIds);
  return sample;
}

/** Writes the parts in a format to `path` in the scratch folder, the writer told the file's name. */
async function exported(format: 'reqif' | 'reqifz', path: string): Promise<string> {
  const file = join(dir, path);
  mkdirSync(dirname(file), { recursive: true });
  const writer = createWriter(format, createWriteStream(file), { fileName: basename(file) });
  await writeExport(writer, await sampleParts());
  return file;
}

async function read(
  file: string,
  options: OpenSourceOptions = {},
): Promise<{ rows: SourceRow[]; notes: string[] }> {
  const source = openRowSource(file, options);
  const rows: SourceRow[] = [];
  for await (const row of source.rows()) rows.push(row);
  return { rows, notes: source.notes };
}

async function refusal(file: string, options: OpenSourceOptions = {}): Promise<ImportFileError> {
  const error = await read(file, options).then(
    () => new Error(`${file} was read`),
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ImportFileError);
  return error as ImportFileError;
}

/** A zip as Python's zipfile reads it (its CRCs checked): the names and dates of its entries, the bytes of one. */
function pythonZip(file: string, entry: string): { names: string[]; dates: number[][]; bytes: Buffer } {
  const script = [
    'import base64, json, sys, zipfile',
    'z = zipfile.ZipFile(sys.argv[1])',
    'assert z.testzip() is None',
    'sys.stdout.write(json.dumps({"names": z.namelist(), "dates": [list(i.date_time) for i in z.infolist()],',
    '  "bytes": base64.b64encode(z.read(sys.argv[2])).decode()}))',
  ].join('\n');
  const out = JSON.parse(
    execFileSync(PYTHON, ['-c', script, file, entry], { encoding: 'utf8', maxBuffer: 1 << 28 }),
  );
  return { ...out, bytes: Buffer.from(out.bytes, 'base64') };
}

describe('reading a ReqIF archive', () => {
  it('reads the .reqif file of a zipped export as the export itself; lists the attachments with their sizes', async () => {
    const plain = await exported('reqif', 'sample.reqif');
    const text = readFileSync(plain);
    const zipped = join(dir, 'sample.reqifz');
    await writeZip(zipped, [{ name: 'sample.reqif', chunks: () => [text] }]);
    const expected = await read(plain);
    expect(expected.rows.length).toBeGreaterThan(0);
    const archived = await read(zipped);
    expect(archived.rows).toEqual(expected.rows);
    expect(archived.notes).toEqual(expected.notes);

    const withFiles = join(dir, 'with-attachments.reqifz');
    await writeZip(withFiles, [
      { name: 'files/', chunks: () => [] },
      { name: 'files/diagram.png', chunks: () => [Buffer.alloc(2048, 7)] },
      { name: 'module.reqif', chunks: () => [text] },
      { name: 'files/spec.pdf', chunks: () => repeated('%PDF', 3 * MiB) },
    ]);
    const attached = await read(withFiles);
    expect(attached.rows).toEqual(expected.rows);
    expect(attached.notes).toEqual([
      `${withFiles} holds 2 files besides module.reqif, not imported (the import reads the ReqIF file's values only): files/diagram.png (2,048 bytes), files/spec.pdf (3 MiB).`,
      ...expected.notes,
    ]);
    // The extension does not decide: a ReqIF archive saved as .xml, or named with --format reqif.
    const renamed = join(dir, 'module.xml');
    writeFileSync(renamed, readFileSync(withFiles));
    expect((await read(renamed)).rows).toEqual(expected.rows);
  });

  it('stops a zip bomb as it inflates, whatever size it declares, with the limit named and memory to match', async () => {
    const bomb = join(dir, 'bomb.reqifz');
    const head =
      '<?xml version="1.0" encoding="UTF-8"?><REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"><THE-HEADER>';
    // 256 MiB of well-formed elements, a few hundred KB zipped.
    const size = await writeZip(bomb, [
      { name: 'bomb.reqif', chunks: () => [head, ...repeated(`<C>${'a'.repeat(1000)}</C>`, 256 * MiB)] },
    ]);
    expect(size).toBeLessThan(4 * MiB);
    // Declared as it is: refused before a byte inflates.
    const declared = await refusal(bomb, { limits: { maxEntryBytes: 16 * MiB } });
    expect(declared.exceeded).toMatchObject({ limit: 'maxEntryBytes', kind: 'size' });
    expect(declared.message).toBe(
      `bomb.reqif in the ReqIF archive ${bomb} unpacks to more than 16 MiB, the most one file of an archive may: export the requirements in several smaller files.`,
    );
    // Declared as 1 KB: counted as it inflates.
    const zip = readFileSync(bomb);
    const central = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt32LE(1024, central + 24);
    zip.writeUInt32LE(1024, 22);
    writeFileSync(bomb, zip);
    const before = process.memoryUsage().rss;
    const inflating = await refusal(bomb, { limits: { maxEntryBytes: 16 * MiB } });
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * MiB);
    expect(inflating.exceeded).toMatchObject({ limit: 'maxEntryBytes', kind: 'size' });
    expect(inflating.message).toBe(declared.message);
    const archive = await refusal(bomb, { limits: { maxArchiveBytes: 8 * MiB } });
    expect(archive.exceeded).toMatchObject({ limit: 'maxArchiveBytes', kind: 'size' });
    expect(archive.message).toBe(
      `The ReqIF archive ${bomb} unpacks to more than 8 MiB, the most an archive may: export the requirements in several smaller files.`,
    );
  }, 60_000);

  it('an archive of two .reqif files: names them and how to choose, and reads the one chosen; one of none says what it holds', async () => {
    const text = readFileSync(await exported('reqif', 'two.reqif'));
    const two = join(dir, 'two.reqifz');
    await writeZip(two, [
      { name: 'a/first.reqif', chunks: () => [text] },
      { name: 'second.REQIF', chunks: () => [text] },
      { name: 'picture.png', chunks: () => ['png'] },
    ]);
    expect((await refusal(two)).message).toBe(
      `${two} is a ReqIF archive holding 2 ReqIF files: "a/first.reqif", "second.REQIF". Say which to import with --entry NAME.`,
    );
    const chosen = await read(two, { entry: 'second.reqif' });
    expect(chosen.rows).toEqual((await read(join(dir, 'two.reqif'))).rows);
    expect(chosen.notes[0]).toBe(
      `${two} holds 2 files besides second.REQIF, not imported (the import reads the ReqIF file's values only): a/first.reqif (${text.length.toLocaleString('en')} bytes), picture.png (3 bytes).`,
    );
    expect((await refusal(two, { entry: 'third.reqif' })).message).toBe(
      `${two} holds no file "third.reqif"; its ReqIF files: "a/first.reqif", "second.REQIF".`,
    );

    const none = join(dir, 'none.reqifz');
    await writeZip(none, [
      { name: 'module.xml', chunks: () => [text] },
      { name: 'picture.png', chunks: () => ['png'] },
    ]);
    expect((await refusal(none)).message).toBe(
      `${none} is a zip archive holding no .reqif file, so it is not a ReqIF archive (.reqifz), which holds one: it holds "module.xml", "picture.png".`,
    );
    const cut = join(dir, 'cut.reqifz');
    writeFileSync(cut, readFileSync(two).subarray(0, 200));
    expect((await refusal(cut)).message).toMatch(
      new RegExp(
        `^${cut} cannot be read as a ReqIF archive \\(.+\\): it may be cut short or not a \\.reqifz file\\. Export it again\\.$`,
      ),
    );
  });
});

describe.skipIf(shouldSkip(xmllint ?? python))('writing a ReqIF archive (--format reqifz)', () => {
  it("finds its readers (xmllint from libxml2-utils, Python's zipfile)", () => {
    expect(xmllint).toBeUndefined();
    expect(python).toBeUndefined();
  });

  it('holds the ReqIF file of --format reqif as <name>.reqif, dated at the export, valid against the ReqIF 1.2 schema', async () => {
    const plain = readFileSync(await exported('reqif', 'design.reqif'));
    const file = await exported('reqifz', 'design.reqifz');
    const zip = pythonZip(file, 'design.reqif');
    expect(zip.names).toEqual(['design.reqif']);
    expect(zip.dates).toEqual([[2026, 8, 11, 9, 30, 0]]);
    expect(zip.bytes.equals(plain)).toBe(true);
    const inner = join(dir, 'inner.reqif');
    writeFileSync(inner, zip.bytes);
    const run = spawnSync('xmllint', ['--noout', '--schema', SCHEMA, inner], { encoding: 'utf8' });
    expect(run.stderr.slice(-2000)).toContain('validates');
    expect(run.status).toBe(0);

    // The same export again: the same bytes. Without a file name: rxs-export.reqif.
    expect(readFileSync(await exported('reqifz', 'again/design.reqifz')).equals(readFileSync(file))).toBe(
      true,
    );
    const unnamed = join(dir, 'unnamed.reqifz');
    await writeExport(createWriter('reqifz', createWriteStream(unnamed)), await sampleParts());
    expect(pythonZip(unnamed, 'rxs-export.reqif').names).toEqual(['rxs-export.reqif']);
    // What the archive holds reads back as the export.
    expect((await read(file)).rows).toEqual((await read(join(dir, 'design.reqif'))).rows);
  });

  it('a failed export leaves no archive to read: the output ends without a zip directory', async () => {
    const file = join(dir, 'failed.reqifz');
    const writer = createWriter('reqifz', createWriteStream(file), { fileName: 'failed.reqifz' });
    const parts = await sampleParts();
    for (const part of parts.filter((part) => part.kind !== 'end')) await writer.write(part);
    await writer.close();
    const bytes = readFileSync(file);
    expect(bytes.includes(Buffer.from([0x50, 0x4b, 0x05, 0x06]))).toBe(false);
  });
});
