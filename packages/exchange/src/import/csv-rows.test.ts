import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import { CsvRecordReader } from './csv-rows.js';
import { importLimits } from './limits.js';
import { ImportFileError } from './errors.js';

const limits = importLimits({});

/** The records of `text`, fed to the reader in pieces cut at `cuts`. */
function recordsOf(text: string, cuts: number[] = [], delimiter = ',', given = limits) {
  const reader = new CsvRecordReader(delimiter, given, 'f.csv');
  const out = [];
  let from = 0;
  for (const cut of [...new Set(cuts)].filter((c) => c > 0 && c < text.length).sort((a, b) => a - b)) {
    out.push(...reader.push(text.slice(from, cut)));
    from = cut;
  }
  out.push(...reader.push(text.slice(from)));
  out.push(...reader.end());
  return out;
}

const cellText = fc.string({
  unit: fc.constantFrom('a', 'Z', ' ', ',', ';', '\t', '"', '\r', '\n', '=', '＝', 'é', '😀', "'"),
  maxLength: 12,
});

describe('CsvRecordReader', () => {
  it('reads back what csv-stringify wrote, however the text is cut into chunks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(cellText, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(',', ';', '\t'),
        fc.constantFrom('\r\n', '\n'),
        fc.array(fc.nat({ max: 400 }), { maxLength: 8 }),
        (rows, delimiter, eol, cuts) => {
          // csv-stringify quotes a cell only where it must; one empty cell alone would be an empty line.
          const written = stringify(rows, {
            delimiter,
            record_delimiter: eol,
            quoted_match: /^$|^[=＝]|[\r\n]/,
          });
          const read = recordsOf(written, cuts, delimiter).map((r) => r.cells);
          // A quoted cell starting with `=` reads with the apostrophe rxs export would have put there.
          const expected = rows.map((row) => row.map((cell) => (/^[=＝]/.test(cell) ? `'${cell}` : cell)));
          expect(read).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('numbers each record by the line it starts on, across quoted line breaks and empty lines', () => {
    const text = 'a,b\r\n1,"x\ny\r\nz"\n\n\r\n2,3\r4,5';
    expect(recordsOf(text)).toEqual([
      { cells: ['a', 'b'], line: 1 },
      { cells: ['1', 'x\ny\r\nz'], line: 2 },
      { cells: ['2', '3'], line: 7 },
      { cells: ['4', '5'], line: 8 },
    ]);
  });

  it('takes a quote inside an unquoted value as text, as Python and spreadsheets do', () => {
    expect(recordsOf('a,b"c,d\n').map((r) => r.cells)).toEqual([['a', 'b"c', 'd']]);
  });

  it('refuses text after a closing quote, and a quote never closed, naming the line', () => {
    expect(() => recordsOf('a,b\n1,"x"y\n')).toThrow(/line 2 a quoted value is followed by "y"/);
    expect(() => recordsOf('a,b\r\n1,"an unfinished\r\nvalue')).toThrow(
      /not a readable CSV file: the quoted value that starts on line 2 .*may be cut short/,
    );
    expect(() => recordsOf('a,b\r\n1,"an unfinished\r\nvalue')).toThrow(ImportFileError);
  });

  it('stops at a cell, row or column count past its limit before reading further', () => {
    const small = { ...limits, maxCellBytes: 10, maxRowBytes: 30, maxColumns: 3 };
    expect(() => recordsOf(`a\n${'x'.repeat(11)}\n`, [], ',', small)).toThrow(/line 2, column 1/);
    expect(() => recordsOf(`a\n"${'x'.repeat(20)}`, [5], ',', small)).toThrow(/line 2, column 1/);
    expect(() => recordsOf('a\n1,2,3,4\n', [], ',', small)).toThrow(/line 2 has more than 3 columns/);
    expect(() => recordsOf(`a\n${'123456789,'.repeat(3)}1\n`, [], ',', { ...small, maxColumns: 9 })).toThrow(
      /the row at line 2 holds more than 30 bytes/,
    );
  });
});
