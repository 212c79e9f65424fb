import { closeSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { HashSet, readableIdHash, RowIndexError, RowIndexReader, RowIndexWriter } from './row-index.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-row-index-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const path = () => join(root, `i-${++files}.rows`);

async function readEntries(file: string) {
  const reader = await RowIndexReader.open(file);
  const entries: [string, readonly [number, number], number, number][] = [];
  try {
    while (await reader.fill()) {
      entries.push([reader.nextId(), reader.nextHash(), reader.nextLine(), reader.nextRow()]);
      reader.skip();
    }
    return { header: reader.header, entries };
  } finally {
    await reader.close();
  }
}

describe('row index', () => {
  it('HashSet holds exactly the hashes it was given (halves that share low bits, signs, one half equal)', () => {
    const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    const hash = fc.tuple(int32, int32);
    fc.assert(
      fc.property(fc.array(hash, { maxLength: 200 }), fc.array(hash, { maxLength: 200 }), (given, others) => {
        const set = new HashSet(given);
        const key = ([a, b]: readonly [number, number]) => `${a},${b}`;
        const held = new Set(given.map(key));
        for (const [first, second] of given) expect(set.has(first, second)).toBe(true);
        // Near misses: the same first half, or the same low 16 bits of it, with anything else.
        const near = given.flatMap(([first, second]): [number, number][] => [
          [first, second ^ 1],
          [first ^ 0x10000, second],
          [(first + 65536) | 0, second],
        ]);
        for (const [first, second] of [...others, ...near])
          expect(set.has(first, second)).toBe(held.has(key([first, second])));
      }),
    );
  });

  it('reads back what was written, across chunks, with entries copied from another index and moved', async () => {
    const count = 40_000; // more than a chunk of entries
    const id = (i: number) => `6b${i.toString(16).padStart(22, '0')}`;
    const first = path();
    const writer = await RowIndexWriter.create(first);
    for (let i = 0; i < count; i++) {
      writer.add(id(i), readableIdHash(`REQ-${i}`), i * 100, 7 + i * 50);
      if (writer.full) await writer.flush();
    }
    expect(await writer.finish({ linesEnd: count * 100, rowsEnd: 7 + count * 50 })).toBe(true);
    const { header, entries } = await readEntries(first);
    expect(header).toEqual({ count, idBytes: 24, linesEnd: count * 100, rowsEnd: 7 + count * 50 });
    expect(entries[12_345]).toEqual([id(12_345), readableIdHash('REQ-12345'), 1_234_500, 7 + 12_345 * 50]);

    // Copied in chunks, every row moved by the same shift, lines kept; one found by binary search.
    const none = new HashSet([]);
    const reader = await RowIndexReader.open(first);
    const second = path();
    const copy = await RowIndexWriter.create(second);
    while (await reader.fill()) {
      const before = reader.countBefore(Buffer.from(id(30_000)));
      const all = reader.countBefore(undefined);
      const taking = before > 0 ? before : all;
      const shared = copy.copy(reader.entriesBytes(taking), taking, reader.idBytes, -7, none);
      expect(shared).toBeUndefined();
      reader.skip(taking);
      if (copy.full) await copy.flush();
    }
    await reader.close();
    expect(await copy.finish({ linesEnd: 1, rowsEnd: 2 })).toBe(true);
    const copied = await readEntries(second);
    expect(copied.entries.length).toBe(count);
    expect(copied.entries[29_999]).toEqual([id(29_999), readableIdHash('REQ-29999'), 2_999_900, 29_999 * 50]);
    expect(copied.entries[30_000]![0]).toBe(id(30_000));
  });

  it('countBefore finds the first id at or after the one asked, like a linear search', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 999 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 1000 }),
        async (numbers, probe) => {
          const ids = numbers.sort((a, b) => a - b).map((n) => `id${String(n).padStart(4, '0')}`);
          const file = path();
          const writer = await RowIndexWriter.create(file);
          ids.forEach((id, i) => writer.add(id, [0, 0], i, i));
          await writer.finish({ linesEnd: ids.length, rowsEnd: ids.length });
          const reader = await RowIndexReader.open(file);
          try {
            await reader.fill();
            const target = `id${String(probe).padStart(4, '0')}`;
            expect(reader.countBefore(Buffer.from(target))).toBe(ids.filter((id) => id < target).length);
          } finally {
            await reader.close();
          }
        },
      ),
    );
  });

  it('gives no index for ids of several widths, non-ASCII ids or no records, and refuses a damaged file', async () => {
    for (const ids of [['abc', 'abcd'], ['abé', 'abf'], []]) {
      const file = path();
      const writer = await RowIndexWriter.create(file);
      ids.forEach((id, i) => writer.add(id, [0, 0], i, i));
      expect(await writer.finish({ linesEnd: 9, rowsEnd: 9 })).toBe(false);
      expect(existsSync(file)).toBe(false);
    }
    const damaged = path();
    writeFileSync(damaged, Buffer.concat([Buffer.from('RXSROWS2'), Buffer.alloc(24), Buffer.from('x')]));
    await expect(RowIndexReader.open(damaged)).rejects.toThrow(RowIndexError);
    const other = path();
    writeFileSync(other, 'id,name\n1,two\n');
    await expect(RowIndexReader.open(other)).rejects.toThrow(RowIndexError);
  });

  it('an index that cannot be written (an I/O error, a full disk) is removed and reported as not kept, without failing', async () => {
    const file = path();
    const writer = await RowIndexWriter.create(file);
    ['aaaa', 'aaab', 'aaac'].forEach((id, i) => writer.add(id, [1, 2], i * 10, i * 20));
    // The file's descriptor closed under the writer: its next write fails as on a dead disk.
    closeSync((writer as unknown as { handle: FileHandle }).handle.fd);
    expect(await writer.finish({ linesEnd: 30, rowsEnd: 60 })).toBe(false);
    expect(existsSync(file)).toBe(false);
  });

  it('finds a copied entry whose readable id hash is a changed one, by both halves of the hash', async () => {
    const file = path();
    const writer = await RowIndexWriter.create(file);
    ['REQ-1', 'REQ-2', 'REQ-3'].forEach((name, i) => writer.add(`id${i}`, readableIdHash(name), i, i));
    await writer.finish({ linesEnd: 3, rowsEnd: 3 });
    const copyOf = async (refused: HashSet) => {
      const reader = await RowIndexReader.open(file);
      const copy = await RowIndexWriter.create(path());
      try {
        await reader.fill();
        return copy.copy(reader.entriesBytes(3), 3, reader.idBytes, 0, refused);
      } finally {
        await reader.close();
        await copy.abandon();
      }
    };
    expect(await copyOf(new HashSet([readableIdHash('REQ-2')]))).toBe('id1');
    expect(await copyOf(new HashSet([readableIdHash('REQ-4'), readableIdHash('REQ-20')]))).toBeUndefined();
    // Only the first half equal: not the same hash.
    const [first, second] = readableIdHash('REQ-3');
    expect(await copyOf(new HashSet([[first, second ^ 1]]))).toBeUndefined();
    // FNV-1a's 32 bits alone collide (REQ-179599, REQ-362382); the 64 do not.
    expect(readableIdHash('REQ-179599')[0]).toBe(readableIdHash('REQ-362382')[0]);
    expect(readableIdHash('REQ-179599')).not.toEqual(readableIdHash('REQ-362382'));
  });

  it('copy moves every row and keeps every line, and finds a refused hash alike, whatever the id width (aligned numbers or not) and the shift', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 49 }),
        fc.constantFrom(0, 17, -5, 1_000_000),
        fc.option(fc.nat(), { nil: undefined }),
        async (width, count, skipped, row, refusedPick) => {
          const id = (i: number) => String(i).padStart(width, '0').slice(-width);
          fc.pre(width >= 2 || count <= 10);
          const file = path();
          const writer = await RowIndexWriter.create(file);
          for (let i = 0; i < count; i++) writer.add(id(i), readableIdHash(`REQ-${i}`), i * 100, 7 + i * 50);
          await writer.finish({ linesEnd: count * 100, rowsEnd: 7 + count * 50 });
          const reader = await RowIndexReader.open(file);
          const second = path();
          const copy = await RowIndexWriter.create(second);
          // From an entry inside the chunk: the entries' bytes start anywhere in the buffer.
          const from = Math.min(skipped, count - 1);
          const refused = refusedPick === undefined ? undefined : from + (refusedPick % (count - from));
          try {
            await reader.fill();
            reader.skip(from);
            const shared = copy.copy(
              reader.entriesBytes(count - from),
              count - from,
              reader.idBytes,
              row,
              new HashSet(refused === undefined ? [] : [readableIdHash(`REQ-${refused}`)]),
            );
            expect(shared).toBe(refused === undefined ? undefined : id(refused));
            if (refused !== undefined) return;
            await copy.finish({ linesEnd: 1, rowsEnd: 2 });
          } finally {
            await reader.close();
            await copy.abandon();
          }
          const copied = await readEntries(second);
          expect(copied.entries).toEqual(
            Array.from({ length: count - from }, (_, k) => {
              const i = from + k;
              return [id(i), readableIdHash(`REQ-${i}`), i * 100, 7 + i * 50 + row];
            }),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
