import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, jsonEqual, sameCanonicalJson } from './json-values.js';

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

  it('compares as the canonical texts compare, without writing them', () => {
    // JSON values with what form data and row conversions add: undefined members and items,
    // -0, NaN and Infinity; pairs that are equal (a copy with keys reordered) and that differ.
    const scalar = fc.oneof(
      fc.constantFrom<unknown>(undefined, null, 0, -0, NaN, Infinity, -Infinity, '', '0', true, false),
      fc.double(),
      fc.string({ maxLength: 4 }),
    );
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, scalar, tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 4 }),
      object: fc.dictionary(fc.constantFrom('a', 'b', '10', '9', '__proto__', ''), tie('value'), {
        maxKeys: 4,
      }),
    }));
    const reordered = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(reordered);
      if (v === null || typeof v !== 'object') return v;
      const copy: Record<string, unknown> = {};
      for (const key of Object.keys(v).reverse())
        Object.defineProperty(copy, key, {
          value: reordered((v as Record<string, unknown>)[key]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      return copy;
    };
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(sameCanonicalJson(a, b)).toBe(canonicalJson(a) === canonicalJson(b));
        expect(sameCanonicalJson(a, reordered(a))).toBe(true);
      }),
      { numRuns: 2000 },
    );
    expect(sameCanonicalJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameCanonicalJson([undefined], [null])).toBe(true);
    expect(sameCanonicalJson({ a: null }, {})).toBe(false);
    expect(sameCanonicalJson(JSON.parse('{"__proto__": {}}'), {})).toBe(false);
    expect(sameCanonicalJson({}, JSON.parse('{"__proto__": {}}'))).toBe(false);
  });
});
