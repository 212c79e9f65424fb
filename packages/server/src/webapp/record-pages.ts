import type { ServiceRecord } from '@rxs/contract';
import type { Principal } from '../auth/principal.js';
import { eventLoopSlices } from '@rxs/exchange/export';
import type { RecordFilter, RecordsService } from '../services/records/service.js';

/**
 * Bytes of record JSON that one page of an in-process read holds at once. A listing read in one
 * statement pulls its rows in batches of hundreds, whatever their size: 256 records of 2 MB are half
 * a gigabyte before the first is used. Pages sized by bytes keep a read of large records to a few MB.
 */
export const PAGE_BYTES = 4 * 1024 * 1024;
/** Rows of the first page, before the records' size is known; and of any page at most. */
const FIRST_PAGE_ROWS = 4;
const MAX_PAGE_ROWS = 256;

/**
 * The records of `filter` in id order, one at a time, read in keyset pages (`after`, `limit`) whose
 * row count follows the largest record of the page before (and at most doubles from page to page),
 * so a page holds about `pageBytes` (one record at least). Pages are separate statements: a record created or moved during the read may be seen
 * or not, as with a paged listing over HTTP. The event loop gets a turn every few milliseconds of
 * the whole read, the caller's work on each record included: SQLite answers each page at once, so
 * a read of small pages would otherwise never give one.
 */
export async function* recordsInPages(
  records: RecordsService,
  principal: Principal,
  filter: Omit<RecordFilter, 'after' | 'limit'>,
  pageBytes = PAGE_BYTES,
): AsyncGenerator<ServiceRecord> {
  let after: string | undefined;
  let limit = FIRST_PAGE_ROWS;
  const turn = eventLoopSlices();
  for (;;) {
    let count = 0;
    let largest = 1;
    for await (const line of records.streamJsonLines(principal, { ...filter, after, limit })) {
      count++;
      // Characters, not bytes: close enough for a bound, and free.
      largest = Math.max(largest, line.length);
      const record = JSON.parse(line) as ServiceRecord;
      after = record._id;
      yield record;
      await turn();
    }
    if (count < limit) return;
    limit = Math.max(1, Math.min(MAX_PAGE_ROWS, 2 * limit, Math.floor(pageBytes / largest)));
  }
}
