import { describe, expect, it } from 'vitest';
import { STATEMENT_BYTES, STATEMENT_ROWS, statementBatches } from './statement-batches.js';

const sizes = (rows: readonly number[], size: (row: number) => number) =>
  [...statementBatches(rows, size)].map((batch) => batch.length);
const rows = (count: number) => Array.from({ length: count }, (_, i) => i);

describe('statementBatches', () => {
  it('bounds a batch by rows, and by bytes in a power of two rows', () => {
    expect(sizes(rows(300), () => 10)).toEqual([STATEMENT_ROWS, STATEMENT_ROWS, 300 - 2 * STATEMENT_ROWS]);
    // 5 KB rows: 51 fit the bytes; 32 go in one statement.
    expect(sizes(rows(100), () => 5000)).toEqual([32, 32, 36]);
    expect(sizes(rows(3), () => STATEMENT_BYTES * 2)).toEqual([1, 1, 1]);
    expect(sizes([], () => 1)).toEqual([]);
  });

  it('keeps every row once, in order', () => {
    const all = rows(1000);
    const batches = [...statementBatches(all, (row) => (row % 7 === 0 ? 200_000 : 1000))];
    expect(batches.flat()).toEqual(all);
    for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(STATEMENT_ROWS);
  });
});
