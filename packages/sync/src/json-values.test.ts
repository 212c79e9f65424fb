import { describe, expect, it } from 'vitest';
import { jsonHash } from './json-values.js';

describe('jsonHash', () => {
  it('is the same for equal values whatever the key order, and differs for different ones', () => {
    expect(jsonHash({ b: 1, a: 2 })).toBe(jsonHash({ a: 2, b: 1 }));
    expect(jsonHash({ a: 1 })).not.toBe(jsonHash({ a: 2 }));
  });
});
