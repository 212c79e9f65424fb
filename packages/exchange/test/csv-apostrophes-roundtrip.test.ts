import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { csvRow } from '../src/export/writers/csv-text.js';
import { openRowSource } from '../src/import/open-source.js';

const dir = mkdtempSync(join(tmpdir(), 'rxs-csv-apostrophes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The apostrophes the CSV writer adds against formulas, at the start of a cell and after a
 * semicolon, tab or line break inside it, come off again on import: an exported value imports as
 * itself, also one that has apostrophes of its own there.
 */
it('imports what the CSV writer protected against formulas as the original text', async () => {
  const values = [
    'plain',
    '=2+5',
    "'=2+5",
    'safe;=2+5',
    "safe;'=2+5",
    'Title\n=====',
    '- one\n- two\n+ three\n@four',
    'tab\t=cmd',
    'cr\r\n-1',
    'quoted;"=x"',
    '＝full-width',
    "it's; fine",
  ];
  const file = join(dir, 'values.csv');
  writeFileSync(file, csvRow(['name', 'Text']) + values.map((v, i) => csvRow([`R${i}`, v])).join(''));
  const read: string[] = [];
  for await (const row of openRowSource(file).rows()) {
    expect(row.problems).toEqual([]);
    read.push(row.values.get('Text')!.text);
  }
  expect(read).toEqual(values);
});
