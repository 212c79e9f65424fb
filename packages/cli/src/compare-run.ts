import { rm } from 'node:fs/promises';
import { makeScratchFolder } from '@rxs/exchange/export';
import { createSyncSession, type ChangeReport, type SyncSession } from '@rxs/sync';
import type { Connection } from './connection.js';
import { alongside, runExport, type ExportRunOptions, type PartConsumer } from './export-run.js';
import type { Progress } from './progress.js';

/**
 * Two moments compared by the sync engine, without touching any snapshot of the user's: the
 * earlier moment is exported into a snapshot in a scratch folder, and the later export is compared
 * with it as it passes (`later` takes its parts), so that only one of them is ever read twice. The
 * report's lists are bounded by its detail limit, whatever the size of the exports. `rxs sync
 * --since` and the change summary of a document share it.
 */
export interface Comparison {
  /** Takes the parts of the later export (`runExport`'s `also`). */
  readonly later: PartConsumer;
  /** The changes from the earlier export to the later one; there once the later export has ended. */
  report(): ChangeReport;
  /** Removes the scratch snapshot; the comparison is over. */
  dispose(): Promise<void>;
}

/**
 * Exports `earlier` (with no output) into a scratch snapshot. `observe.earlier` sees that export's
 * parts too, and `observe.later` the later one's: for what the report does not keep (record names).
 */
export async function startComparison(
  connection: Connection,
  earlier: ExportRunOptions,
  progress: Progress,
  observe: { earlier?: PartConsumer; later?: PartConsumer } = {},
): Promise<Comparison> {
  const folder = await makeScratchFolder('rxs-compare');
  let second: SyncSession | undefined;
  try {
    const first = await createSyncSession(folder);
    try {
      const also = observe.earlier ? alongside(first, observe.earlier) : first;
      await runExport(connection, { ...earlier, out: undefined }, progress, also);
      await first.commit();
    } catch (error) {
      await first.abort();
      throw error;
    }
    second = await createSyncSession(folder);
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  const session = second;
  return {
    later: observe.later ? alongside(session, observe.later) : session,
    report: () => {
      const report = session.report;
      if (!report) throw new Error('The comparison was asked for its report before the later export ended.');
      return report;
    },
    dispose: async () => {
      try {
        await session.abort();
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    },
  };
}
