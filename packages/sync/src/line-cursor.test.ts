import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { SortedLineCursor } from './line-cursor.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-line-cursor-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
function file(text: string): string {
  const path = join(root, `f-${++files}.jsonl`);
  writeFileSync(path, text);
  return path;
}

/** Every line of the file as the cursor sees it: id, parsed value, and whether `bytes` match. */
async function readAll(path: string, chunkBytes: number, probe?: (id: string) => string) {
  const cursor = new SortedLineCursor(path, chunkBytes);
  const seen: { id: string; value: unknown; same?: boolean }[] = [];
  try {
    for (;;) {
      if (!cursor.ready) await cursor.fill();
      const id = cursor.peekId();
      if (id === undefined) break;
      const entry: { id: string; value: unknown; same?: boolean } = { id, value: cursor.parse() };
      if (probe) {
        const bytes = Buffer.from(`xx${probe(id)}yy`);
        entry.same = cursor.sameBytes(bytes, 2, bytes.length - 2);
      }
      seen.push(entry);
      cursor.take();
    }
  } finally {
    await cursor.close();
  }
  return seen;
}

const line = (id: string, values: unknown = {}) =>
  JSON.stringify({ id, name: `n ${id}`, version: '1', values });

describe('SortedLineCursor', () => {
  it('reads ids from the bytes, also across chunk boundaries, long lines, blank lines, CRLF and a last line without a break', async () => {
    const ids = ['a"quoted', 'a\\back', 'b', 'c\u2028sep', 'é-accent', 'z𝄞'].sort();
    const lines = ids.map((id, i) => line(id, { text: 'x'.repeat(i * 7), note: 'µ°—' }));
    const text = `${lines[0]}\n\n${lines[1]}\r\n${lines[2]}\n${lines[3]}\n\n${lines[4]}\n${lines[5]}`;
    const path = file(text);
    const byLine = new Map(ids.map((id, i) => [id, lines[i]!]));
    for (const chunk of [1, 2, 5, 16, 1 << 20]) {
      const seen = await readAll(path, chunk, (id) => byLine.get(id)!);
      expect(seen.map((s) => s.id)).toEqual(ids);
      expect(seen.map((s) => s.value)).toEqual(lines.map((l) => JSON.parse(l)));
      expect(seen.every((s) => s.same)).toBe(true);
    }
  });

  it('sameBytes is false for any other line, also one that is a prefix', async () => {
    const path = file(`${line('a', { v: 1 })}\n`);
    const seen = await readAll(path, 4, () => line('a', { v: 10 }));
    expect(seen[0]!.same).toBe(false);
    const shorter = await readAll(path, 4, () => line('a', { v: 1 }).slice(0, -1));
    expect(shorter[0]!.same).toBe(false);
  });

  it('any file of sorted lines reads back as written, whatever the chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6, unit: 'binary' }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 64 }),
        fc.boolean(),
        async (unsorted, chunk, trailingBreak) => {
          const ids = [...unsorted].sort();
          const lines = ids.map((id) => line(id, { id }));
          const path = file(lines.join('\n') + (trailingBreak && lines.length > 0 ? '\n' : ''));
          const seen = await readAll(path, chunk);
          expect(seen.map((s) => s.id)).toEqual(ids);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a damaged file fails loudly: ids out of order, a line that is not JSON, a line without an id', async () => {
    await expect(readAll(file(`${line('b')}\n${line('a')}\n`), 8)).rejects.toThrow(/ids out of order/);
    await expect(readAll(file(`${line('a')}\n${line('a')}\n`), 8)).rejects.toThrow(/ids out of order/);
    await expect(readAll(file(`${line('a')}\n{"id":"b",oops\n`), 8)).rejects.toThrow(
      /line 2: not valid JSON/,
    );
    await expect(readAll(file(`${line('a')}\n{"name":"x"}\n`), 8)).rejects.toThrow(
      /line 2: a record without an id/,
    );
  });

  it('no file: an empty side', async () => {
    const cursor = new SortedLineCursor(undefined);
    expect(cursor.ready).toBe(true);
    expect(cursor.peekId()).toBeUndefined();
    await cursor.close();
  });
});

describe('SortedLineCursor.skipTo', () => {
  it('goes on at any later line start without reading the bytes before, within the bytes in memory or beyond them, at any chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 40 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 8, max: 200 }),
        async (count, picks, chunkBytes) => {
          const ids = Array.from({ length: count }, (_, i) => `r${String(i).padStart(3, '0')}`);
          const lines = ids.map((id, i) => `${JSON.stringify({ id, n: 'x'.repeat(i % 7) })}\n`);
          const text = lines.join('');
          const starts = lines.map((_, i) => Buffer.byteLength(lines.slice(0, i).join('')));
          const path = file(text);
          // Ascending line numbers, as a spliced poll skips (each past the lines taken before).
          const targets = [...new Set(picks.map((p) => p % count))].sort((a, b) => a - b);
          const cursor = new SortedLineCursor(path, chunkBytes);
          try {
            let at = 0;
            for (const target of targets) {
              if (target < at) continue;
              cursor.skipTo(starts[target]!);
              expect(cursor.offset).toBe(starts[target]);
              if (!cursor.ready) await cursor.fill();
              expect(cursor.peekId()).toBe(ids[target]);
              cursor.take();
              if (!cursor.ready) await cursor.fill();
              expect(cursor.peekId()).toBe(ids[target + 1]);
              at = target + 1;
            }
            expect(() => cursor.skipTo(0)).toThrow(/cannot skip back/);
          } finally {
            await cursor.close();
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
