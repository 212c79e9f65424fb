import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, jsonEqual } from './json-values.js';

describe('JSON values', () => {
  it('equality ignores key order, not array order or types', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2, d: null }] }, { b: [1, { d: null, c: 2 }], a: 1 })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, b: 2 }, { a: 1, c: 2 })).toBe(false);
    expect(jsonEqual('1', 1)).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual(JSON.parse('{"__proto__": 1}'), JSON.parse('{"__proto__": 2}'))).toBe(false);
  });

  it('equal values have equal canonical text; the text is JSON of the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = JSON.parse(JSON.stringify(value)) as unknown;
        expect(jsonEqual(value, copy)).toBe(true);
        expect(canonicalJson(copy)).toBe(canonicalJson(value));
        expect(jsonEqual(JSON.parse(canonicalJson(value)), copy)).toBe(true);
      }),
    );
  });

  it('is the text fingerprints kept before were made of, byte for byte', () => {
    // The earlier implementation: idempotency keys kept within their 24 hours must still match.
    const reference = (value: unknown): string => {
      if (Array.isArray(value)) return `[${value.map((item) => reference(item ?? null)).join(',')}]`;
      if (value !== null && typeof value === 'object') {
        const object = value as Record<string, unknown>;
        const members = Object.keys(object)
          .filter((key) => object[key] !== undefined)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${reference(object[key])}`);
        return `{${members.join(',')}}`;
      }
      return JSON.stringify(value ?? null);
    };
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
    );
    const odd = { a: [undefined, () => 1], b: undefined, '': { 'é"\n': 1e21, '-0': -0 } };
    expect(canonicalJson(odd)).toBe(reference(odd));
  });

  it("sorts every object's keys by code unit, array-index keys too", () => {
    expect(canonicalJson({ b: [1, undefined], a: undefined, 10: 'x', 9: 'y', Z: { d: 1, c: null } })).toBe(
      '{"10":"x","9":"y","Z":{"c":null,"d":1},"b":[1,null]}',
    );
  });
});
