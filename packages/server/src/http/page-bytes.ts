/**
 * The bytes of JSON one page may carry (record versions, as-of pages, feed pages, the web app's
 * history): a page stops once the next item would pass it, and always holds at least one item, so a
 * single large record is still readable. Rows alone do not bound a page: 50 records of 2 MB each are
 * 100 MB, which the server would build and send at once. RXS_PAGE_BYTES sets it (tests use small
 * pages); read at each request, so a test can set it before its server starts.
 */
export const DEFAULT_PAGE_BYTES = 8 * 1024 * 1024;

/** A record's JSON bytes beyond its stored text (names of fields, ids, dates): about 350, rounded up. */
export const ITEM_OVERHEAD_BYTES = 512;

export function pageBytes(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.RXS_PAGE_BYTES;
  if (text === undefined || text.trim() === '') return DEFAULT_PAGE_BYTES;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < 1 || !Number.isSafeInteger(value))
    throw new Error(`RXS_PAGE_BYTES must be a whole number ≥ 1 (bytes of JSON per page), got "${text}".`);
  return value;
}

/**
 * How many of `sizes` (in order) a page takes: as many as fit in `budget` bytes, at least one when
 * there is one, at most `limit`.
 */
export function itemsWithin(sizes: readonly number[], limit: number, budget: number): number {
  let bytes = 0;
  let count = 0;
  for (const size of sizes) {
    if (count >= limit) break;
    if (count > 0 && bytes + size > budget) break;
    bytes += size;
    count++;
  }
  return count;
}
