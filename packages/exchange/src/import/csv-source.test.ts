import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CsvSource } from './csv-source.js';

const dir = mkdtempSync(join(tmpdir(), 'rxs-csv-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function rowsOf(text: string) {
  const file = join(dir, `f${Math.random().toString(36).slice(2)}.csv`);
  writeFileSync(file, text);
  const rows = [];
  for await (const row of new CsvSource(file).rows()) rows.push(row);
  return rows;
}

describe('CsvSource', () => {
  it('reads rows by header, with their lines, a formula refused and the export apostrophe taken off', async () => {
    const rows = await rowsOf('\uFEFFname;Text\r\n\r\nA;"x\r\ny"\r\nB;=1+1\r\nC;\'=2\r\nD;"=3"\r\n');
    expect(rows.map((r) => [r.where, r.facts.name, r.values.get('Text'), r.problems.length])).toEqual([
      ['line 3', 'A', { text: 'x\r\ny' }, 0],
      ['line 5', 'B', { text: '=1+1' }, 1],
      ['line 6', 'C', { text: '=2' }, 0],
      ['line 7', 'D', { text: '=3' }, 0],
    ]);
  });

  it('says a file of XML is not CSV, and what to do', async () => {
    await expect(rowsOf('<?xml version="1.0" encoding="UTF-8"?>\n<REQ-IF></REQ-IF>\n')).rejects.toThrow(
      /holds XML \(it starts with "<\?xml ver"\), not comma-separated values. A ReqIF file imports under its own name/,
    );
  });

  it('reads the rows again as the first read gave them, and refuses a file saved again in between', async () => {
    const file = join(dir, 'again.csv');
    writeFileSync(file, 'name,Text\nA,"x\ny"\nB,2\n');
    const source = new CsvSource(file);
    const first = [];
    for await (const row of source.rows()) first.push(row);
    const again = [];
    for await (const rows of source.rowsAgain()) for (const row of rows) again.push(row);
    expect(again).toEqual(first);
    expect(again.map((r) => r.where)).toEqual(['line 2', 'line 4']);

    appendFileSync(file, 'C,3\n');
    const readAgain = async () => {
      for await (const rows of source.rowsAgain()) for (const row of rows) void row;
    };
    await expect(readAgain()).rejects.toThrow(
      /again\.csv changed while it was imported .* Import it again once no program is writing it\./,
    );
    // A new first read takes the file as it is now.
    for await (const row of source.rows()) void row;
    await expect(readAgain()).resolves.toBeUndefined();
  });

  it('refuses a file saved again while its rows are read the second time', async () => {
    const file = join(dir, 'during.csv');
    writeFileSync(
      file,
      `name,Text\n${Array.from({ length: 5000 }, (_, i) => `R${i},${'x'.repeat(100)}`).join('\n')}\n`,
    );
    const source = new CsvSource(file);
    for await (const row of source.rows()) void row;
    let rows = 0;
    const readAgain = async () => {
      for await (const chunk of source.rowsAgain())
        for (const row of chunk) if (++rows === 10) writeFileSync(file, 'name,Text\nZ,1\n');
    };
    await expect(readAgain()).rejects.toThrow(/during\.csv changed while it was imported/);
  });

  it('refuses a file saved again while its rows are first read', async () => {
    const file = join(dir, 'first-read.csv');
    writeFileSync(
      file,
      `name,Text\n${Array.from({ length: 5000 }, (_, i) => `R${i},${'x'.repeat(100)}`).join('\n')}\n`,
    );
    const source = new CsvSource(file);
    let rows = 0;
    const read = async () => {
      for await (const row of source.rows()) if (++rows === 10) appendFileSync(file, 'Z,1\n');
    };
    await expect(read()).rejects.toThrow(/first-read\.csv changed while it was imported/);
    // Read again as it is now, whole.
    rows = 0;
    for await (const row of source.rows()) {
      void row;
      rows++;
    }
    expect(rows).toBe(5001);
  });
});
