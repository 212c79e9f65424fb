import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { csvRow } from '../../exchange/src/export/writers/csv-text.js';
import { OutputRows, type RowSyntax } from './output-rows.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-output-rows-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;

async function rowsOf(text: string, syntax: RowSyntax, chunkBytes: number): Promise<string[]> {
  const path = join(root, `f-${++files}`);
  writeFileSync(path, text);
  const rows = new OutputRows(path, syntax, chunkBytes);
  const seen: string[] = [];
  try {
    for (;;) {
      if (!rows.ready) await rows.fill();
      const row = rows.row();
      if (!row) break;
      seen.push(row.toString('utf8'));
      rows.take();
    }
  } finally {
    await rows.close();
  }
  return seen;
}

describe('OutputRows', () => {
  it('splits CSV written by csvRow into its rows, line breaks inside quoted cells included, at any chunk size', async () => {
    const cell = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', ' ', '"', ',', '\n', '\r', '=', 'é'), maxLength: 8 }),
      fc.integer(),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(cell, { minLength: 1, maxLength: 4 }), { maxLength: 6 }),
        fc.integer({ min: 4, max: 64 }),
        async (table, chunkBytes) => {
          const rows = table.map((cells) => csvRow(cells));
          expect(await rowsOf(rows.join(''), 'csv', chunkBytes)).toEqual(rows);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('splits JSON lines at each line feed', async () => {
    const lines = ['{"a":"x\\ny"}\n', '{"kind":"record"}\n', '{}\n'];
    expect(await rowsOf(lines.join(''), 'lines', 5)).toEqual(lines);
  });

  it('refuses a file that ends inside a row', async () => {
    await expect(rowsOf('a,b\r\n"open\r\n', 'csv', 8)).rejects.toThrow('ends inside a row');
  });
});
