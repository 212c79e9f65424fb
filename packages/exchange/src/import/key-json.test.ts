import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyJson } from './row-plan.js';

/**
 * The text idempotency keys were first made from, kept as the definition `keyJson` must equal:
 * a key made by an earlier version must be made again, or a re-run writes its rows twice.
 */
function byReplacer(value: unknown): string | undefined {
  return JSON.stringify(value, (_, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

describe('keyJson', () => {
  it('writes what JSON.stringify writes with the sorting replacer, for any value', () => {
    const keys = fc.oneof(
      fc.string(),
      fc.constantFrom(
        '0',
        '1',
        '2',
        '10',
        '01',
        '-1',
        '1.5',
        '4294967294',
        '4294967295',
        '__proto__',
        'é',
        'Z',
        'a',
      ),
    );
    const value = fc.letrec((tie) => ({
      any: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        fc.constantFrom(undefined, -0, Number.NaN, Infinity, () => 1, new Date(0)),
        fc.array(tie('any')),
        fc.dictionary(keys, tie('any')),
      ),
    })).any;
    fc.assert(
      fc.property(fc.array(value, { maxLength: 4 }), (parts) => {
        expect(keyJson(parts)).toBe(byReplacer(parts));
      }),
      { numRuns: 1000 },
    );
  });

  it('orders array-index keys first, in numeric order, as an object made from sorted entries does', () => {
    const data = { b: 1, 10: 'ten', a: [{ z: 1, y: undefined, 2: null }], 2: true, '01': 'text' };
    expect(keyJson(data)).toBe('{"2":true,"10":"ten","01":"text","a":[{"2":null,"z":1}],"b":1}');
    expect(keyJson(data)).toBe(byReplacer(data));
  });
});
