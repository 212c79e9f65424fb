import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CSV_OPTIONS, csvRow, CsvRowSplitter, protectedText, restoredText } from './csv-text.js';

/**
 * csv-stringify's row, but for two differences (csv-text.ts): text whose own apostrophes come before
 * a formula start gets one more, so that an importer taking one off gets the value back; and a
 * semicolon, tab or line break before a formula start (after quotes and apostrophes) gets an
 * apostrophe after it.
 */
const OWN_APOSTROPHES = /^'+[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const INNER_FORMULA = /[;\t\r\n](?=["']*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/g;
const reference = (cells: unknown[]) =>
  stringify(
    [
      cells.map((cell) => {
        if (typeof cell !== 'string') return cell;
        const inner = cell.replace(INNER_FORMULA, "$&'");
        return OWN_APOSTROPHES.test(cell) ? `'${inner}` : inner;
      }),
    ],
    CSV_OPTIONS,
  );

const TRICKY = [
  '',
  'plain',
  'a,b',
  'say "hi"',
  '"',
  'line\nbreak',
  'cr\rinside',
  'ends with cr\r',
  'crlf\r\ninside',
  '\r\nstarts',
  '=SUM(A1)',
  '+1',
  '-1',
  '@x',
  '\tlead',
  '\rlead',
  '\uff1dfull',
  '\uff0b',
  '\uff0d',
  '\uff20',
  "'=already",
  'ünïcødé 🎉',
  ',',
  '\r',
  '\n',
  'safe;=2+5',
  'safe\t+2+5',
  'line\n-2+5',
  'cr\r@SUM(1)',
  'quoted;"=2+5"',
  "own;'=2+5",
  ';\t=1',
  'a\t\tb; c',
];

describe('csvRow writes what csv-stringify writes', () => {
  it('for tricky text, numbers, absent and null cells', () => {
    for (const text of TRICKY) expect(csvRow([text, text])).toBe(reference([text, text]));
    const cells = [0, -1, 1.5, -0, 1e21, NaN, Infinity, -Infinity, undefined, null, '', 'x'];
    expect(csvRow(cells)).toBe(reference(cells));
    expect(csvRow([])).toBe('\r\n');
  });

  it('for any strings and numbers', () => {
    const cell = fc.oneof(
      fc.string({
        unit: fc.constantFrom('a', ',', '"', '\r', '\n', '=', '-', '+', '@', '\t', "'", ' ', 'é'),
      }),
      fc.string(),
      fc.double(),
      fc.integer(),
      fc.constant(undefined),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.array(cell, { maxLength: 8 }), (cells) => {
        expect(csvRow(cells)).toBe(reference(cells));
      }),
      { numRuns: 2000 },
    );
  });

  it('quotes a value holding a line feed or carriage return anywhere (RFC 4180)', () => {
    expect(csvRow(['First line\nSecond line'])).toBe('"First line\nSecond line"\r\n');
    expect(csvRow(['a\rb', 'end\n'])).toBe('"a\rb","end\n"\r\n');
    expect(csvRow(['\rlead'])).toBe(`"'\rlead"\r\n`);
    expect(csvRow(['  padded  ', 'x'])).toBe('  padded  ,x\r\n');
  });

  it('hands other cells (booleans, objects) to csv-stringify', () => {
    const cells = [true, false, { a: 1 }, [1, 2], 'x', "'=x"];
    expect(csvRow(cells)).toBe(reference(cells));
  });

  it('gives text its own apostrophes back after one is taken off, whatever follows them', () => {
    expect(csvRow(["'=already", "''-2", "'plain", "it's"])).toBe(`''=already,'''-2,'plain,it's\r\n`);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("'", '=', '-', 'a', '\t', '@') }), (text) => {
        const cell = csvRow([text]).slice(0, -2).replace(/^"|"$/g, '').replaceAll('""', '"');
        expect(restoredText(cell)).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('formula starts inside text', () => {
  const unit = fc.constantFrom(';', '\t', '\r', '\n', '"', "'", '=', '+', '-', '@', '\uff1d', 'a', ',', ' ');

  it('are written with an apostrophe after the semicolon, tab or line break before them', () => {
    expect(csvRow(['safe;=2+5', 'x\t-1', 'a\n@b'])).toBe(`safe;'=2+5,x\t'-1,"a\n'@b"\r\n`);
    expect(csvRow(['q;"=1"', "own;'=1", 'a;b', 'a\t\tb'])).toBe(`"q;'""=1""",own;''=1,a;b,a\t\tb\r\n`);
  });

  it('leave no semicolon, tab or line break before a formula start in the file', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit }), { maxLength: 4 }), (cells) => {
        // Each is followed by the apostrophe, so the cell a spreadsheet starts there is text.
        expect(csvRow(cells)).not.toMatch(/[;\t\r\n](?!')(?=["']*[=+\-@\uFF1D])/);
      }),
      { numRuns: 3000 },
    );
  });

  it('come back as they were: restoredText undoes protectedText', () => {
    fc.assert(
      fc.property(fc.string({ unit }), (text) => {
        expect(restoredText(protectedText(text))).toBe(text);
      }),
      { numRuns: 5000 },
    );
    expect(restoredText('plain; text')).toBe('plain; text');
  });
});

describe('CsvRowSplitter', () => {
  it('gives back each cell exactly as written, whatever the pieces the text arrives in', () => {
    const rows = [TRICKY, ['a', '', '"q"', 'x\r'], [''], TRICKY.slice().reverse()];
    const text = rows.map((row) => csvRow(row)).join('');
    const expected = rows.map((row) => row.map((cell) => csvRow([cell]).slice(0, -2)));
    for (const size of [1, 2, 5, 17, text.length]) {
      const splitter = new CsvRowSplitter();
      const got: string[][] = [];
      for (let start = 0; start < text.length; start += size)
        got.push(...splitter.push(text.slice(start, start + size)));
      expect(got).toEqual(expected);
      expect(splitter.pending).toBe(false);
    }
  });
});
