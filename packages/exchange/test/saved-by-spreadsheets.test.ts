import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { openRowSource } from '../src/index.js';
import { scratchDir } from './support/spreadsheet-readers.js';

/**
 * What spreadsheets do to an export when they save it, read as the export meant it: a text cell
 * starting with `=` that LibreOffice saves to CSV (quoted, as it quotes every text cell) is text,
 * and the apostrophes of the CSV export kept as text in a workbook saved from it come off.
 */

const scratch = scratchDir();
afterAll(() => scratch.dispose());

async function read(file: string): Promise<{ text: Record<string, string>; problems: string[] }[]> {
  const rows = [];
  for await (const row of openRowSource(file).rows()) {
    const text: Record<string, string> = {};
    for (const [column, cell] of row.values) text[column] = 'text' in cell ? cell.text : String(cell.value);
    rows.push({ text, problems: row.problems });
  }
  return rows;
}

describe('a CSV saved by a spreadsheet', () => {
  it('reads a quoted cell starting with = as text, and refuses an unquoted one as a formula', async () => {
    const file = join(scratch.path, 'quoted.csv');
    writeFileSync(
      file,
      '"name";"Note";"Other"\r\n' +
        '"Q-1";"=SUM(A1:A3) looks like a formula";"＝full width"\r\n' +
        // The export's own protection, quoted for its comma: the apostrophe comes off once.
        `"Q-2";"'=2+5, protected";"''=x, own apostrophe"\r\n` +
        'U-1;=cmd();plain\r\n',
    );
    expect(await read(file)).toEqual([
      { text: { Note: '=SUM(A1:A3) looks like a formula', Other: '＝full width' }, problems: [] },
      { text: { Note: '=2+5, protected', Other: "'=x, own apostrophe" }, problems: [] },
      {
        text: { Note: '=cmd()', Other: 'plain' },
        problems: [expect.stringMatching(/^Note: "=cmd\(\)" is a spreadsheet formula/)],
      },
    ]);
  });

  it('reads a quoted = as text where the file is read in two pieces between the quote and the =', async () => {
    const file = join(scratch.path, 'boundary.csv');
    // The file is read 256 KiB at a time: the second cell's opening quote ends the first piece.
    const head = 'name,Note\r\n';
    const name = 'x'.repeat((1 << 18) - head.length - 2);
    writeFileSync(file, `${head}${name},"=1+1 as text"\r\n`);
    const [row] = await read(file);
    expect(row).toEqual({ text: { Note: '=1+1 as text' }, problems: [] });
  });
});

describe('a workbook saved from the CSV export', () => {
  async function workbook(name: string, header: string[], rows: string[][]): Promise<string> {
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('Sheet1');
    for (const row of [header, ...rows]) sheet.addRow(row);
    const file = join(scratch.path, name);
    await book.xlsx.writeFile(file);
    return file;
  }

  const texts = [
    ['R-1', "'=SUM(A1:A3) looks like a formula", "line\n'+1\n'@x", "''=kept one"],
    ['R-2', "it's 'quoted'", "'plain apostrophe", ''],
  ];

  it('takes off the apostrophes the CSV put before formula starts (its sheet has the links column)', async () => {
    const file = await workbook('from-csv.xlsx', ['name', 'A', 'B', 'C', 'links'], texts);
    expect((await read(file)).map((row) => row.text)).toEqual([
      { A: '=SUM(A1:A3) looks like a formula', B: 'line\n+1\n@x', C: "'=kept one" },
      { A: "it's 'quoted'", B: "'plain apostrophe", C: '' },
    ]);
  });

  it('keeps the text of any other workbook as its cells hold it', async () => {
    const file = await workbook('by-hand.xlsx', ['name', 'A', 'B', 'C'], texts);
    expect((await read(file)).map((row) => row.text)).toEqual(
      texts.map(([, a, b, c]) => ({ A: a, B: b, C: c })),
    );
  });
});
