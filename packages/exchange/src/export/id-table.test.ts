import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClaimTable, HashedCounts } from './id-table.js';

const hexId = fc
  .uint8Array({ minLength: 12, maxLength: 12 })
  .map((bytes) => Buffer.from(bytes).toString('hex'));

describe('ClaimTable', () => {
  it('answers like a Map of first claims, through growth, for hex and other owners', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.string({ maxLength: 6 }), fc.oneof(hexId, fc.string({ minLength: 1, maxLength: 8 }))),
          {
            maxLength: 3000,
          },
        ),
        (claims) => {
          const table = new ClaimTable();
          const model = new Map<string, string>();
          for (const [key, owner] of claims) {
            expect(table.find(key)).toBe(model.get(key));
            expect(table.claim(key, owner)).toBe(model.get(key));
            if (!model.has(key)) model.set(key, owner);
          }
          for (const [key, owner] of model) expect(table.find(key)).toBe(owner);
          expect(table.find('never claimed \u0000')).toBeUndefined();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps a million distinct ids apart and names the first owner of a repeated one', () => {
    const table = new ClaimTable();
    const owner = (i: number) => i.toString(16).padStart(24, '0');
    let clashes = 0;
    for (let i = 0; i < 1_000_000; i++) if (table.claim(`REQ_${i}`, owner(i)) !== undefined) clashes++;
    expect(clashes).toBe(0);
    expect(table.claim('REQ_123456', owner(7))).toBe(owner(123456));
  });
});

describe('HashedCounts', () => {
  it('property: counts every string as a Map of the strings would, through growth', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 12 }), { maxLength: 4000 }), (keys) => {
        const counts = new HashedCounts();
        const expected = new Map<string, number>();
        for (const key of keys) {
          expect(counts.add(key)).toBe(expected.get(key) ?? 0);
          expected.set(key, (expected.get(key) ?? 0) + 1);
        }
        for (const [key, count] of expected) expect(counts.count(key)).toBe(count);
        expect(counts.count('never added \u0000')).toBe(0);
      }),
      { numRuns: 50 },
    );
  });
});
