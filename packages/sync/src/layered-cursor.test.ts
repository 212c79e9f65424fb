import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { goneLine, isGoneLine, LayeredLineCursor } from './layered-cursor.js';
import { SortedLineCursor } from './line-cursor.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-layered-cursor-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
function file(lines: string[]): string {
  const path = join(root, `f-${++files}.jsonl`);
  writeFileSync(path, lines.map((line) => `${line}\n`).join(''));
  return path;
}

const idOf = (n: number) => `r${String(n).padStart(3, '0')}`;
// Values that end like a gone line must not read as one.
const line = (id: string, text: string) =>
  JSON.stringify({ id, name: `n ${id}`, version: '1', values: { text, gone: true } });

/** A base, an overlay over it, and the records one file holding the merged result would have. */
const layers = fc
  .record({
    base: fc.uniqueArray(fc.nat(60), { maxLength: 30 }),
    overlay: fc.array(fc.record({ n: fc.nat(60), gone: fc.boolean(), text: fc.string({ maxLength: 20 }) }), {
      maxLength: 20,
    }),
    chunkBytes: fc.integer({ min: 8, max: 300 }),
  })
  .map(({ base, overlay, chunkBytes }) => {
    const baseLines = [...base]
      .sort((a, b) => a - b)
      .map((n) => ({ id: idOf(n), line: line(idOf(n), 'base') }));
    const byId = new Map<number, { gone: boolean; text: string }>();
    for (const change of overlay) byId.set(change.n, change);
    const overlayLines = [...byId.entries()]
      .sort(([a], [b]) => a - b)
      .map(([n, change]) => ({
        id: idOf(n),
        line: change.gone ? goneLine(idOf(n)) : line(idOf(n), change.text),
      }));
    const merged = new Map(baseLines.map((entry) => [entry.id, entry.line]));
    for (const { id, line: text } of overlayLines)
      if (isGoneLine(Buffer.from(text))) merged.delete(id);
      else merged.set(id, text);
    const expected = [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    return { baseLines, overlayLines, expected, chunkBytes };
  });

async function readRest(cursor: LayeredLineCursor): Promise<[string, string][]> {
  const seen: [string, string][] = [];
  for (;;) {
    if (!cursor.ready) await cursor.fill();
    const id = cursor.peekId();
    if (id === undefined) return seen;
    seen.push([id, cursor.line().toString()]);
    expect(cursor.parse<{ id: string }>().id).toBe(id);
    cursor.take();
  }
}

describe('LayeredLineCursor', () => {
  it('reads a base through its overlay as one file of the merged records, at any chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(layers, async ({ baseLines, overlayLines, expected, chunkBytes }) => {
        const cursor = new LayeredLineCursor(
          new SortedLineCursor(file(baseLines.map((e) => e.line)), chunkBytes),
          new SortedLineCursor(file(overlayLines.map((e) => e.line)), chunkBytes),
        );
        try {
          expect(await readRest(cursor)).toEqual(expected);
        } finally {
          await cursor.close();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('skipTo a base line start and past the overlay up to an id: the records after it, as a merged file has them', async () => {
    await fc.assert(
      fc.asyncProperty(layers, fc.nat(), async ({ baseLines, overlayLines, expected, chunkBytes }, pick) => {
        fc.pre(baseLines.length > 0);
        const target = pick % baseLines.length;
        const start = baseLines.slice(0, target).reduce((at, e) => at + Buffer.byteLength(e.line) + 1, 0);
        const lastId = target === 0 ? '' : baseLines[target - 1]!.id;
        const cursor = new LayeredLineCursor(
          new SortedLineCursor(file(baseLines.map((e) => e.line)), chunkBytes),
          new SortedLineCursor(file(overlayLines.map((e) => e.line)), chunkBytes),
        );
        try {
          await cursor.skipTo(start, lastId);
          expect(cursor.offset).toBe(start);
          expect(await readRest(cursor)).toEqual(expected.filter(([id]) => id > lastId));
        } finally {
          await cursor.close();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('takeIfSame takes the merged line only: the overlay line of a changed record, never the base line it hides', async () => {
    const cursor = new LayeredLineCursor(
      new SortedLineCursor(file([line('a', 'old'), line('b', 'kept')])),
      new SortedLineCursor(file([line('a', 'new')])),
    );
    try {
      await cursor.fill();
      const old = Buffer.from(line('a', 'old'));
      expect(cursor.takeIfSame(old, 0, old.length, 'a')).toBe(false);
      const current = Buffer.from(line('a', 'new'));
      expect(cursor.takeIfSame(current, 0, current.length, 'a')).toBe(true);
      expect(await readRest(cursor)).toEqual([['b', line('b', 'kept')]]);
    } finally {
      await cursor.close();
    }
  });
});
