import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportFileError, openRowSource, type OpenSourceOptions, type SourceRow } from '../src/index.js';
import { hugeSharedString, repeated, rowsOf, workbookParts, writeZip } from './support/bounded-uploads.js';

/**
 * Reading an import file costs memory and time in proportion to the import's limits, never to what
 * the file holds or claims: a zip bomb, a shared string of hundreds of megabytes, a
 * header of 200,000 columns, a cell of the whole file each stop at their limit, with the limit named.
 */
const dir = mkdtempSync(join(tmpdir(), 'rxs-import-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every row of the file, or the error that stopped the reading. */
async function read(file: string, options: OpenSourceOptions = {}): Promise<SourceRow[] | ImportFileError> {
  const rows: SourceRow[] = [];
  try {
    for await (const row of openRowSource(file, options).rows()) rows.push(row);
    return rows;
  } catch (error) {
    if (error instanceof ImportFileError) return error;
    throw error;
  }
}

async function refusal(file: string, options: OpenSourceOptions = {}): Promise<ImportFileError> {
  const result = await read(file, options);
  expect(result).toBeInstanceOf(ImportFileError);
  return result as ImportFileError;
}

const text = (row: SourceRow, column: string) => {
  const cell = row.values.get(column);
  return cell && ('text' in cell ? cell.text : cell.value);
};

describe('bounded reading of an XLSX workbook', () => {
  it('reads shared strings as the cells show them: rich text runs joined, phonetic readings left out; in either order of the parts', async () => {
    const parts = workbookParts(
      () => [
        '<si><t>name</t></si><si><t>Note</t></si>',
        '<si><r><rPr><b/></rPr><t>bold</t></r><r><t xml:space="preserve"> and plain</t></r></si>',
        '<si><t>漢字</t><rPh sb="0" eb="2"><t>かんじ</t></rPh></si>',
      ],
      function* () {
        yield* rowsOf(1);
        yield '<row r="3"><c r="A3" t="inlineStr"><is><t>N-3</t></is></c><c r="B3" t="s"><v>3</v></c></row>';
      },
    );
    // The sheet before the shared strings it refers to: it waits in a temporary file.
    const [types, rels, book, strings, sheet] = parts;
    for (const [name, order] of [
      ['good.xlsx', parts],
      ['sheet-first.xlsx', [types!, rels!, book!, sheet!, strings!]],
      // Parts the reader does not parse may hold any XML (SharePoint's metadata has instructions).
      [
        'custom-xml.xlsx',
        [
          ...parts,
          {
            name: 'customXml/item1.xml',
            chunks: () => ['<?xml version="1.0"?><?mso-contentType?><!-- metadata --><FormTemplates/>'],
          },
        ],
      ],
    ] as const) {
      const file = join(dir, name);
      await writeZip(file, [...order]);
      const rows = (await read(file)) as SourceRow[];
      expect(rows.map((row) => [row.facts.name, text(row, 'Note')])).toEqual([
        ['N-2', 'bold and plain'],
        ['N-3', '漢字'],
      ]);
    }
  });

  it('stops a shared string of 300 MB (300 KB zipped) at the cell limit, with memory to match', async () => {
    const file = join(dir, 'huge-string.xlsx');
    const size = await writeZip(file, hugeSharedString(300 * 1024 * 1024));
    expect(size).toBeLessThan(2 * 1024 * 1024);
    const before = process.memoryUsage().rss;
    const error = await refusal(file);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    expect(error.exceeded).toMatchObject({ limit: 'maxCellBytes', kind: 'shape' });
    expect(error.message).toContain('more than 5 MiB of text, the most one cell may hold');
  });

  it('stops a zip bomb as it inflates, whatever the sizes it declares: each entry and the whole archive', async () => {
    const file = join(dir, 'bomb.xlsx');
    // 20 MB of rows, a few hundred KB zipped.
    await writeZip(
      file,
      workbookParts(
        () => ['<si><t>name</t></si><si><t>Note</t></si><si><t>x</t></si>'],
        () => rowsOf(200_000),
      ),
    );
    const archive = await refusal(file, { limits: { maxArchiveBytes: 1024 * 1024 } });
    expect(archive.exceeded).toMatchObject({ limit: 'maxArchiveBytes', kind: 'size' });
    expect(archive.message).toContain('unpacks to more than 1 MiB');
    const entry = await refusal(file, { limits: { maxEntryBytes: 1024 * 1024 } });
    expect(entry.exceeded).toMatchObject({ limit: 'maxEntryBytes', kind: 'size' });
    expect(entry.message).toContain('xl/worksheets/sheet1.xml unpacks to more than 1 MiB');
  });

  it('bounds the shared string table: its count and its characters', async () => {
    const file = join(dir, 'many-strings.xlsx');
    await writeZip(
      file,
      workbookParts(
        function* () {
          yield '<si><t>name</t></si><si><t>Note</t></si>';
          for (let i = 0; i < 5000; i++) yield `<si><t>text number ${i}</t></si>`;
        },
        () => rowsOf(1),
      ),
    );
    expect(await read(file)).toHaveLength(1);
    const count = await refusal(file, { limits: { maxSharedStrings: 1000 } });
    expect(count.exceeded).toMatchObject({ limit: 'maxSharedStrings', kind: 'size' });
    expect(count.message).toContain('more than 1,000 different texts');
    const bytes = await refusal(file, { limits: { maxSharedStringBytes: 10_000 } });
    expect(bytes.exceeded).toMatchObject({ limit: 'maxSharedStringBytes', kind: 'size' });
  });

  it('refuses XML that could hide a text from the bound (CDATA), a value past the column limit, a row past its size', async () => {
    const cdata = join(dir, 'cdata.xlsx');
    await writeZip(
      cdata,
      workbookParts(
        () => ['<si><t>name</t></si><si><t>Note</t></si><si><t><![CDATA[<<<]]></t></si>'],
        () => rowsOf(1),
      ),
    );
    expect((await refusal(cdata)).message).toContain('XML markup that spreadsheets do not write');

    const wide = join(dir, 'wide.xlsx');
    await writeZip(
      wide,
      workbookParts(
        () => ['<si><t>name</t></si><si><t>Note</t></si><si><t>x</t></si>'],
        function* () {
          yield* rowsOf(1);
          yield '<row r="3"><c r="A3" t="inlineStr"><is><t>N-3</t></is></c><c r="HZZ3" t="s"><v>2</v></c></row>';
        },
      ),
    );
    const columns = await refusal(wide, { limits: { maxColumns: 100 } });
    expect(columns.exceeded).toMatchObject({ limit: 'maxColumns', kind: 'shape' });
    expect(columns.message).toContain('Row 3 of sheet "Sheet1" has a value in column 6110');

    // One shared string of 1 KB in every cell of a row: each cell fits, the row does not.
    const repeatedString = join(dir, 'repeated-string.xlsx');
    await writeZip(
      repeatedString,
      workbookParts(
        () => [`<si><t>name</t></si><si><t>Note</t></si><si><t>${'y'.repeat(1000)}</t></si>`],
        function* () {
          yield '<row r="1"><c r="A1" t="s"><v>0</v></c>';
          for (let c = 2; c < 40; c++)
            yield `<c r="${columnLetters(c)}1" t="inlineStr"><is><t>F${c}</t></is></c>`;
          yield '</row><row r="2">';
          for (let c = 1; c < 40; c++) yield `<c r="${columnLetters(c)}2" t="s"><v>2</v></c>`;
          yield '</row>';
        },
      ),
    );
    const row = await refusal(repeatedString, { limits: { maxRowBytes: 20_000 } });
    expect(row.exceeded).toMatchObject({ limit: 'maxRowBytes', kind: 'shape' });
    expect(row.message).toContain('Row 2 holds more than 20,000 bytes of text');
  });
});

function columnLetters(column: number): string {
  let letters = '';
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26))
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

describe('bounded reading of CSV, JSON and ReqIF', () => {
  it('refuses a CSV header of 200,000 columns at once, naming the column limit', async () => {
    const file = join(dir, 'wide.csv');
    const header = Array.from({ length: 200_000 }, (_, i) => `c${i}`).join(',');
    writeFileSync(file, `${header}\r\nx\r\n`);
    const error = await refusal(file);
    expect(error.exceeded).toMatchObject({ limit: 'maxColumns', value: 5000, kind: 'shape' });
    expect(error.message).toContain('line 1 has more than 5,000 columns');
  });

  it('refuses a CSV cell past the cell limit before the parser gathers it, and a row past the row limit', async () => {
    const file = join(dir, 'huge-cell.csv');
    writeFileSync(file, `name,Note\r\nN-1,"${'y'.repeat(3_000_000)}"\r\n`);
    const cell = await refusal(file, { limits: { maxCellBytes: 1024 * 1024 } });
    expect(cell.exceeded).toMatchObject({ limit: 'maxCellBytes', kind: 'shape' });
    expect(cell.message).toContain('line 2, column 2) holds more than 1 MiB of text');
    const row = join(dir, 'huge-row.csv');
    writeFileSync(row, `name,A,B,C\r\nN-1,${'y'.repeat(400)},${'y'.repeat(400)},${'y'.repeat(400)}\r\n`);
    const rowError = await refusal(row, { limits: { maxRowBytes: 1000 } });
    expect(rowError.exceeded).toMatchObject({ limit: 'maxRowBytes', kind: 'shape' });
    expect(rowError.message).toContain('the row at line 2 holds more than 1,000 bytes of text');
    // Delimiters and line breaks inside quotes are text, not columns or rows.
    const quoted = join(dir, 'quoted.csv');
    writeFileSync(quoted, `name,Note\r\nN-1,"${',\r\n'.repeat(200)}"\r\n`);
    expect(await read(quoted, { limits: { maxColumns: 10 } })).toHaveLength(1);
  });

  it('bounds JSON strings, values per record, records and columns over the records', async () => {
    const big = join(dir, 'big.json');
    writeFileSync(big, JSON.stringify([{ name: 'J-1', Note: 'z'.repeat(3_000_000) }]));
    expect((await refusal(big, { limits: { maxCellBytes: 1024 * 1024 } })).exceeded?.limit).toBe(
      'maxCellBytes',
    );
    const outside = join(dir, 'outside.json');
    writeFileSync(outside, JSON.stringify({ junk: 'z'.repeat(3_000_000), records: [] }));
    expect((await refusal(outside, { limits: { maxCellBytes: 1024 * 1024 } })).exceeded?.limit).toBe(
      'maxCellBytes',
    );
    const wide = join(dir, 'wide.json');
    writeFileSync(
      wide,
      JSON.stringify([Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i]))]),
    );
    expect((await refusal(wide, { limits: { maxColumns: 100 } })).exceeded?.limit).toBe('maxColumns');
    const varied = join(dir, 'varied.jsonl');
    writeFileSync(
      varied,
      Array.from({ length: 200 }, (_, i) => JSON.stringify({ name: `V-${i}`, [`k${i}`]: 1 })).join('\n'),
    );
    const columns = await refusal(varied, { format: 'jsonl', limits: { maxColumns: 100 } });
    expect(columns.message).toContain('names more than 100 different columns');
    const line = join(dir, 'long-line.jsonl');
    writeFileSync(line, JSON.stringify({ name: 'L', list: Array.from({ length: 5000 }, () => 1) }));
    expect((await refusal(line, { limits: { maxRowBytes: 5000 } })).exceeded?.limit).toBe('maxRowBytes');
    const record = join(dir, 'large-record.json');
    writeFileSync(record, JSON.stringify([{ name: 'R', list: Array.from({ length: 5000 }, () => 1) }]));
    expect((await refusal(record, { limits: { maxRowBytes: 5000 } })).exceeded?.limit).toBe('maxRowBytes');
  });

  it('refuses a ReqIF text past the cell limit before the XML parser gathers it', async () => {
    const file = join(dir, 'huge.reqif');
    writeFileSync(
      file,
      `<?xml version="1.0"?><REQ-IF><THE-HEADER>${'h'.repeat(3_000_000)}</THE-HEADER></REQ-IF>`,
    );
    const error = await refusal(file, { limits: { maxCellBytes: 1024 * 1024 } });
    expect(error.exceeded).toMatchObject({ limit: 'maxCellBytes', kind: 'shape' });
  });

  it('gives the event loop a turn while it reads: a 100,000-row CSV never holds it for long', async () => {
    const file = join(dir, 'long.csv');
    writeFileSync(
      file,
      `name,Note\r\n${Array.from({ length: 100_000 }, (_, i) => `N-${i},note ${i}`).join('\r\n')}\r\n`,
    );
    // A timer due every millisecond runs each time the event loop gets a turn.
    let turns = 0;
    const timer = setInterval(() => turns++, 1);
    const start = performance.now();
    let rows = 0;
    try {
      for await (const row of openRowSource(file).rows()) {
        rows++;
        void row;
      }
    } finally {
      clearInterval(timer);
    }
    expect(rows).toBe(100_000);
    // A turn at least every 50 ms of reading (read in one go, it had one per megabyte read).
    expect(turns).toBeGreaterThan((performance.now() - start) / 50);
  });
});
