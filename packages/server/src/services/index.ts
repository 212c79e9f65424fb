import { Accounts } from '../auth/accounts.js';
import { ExpensiveReads } from '../http/expensive-reads.js';
import { ExportSlots } from '../http/export-slots.js';
import type { Storage } from '../storage/database.js';
import { asOfReader, type AsOfReader } from './history/as-of.js';
import { BaselinesService } from './history/baselines.js';
import { RecordHistoryService } from './history/record-history.js';
import { RecordChangesFeed } from './records/changes-feed.js';
import { RecordOutlineService } from './records/outline.js';
import { RecordsService, type RecordLimits } from './records/service.js';
import { TechdocService } from './techdoc/service.js';
import { TraceChangesFeed } from './tracer/changes-feed.js';
import { TracerService } from './tracer/service.js';

/** The service layer, independent of HTTP: the CLI, the web app and tests use it directly too. */
export interface Services {
  storage: Storage;
  accounts: Accounts;
  techdoc: TechdocService;
  records: RecordsService;
  /** RXS: topics' document outlines (`/records/outline/...`). */
  outlines: RecordOutlineService;
  tracer: TracerService;
  /** Records' audit trails. */
  history: RecordHistoryService;
  baselines: BaselinesService;
  /** Reads an `as_of` for a tenant (422 for a bad one). */
  readAsOf: AsOfReader;
  /** `GET /records/changes`. */
  recordChanges: RecordChangesFeed;
  /** `GET /traces/changes`. */
  traceChanges: TraceChangesFeed;
}

export function createServices(storage: Storage, limits: RecordLimits = {}): Services {
  const techdoc = new TechdocService(storage);
  const records = new RecordsService(storage, techdoc, limits);
  return {
    storage,
    accounts: new Accounts(storage),
    techdoc,
    records,
    outlines: new RecordOutlineService(storage),
    recordChanges: new RecordChangesFeed(storage, records),
    tracer: new TracerService(storage),
    traceChanges: new TraceChangesFeed(storage),
    history: new RecordHistoryService(storage, new ExpensiveReads(ExportSlots.fromEnv())),
    baselines: new BaselinesService(storage),
    readAsOf: asOfReader(storage),
  };
}
