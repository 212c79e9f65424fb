import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportFileError, openRowSource, type OpenSourceOptions } from '../src/index.js';
import { writeZip, type ZipPart } from './support/bounded-uploads.js';

/**
 * A workbook's sheets are named as xl/workbook.xml and its relationships name them, wherever
 * those parts are in the zip and however a relationship writes its target; a sheet is chosen by
 * that name, and its rows are read from the part its relationship targets.
 */
const dir = mkdtempSync(join(tmpdir(), 'rxs-xlsx-sheet-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const xml = (text: string) => `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${text}`;
const part = (name: string, text: string): ZipPart => ({ name, chunks: () => [xml(text)] });

/** A sheet of a header row (shared strings 0 and 1: "name", "Note") and one row: `name`, shared string `note`. */
const sheet = (file: string, name: string, note: number) =>
  part(
    file,
    `<worksheet xmlns="${MAIN}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>` +
      `<row r="2"><c r="A2" t="inlineStr"><is><t>${name}</t></is></c><c r="B2" t="s"><v>${note}</v></c></row></sheetData></worksheet>`,
  );

/**
 * Two sheets whose parts are not numbered in the workbook's order: "Requirements" is
 * worksheets/sheet2.xml, "Notes" worksheets/sheet1.xml. `target` writes a relationship's target.
 */
function workbook(target: (path: string) => string) {
  return {
    types: part(
      '[Content_Types].xml',
      '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    ),
    rels: part(
      'xl/_rels/workbook.xml.rels',
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        `<Relationship Id="rId3" Type="${RELS}/worksheet" Target="${target('worksheets/sheet1.xml')}"/>` +
        `<Relationship Id="rId7" Type="${RELS}/worksheet" Target="${target('worksheets/sheet2.xml')}"/>` +
        `<Relationship Id="rId9" Type="${RELS}/sharedStrings" Target="${target('sharedStrings.xml')}"/>` +
        '</Relationships>',
    ),
    book: part(
      'xl/workbook.xml',
      `<workbook xmlns="${MAIN}" xmlns:r="${RELS}"><sheets>` +
        '<sheet name="Requirements" sheetId="1" r:id="rId7"/><sheet name="Notes" sheetId="2" r:id="rId3"/>' +
        '</sheets></workbook>',
    ),
    strings: part(
      'xl/sharedStrings.xml',
      `<sst xmlns="${MAIN}"><si><t>name</t></si><si><t>Note</t></si><si><t>from requirements</t></si><si><t>from notes</t></si></sst>`,
    ),
    notes: sheet('xl/worksheets/sheet1.xml', 'N-1', 3),
    requirements: sheet('xl/worksheets/sheet2.xml', 'R-1', 2),
  };
}

async function rowsOf(file: string, options: OpenSourceOptions): Promise<string[][]> {
  const rows: string[][] = [];
  for await (const row of openRowSource(file, options).rows()) {
    const note = row.values.get('Note');
    rows.push([row.facts.name ?? '', note && 'text' in note ? note.text : String(note?.value)]);
  }
  return rows;
}

async function expectSheetsByName(file: string): Promise<void> {
  expect(await rowsOf(file, { sheet: 'Notes' })).toEqual([['N-1', 'from notes']]);
  expect(await rowsOf(file, { sheet: 'requirements' })).toEqual([['R-1', 'from requirements']]);
  // Without a sheet asked for: the sheet named after the topic.
  const source = openRowSource(file);
  source.forTopic?.({ name: 'Notes', reqifTypeName: 'Notes' });
  const names: (string | undefined)[] = [];
  for await (const row of source.rows()) names.push(row.facts.name);
  expect(names).toEqual(['N-1']);
  const missing = rowsOf(file, { sheet: 'Sheet1' });
  await expect(missing).rejects.toBeInstanceOf(ImportFileError);
  await expect(missing).rejects.toThrow(/no sheet "Sheet1"\. Its sheets: "Requirements", "Notes"\./);
}

describe('XLSX sheets named by the workbook, whatever the zip', () => {
  it('names the sheets when they come before xl/workbook.xml in the zip (as a streaming writer puts them)', async () => {
    const { types, rels, book, strings, notes, requirements } = workbook((path) => path);
    const file = join(dir, 'sheets-first.xlsx');
    // The relationships and the shared strings first, the sheets, and the workbook last.
    await writeZip(file, [types, rels, strings, notes, requirements, book]);
    await expectSheetsByName(file);
  });

  it('names the sheets when the relationships target their parts from the package root (as openpyxl writes)', async () => {
    const { types, rels, book, strings, notes, requirements } = workbook((path) => `/xl/${path}`);
    const file = join(dir, 'absolute-targets.xlsx');
    await writeZip(file, [types, book, rels, strings, notes, requirements]);
    await expectSheetsByName(file);
  });

  it('refuses a zip whose end record claims billions of parts (zip64) before listing them', async () => {
    const { types, rels, book, strings, notes, requirements } = workbook((path) => path);
    const file = join(dir, 'zip64-claim.xlsx');
    await writeZip(file, [types, rels, book, strings, notes, requirements]);
    const zip = readFileSync(file);
    const end = zip.subarray(zip.length - 22);
    const directorySize = end.readUInt32LE(12);
    const directoryStart = end.readUInt32LE(16);
    // A zip64 end record claiming 2^31 entries, its locator, and an end record pointing to them.
    const record = Buffer.alloc(56);
    record.writeUInt32LE(0x06064b50, 0);
    record.writeBigUInt64LE(44n, 4);
    record.writeBigUInt64LE(2n ** 31n, 24);
    record.writeBigUInt64LE(2n ** 31n, 32);
    record.writeBigUInt64LE(BigInt(directorySize), 40);
    record.writeBigUInt64LE(BigInt(directoryStart), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(zip.length - 22), 8);
    locator.writeUInt32LE(1, 16);
    const claim = Buffer.from(end);
    claim.writeUInt16LE(0xffff, 8);
    claim.writeUInt16LE(0xffff, 10);
    claim.writeUInt32LE(0xffffffff, 16);
    writeFileSync(file, Buffer.concat([zip.subarray(0, zip.length - 22), record, locator, claim]));
    const before = process.memoryUsage().rss;
    const refused = rowsOf(file, { sheet: 'Notes' });
    await expect(refused).rejects.toBeInstanceOf(ImportFileError);
    await expect(refused).rejects.toThrow(/more than 65,534 parts, more than a workbook has/);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });
});
