import type { TraceModelVersion, TraceRole } from '@rxs/contract';

/** Versions asked for per page of the model's history (the service's most). */
const HISTORY_PAGE = 100;

/**
 * The trace model's roles as they were at `asOf`: those of the newest version of the model's
 * history made at or before that moment; none when the model had no version yet. `page` lists the
 * history newest first, `before` a version number (GET /trace-model/history). An export of a past
 * moment names its links as an export taken then did, so it equals that one byte for byte.
 */
export async function traceRolesAsOf(
  asOf: string,
  page: (options: { limit: number; before?: number }) => Promise<readonly TraceModelVersion[]>,
): Promise<TraceRole[]> {
  const moment = Date.parse(asOf);
  let before: number | undefined;
  for (;;) {
    const versions = await page({ limit: HISTORY_PAGE, ...(before !== undefined && { before }) });
    const then = versions.find((version) => Date.parse(version.at) <= moment);
    if (then) return then.roles;
    const oldest = versions.at(-1);
    if (!oldest || oldest.version <= 1) return [];
    before = oldest.version;
  }
}
