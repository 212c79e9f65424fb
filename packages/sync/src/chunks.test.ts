import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ForwardRanges, NEAR_BYTES } from './chunks.js';
import { SortedLineCursor } from './line-cursor.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-chunks-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
function file(bytes: Buffer | string): string {
  const path = join(root, `f-${++files}`);
  writeFileSync(path, bytes);
  return path;
}

describe('ForwardRanges', () => {
  it('hands on exactly the bytes of ascending ranges, near each other or far apart, whatever the chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 3000 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(400)), { maxLength: 12 }),
        fc.integer({ min: 1, max: 700 }),
        async (content, picks, chunkBytes) => {
          const bytes = Buffer.from(content);
          // Ascending, non-overlapping ranges [from, to) inside the file.
          const starts = [...new Set(picks.map(([at]) => at % bytes.length))].sort((a, b) => a - b);
          const ranges = starts.map((from, i) => {
            const limit = i + 1 < starts.length ? starts[i + 1]! : bytes.length;
            return [from, Math.min(limit, from + picks[i]![1])] as const;
          });
          const handle = await open(file(bytes), 'r');
          const reader = new ForwardRanges(handle, chunkBytes);
          try {
            for (const [from, to] of ranges) {
              const handed: Buffer[] = [];
              await reader.copy(from, to, (piece) => handed.push(Buffer.from(piece)));
              expect(Buffer.concat(handed).equals(bytes.subarray(from, to))).toBe(true);
            }
            await expect(reader.copy(bytes.length, bytes.length + 5, () => undefined)).rejects.toThrow(
              /ends at byte/,
            );
          } finally {
            await handle.close();
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('SortedLineCursor: reading near after a jump', () => {
  it('reads whole lines shorter and longer than a near read, after every jump', async () => {
    const sizes = [
      10,
      NEAR_BYTES - 40,
      NEAR_BYTES,
      NEAR_BYTES + 5,
      3 * NEAR_BYTES,
      20,
      2 * NEAR_BYTES + 1,
      7,
    ];
    const lines = sizes.map((size, i) => JSON.stringify({ id: `r${i}`, text: 'x'.repeat(size) }));
    const path = file(lines.map((line) => `${line}\n`).join(''));
    const starts = lines.map((_, i) => lines.slice(0, i).reduce((at, line) => at + line.length + 1, 0));
    for (const step of [1, 2, 3]) {
      const cursor = new SortedLineCursor(path, 64);
      try {
        for (let i = 0; i < lines.length; i += step) {
          cursor.skipTo(starts[i]!);
          if (!cursor.ready) await cursor.fill();
          expect(cursor.peekId()).toBe(`r${i}`);
          expect(cursor.line().toString()).toBe(lines[i]);
          cursor.take();
        }
      } finally {
        await cursor.close();
      }
    }
  });
});
