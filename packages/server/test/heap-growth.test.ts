import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../src/config.js';
import { applyHeapGrowingPercent, parseHeapGrowingPercent } from '../src/heap-growth.js';

describe('RXS_HEAP_GROWING_PERCENT: how far the heap grows past what is live', () => {
  it('takes a whole number of percent, 0 for V8 own rule, and refuses anything else by name', () => {
    expect(configFromEnv({ RXS_HEAP_GROWING_PERCENT: '35' }).heapGrowingPercent).toBe(35);
    expect(configFromEnv({}).heapGrowingPercent).toBeUndefined();
    expect(parseHeapGrowingPercent('0')).toBe(0);
    for (const bad of ['-5', '1.5', 'fast', '1001', ''])
      expect(() => parseHeapGrowingPercent(bad)).toThrow(/RXS_HEAP_GROWING_PERCENT must be a whole number/);
  });

  it('leaves a factor given on the node command line alone, and V8 its own rule at 0', () => {
    expect(applyHeapGrowingPercent(20, ['--heap-growing-percent=50'])).toBe('set by the command line');
    expect(applyHeapGrowingPercent(20, ['--heap_growing_percent=50'])).toBe('set by the command line');
    expect(applyHeapGrowingPercent(0, [])).toBe('left to V8');
  });
});
