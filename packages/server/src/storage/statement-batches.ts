/**
 * Rows written many to a statement, in statements short enough to give the event loop a turn
 * between them. SQLite runs a statement synchronously, and its time follows the rows and bytes it
 * writes: 128 rows, or 256 KiB of text, take a few milliseconds, and a statement for more than
 * that saves nothing measurable.
 */

/**
 * Rows one statement writes at most (a power of two): well under SQLite's 32 766 bound parameters
 * at 21 columns.
 */
export const STATEMENT_ROWS = 128;
/** Text one statement writes at most, unless a single row is larger. */
export const STATEMENT_BYTES = 256 * 1024;

/** The length of the text values of a row, near enough its bytes for bounding a statement. */
export function textLength(values: Iterable<unknown>): number {
  let length = 0;
  for (const value of values) if (typeof value === 'string') length += value.length;
  return length;
}

/**
 * The rows in order, in batches of at most STATEMENT_ROWS rows and STATEMENT_BYTES of text (by
 * `size`; a larger row alone). A batch that the bytes cut short is a power of two rows, the sizes
 * of the multi-row statements that are prepared (records-write.ts), so that it is one statement.
 */
export function* statementBatches<T>(rows: readonly T[], size: (row: T) => number): Generator<T[]> {
  let start = 0;
  while (start < rows.length) {
    let end = start + 1;
    let bytes = size(rows[start]!);
    while (end < rows.length && end - start < STATEMENT_ROWS) {
      bytes += size(rows[end]!);
      if (bytes > STATEMENT_BYTES) break;
      end++;
    }
    const count = end === rows.length ? end - start : 2 ** Math.floor(Math.log2(end - start));
    yield rows.slice(start, start + count);
    start += count;
  }
}
