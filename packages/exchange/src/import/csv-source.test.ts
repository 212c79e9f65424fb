import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
});
