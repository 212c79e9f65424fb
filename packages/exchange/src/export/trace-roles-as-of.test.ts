import { describe, expect, it } from 'vitest';
import type { TraceModelVersion } from '@rxs/contract';
import { traceRolesAsOf } from './trace-roles-as-of.js';

/** A history of `count` versions, version n made on day n of November 2026, newest first. */
function history(count: number): TraceModelVersion[] {
  return Array.from({ length: count }, (_, i) => {
    const version = count - i;
    return {
      version,
      at: `2026-11-${String(version).padStart(2, '0')}T12:00:00.000Z`,
      changes: { added: [], removed: [], changed: [], reordered: false },
      roles: [{ id: `v${version}` }],
    } as unknown as TraceModelVersion;
  });
}

describe('traceRolesAsOf', () => {
  it('takes the roles of the newest version made at or before the moment, paging back through the history', async () => {
    const all = history(25);
    const asked: (number | undefined)[] = [];
    const page = async ({ limit, before }: { limit: number; before?: number }) => {
      asked.push(before);
      const older = all.filter((version) => before === undefined || version.version < before);
      return older.slice(0, Math.min(limit, 10));
    };
    expect(await traceRolesAsOf('2026-11-03T12:00:00.000Z', page)).toEqual([{ id: 'v3' }]);
    expect(asked).toEqual([undefined, 16, 6]);
    expect(await traceRolesAsOf('2026-11-20T00:00:00Z', page)).toEqual([{ id: 'v19' }]);
    expect(await traceRolesAsOf('2027-01-01T00:00:00Z', page)).toEqual([{ id: 'v25' }]);
  });

  it('has no roles before the first version, nor without a history', async () => {
    const all = history(3);
    expect(await traceRolesAsOf('2026-10-01T00:00:00Z', async () => all)).toEqual([]);
    expect(await traceRolesAsOf('2026-10-01T00:00:00Z', async () => [])).toEqual([]);
  });
});
