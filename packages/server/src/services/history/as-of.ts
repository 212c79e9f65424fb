import { unprocessable, validationItem } from '../../http/errors.js';
import { parseIsoDate } from '../../http/iso-date.js';
import type { Storage } from '../../storage/database.js';

/** How far ahead of the server's clock an `as_of` may be: clients' clocks drift a little. */
const FUTURE_TOLERANCE_MS = 1000;

/**
 * An `as_of` moment as stored timestamps compare against it (`YYYY-MM-DDTHH:MM:SS.mmmZ`), or the
 * 422 that says what to send: not ISO 8601, in the future (nothing is known yet), or before the
 * tenant existed (nothing was there, and an empty answer would look like data loss).
 */
export async function parseAsOf(
  storage: Storage,
  tenantId: string,
  value: string,
  loc: (string | number)[],
): Promise<string> {
  const at = parseIsoDate(value, loc, 'start');
  if (Date.parse(at) > Date.now() + FUTURE_TOLERANCE_MS) {
    throw unprocessable([
      validationItem(
        loc,
        `"${value}" is in the future: as_of reads what was recorded at a past moment. Leave it out to read the present state.`,
        'as_of_future',
      ),
    ]);
  }
  const tenant = await storage.db
    .selectFrom('tenants')
    .select('created_at')
    .where('id', '=', tenantId)
    .executeTakeFirst();
  if (tenant && at < tenant.created_at) {
    throw unprocessable([
      validationItem(
        loc,
        `"${value}" is before your tenant existed (created ${tenant.created_at}): nothing was recorded then. Use a moment after ${tenant.created_at}.`,
        'as_of_before_tenant',
      ),
    ]);
  }
  return at;
}

/**
 * Reads a request's optional `as_of` for the caller's tenant (what routes are given; see
 * parseAsOf): undefined when the request has none, so it reads the present.
 */
export type AsOfReader = (
  tenantId: string,
  value: string | undefined,
  loc: (string | number)[],
) => Promise<string | undefined>;

export function asOfReader(storage: Storage): AsOfReader {
  return async (tenantId, value, loc) =>
    value === undefined ? undefined : parseAsOf(storage, tenantId, value, loc);
}
