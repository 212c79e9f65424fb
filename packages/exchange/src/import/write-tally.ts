import type { RowPlan } from './row-plan.js';

/**
 * What an import's writer has done so far, counted alike whether it writes one row at a time
 * (RowWriter) or in batches (BulkWriter): the importer reads its report from these.
 */
export abstract class WriteTally {
  written = 0;
  created = 0;
  updated = 0;
  /** Creates the service answered with a record an earlier run created: nothing was written. */
  replayed = 0;
  deletedSince = 0;
  /** Rows created anew, and where the first MAX_NAMED of them are. */
  recreated = 0;
  readonly recreatedWhere: string[] = [];
  stopped = false;
  fatal: Error | undefined;
  readonly failures: { plan: RowPlan; problems: string[] }[] = [];

  /** Takes a planned row; waits only while the writes in flight are at their limit. */
  abstract write(plan: RowPlan): Promise<void>;
  /** Resolves once every write taken is done. */
  abstract drain(): Promise<void>;
}
