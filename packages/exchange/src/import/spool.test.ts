import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { NamedValue } from '../mapping/record-input.js';
import { ImportFileError } from './errors.js';
import type { SourceRow } from './source-row.js';
import { decodeRow, encodeRow, ImportSpool } from './spool.js';

const dir = mkdtempSync(join(tmpdir(), 'rxs-spool-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the import spool', () => {
  it('gives every row back as the reader gave it: text, typed values, enumeration values', () => {
    const row: SourceRow = {
      where: 'spec object 3 (R-3)',
      facts: { id: 'a1', readableId: 'REQ_1', name: 'n\u2028\n"x"', sourceId: 'R-3', version: '2' },
      values: new Map<string, SourceRow['values'] extends Map<string, infer C> ? C : never>([
        ['Text', { text: 'line\r\nbreak \u0000 \ud800 ＝1' }],
        ['Count', { value: -0.5 }],
        ['Done', { value: false }],
        ['Nested', { value: JSON.parse('{"__proto__": {"a": [1, null, "b"]}, "k": {}}') }],
        ['Status', { value: new NamedValue(['0', 'Navy'], 'the enumeration value "Navy" (key "0")') }],
        ['Colours', { value: [new NamedValue(['1', 'Red'], 'Red'), new NamedValue(['2', 'Blue'], 'Blue')] }],
        ['Empty', { value: null }],
      ]),
      problems: ['a formula'],
      warnings: ['an embedded image: pic.png'],
      byFormKey: true,
    };
    const back = decodeRow(encodeRow(row));
    expect(back).toEqual(row);
    expect((back.values.get('Status') as { value: unknown }).value).toBeInstanceOf(NamedValue);
    expect(Object.getOwnPropertyNames((back.values.get('Nested') as { value: object }).value)).toContain(
      '__proto__',
    );
  });

  it('keeps any JSON value and any text exactly', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, text) => {
        const row: SourceRow = {
          where: 'row 2',
          facts: {},
          values: new Map([
            ['typed', { value }],
            ['text', { text }],
          ]),
          problems: [],
        };
        // As JSON holds it, which is what the service is sent: -0 is 0.
        const asSent = {
          ...row,
          values: new Map([...row.values, ['typed', { value: JSON.parse(JSON.stringify(value)) }]]),
        };
        expect(decodeRow(encodeRow(row))).toEqual(asSent);
      }),
    );
  });

  it('makes a value JSON cannot hold a problem of its row instead of changing it', () => {
    const row: SourceRow = {
      where: 'record 4',
      facts: {},
      values: new Map([['Size', { value: Infinity }]]),
      problems: [],
    };
    const back = decodeRow(encodeRow(row));
    expect(back.problems).toEqual([
      expect.stringMatching(/^Size: Infinity is not a value a record can hold/),
    ]);
    expect(row.problems).toEqual([]);
  });

  it('reads back 200,000 lines in order, and leaves nothing behind when closed', async () => {
    const spool = await ImportSpool.open(dir);
    const file = spool.file<number>('n.jsonl', String, Number);
    for (let i = 0; i < 200_000; i++) await file.write(i);
    let expected = 0;
    for await (const n of file.read()) expect(n).toBe(expected++);
    expect(expected).toBe(200_000);
    await spool.close();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('gives back lines longer than a chunk and characters cut by a chunk boundary', async () => {
    const spool = await ImportSpool.open(dir);
    const file = spool.file<string>('t.jsonl', JSON.stringify, (line) => JSON.parse(line) as string);
    // Multi-byte characters (2, 3 and 4 bytes) at every offset against the 256 KiB chunks, and a
    // line spanning several chunks.
    const lines = [
      ...Array.from({ length: 3000 }, (_, i) => `${'é'.repeat(i % 7)}€${'x'.repeat(i)}😀 ${i}`),
      '∑'.repeat(600_000),
      'last',
    ];
    for (const line of lines) await file.write(line);
    const back: string[] = [];
    for await (const line of file.read()) back.push(line);
    expect(back).toEqual(lines);
    await spool.close();
  });

  it('says where it could not write, and what to do', async () => {
    const missing = join(dir, 'no', 'such', 'folder');
    const error = await ImportSpool.open(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImportFileError);
    expect((error as Error).message).toMatch(/scratch copy of the rows in .*no\/such\/folder.*TMPDIR/);
    expect(existsSync(missing)).toBe(false);
  });

  it('closes a file that was written and never read back, and removes it', async () => {
    const openFiles = () => readdirSync('/proc/self/fd').length;
    const before = openFiles();
    const spool = await ImportSpool.open(dir);
    const abandoned = spool.file<string>(
      'abandoned.jsonl',
      (line) => line,
      (line) => line,
    );
    for (let i = 0; i < 5000; i++) await abandoned.write(`a line the import will not read ${i}`);
    expect(openFiles()).toBeGreaterThan(before);
    await spool.close();
    expect(openFiles()).toBe(before);
    expect(existsSync(abandoned.path)).toBe(false);
  });
});
