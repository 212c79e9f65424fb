import { randomUUID } from 'node:crypto';
import { eventLoopSlices } from '../event-loop.js';
import type { RecordsClient } from '@rxs/client';
import type { TechdocClient } from '@rxs/client';
import { NotFoundError, RxsApiError } from '@rxs/client';
import type { ExportMapping } from '../export/procedure.js';
import { defaultExportMapping } from '../export/procedure.js';
import { componentsByKey } from '../reqif/form-components.js';
import { loadConditionsFor, recordDataValidator } from '@rxs/contract/validation/checks';
import { HashedCounts } from '../export/id-table.js';
import { buildFieldMap } from '../mapping/field-map.js';
import { CLI_WORDING, listed, MAX_NAMED, type ImportWording } from './wording.js';
import { BulkWriter } from './bulk-writer.js';
import { RowWriter } from './row-writer.js';
import type { WriteTally } from './write-tally.js';
import { decodePlan, decodeRow, encodePlan, encodeRow, ImportSpool, type SpoolFile } from './spool.js';
import { ImportColumns, type ColumnMapping } from './columns.js';
import {
  planRow,
  identifyRow,
  inFileOrder,
  readableFallback,
  sourceIdentity,
  type ExistingRecords,
  type IdentifiedRow,
  type ImportTarget,
  type RowPlan,
  type RowPlannerOptions,
} from './row-plan.js';
import { ImportFileError } from './errors.js';
import { TopicMatches, type MissingRecords, type Referenced } from './existing-records.js';
import { DatesOfDateTimes } from './form-dates.js';
import { FIXED_COLUMNS, type ImportFormat, type RowSource, type SourceRow } from './source-row.js';

/**
 * The calls an import makes: an `RxsClient` has them, and a server can answer them in-process
 * (the web app's import) with the same errors (`NotFoundError`, `ValidationError`, `ConflictError`,
 * and status 410 for a write whose record was deleted since: `RecordDeletedSinceError`).
 */
export interface ImportClient {
  techdoc: Pick<TechdocClient, 'getTopic' | 'listTopics'>;
  records: Pick<
    RecordsClient,
    'listRecords' | 'getRecord' | 'createRecord' | 'updateRecord' | 'deleteRecord' | 'bulkWrite'
  >;
}

export interface ImportOptions extends Omit<RowPlannerOptions, 'writing'> {
  /**
   * Where the import keeps its scratch copy of the rows while it runs (about twice the file's size;
   * removed when it ends). Default: the system's temporary folder (TMPDIR).
   */
  scratchDir?: string;
  /** The KT revision the records belong to (its current revision). */
  revisionId: string;
  /** Check every row and say what would happen; write nothing. */
  dryRun?: boolean;
  /** Write the valid rows when some are rejected (default: all or nothing). */
  continueOnError?: boolean;
  /** Columns that name no field are left out instead of stopping the import. */
  ignoreUnknownColumns?: boolean;
  /** File column -> semantic name or form key ('' leaves the column out). */
  renames?: ReadonlyMap<string, string>;
  /** Identifier rules and ReqIF type names of a mapping file, as `rxs export --mapping`. */
  mapping?: ExportMapping;
  /** Rows of the check to keep in the report's `preview` (default 0): what a person reviews before writing. */
  previewRows?: number;
  /**
   * Writes in flight at once: batches where the service takes them (default 2), else single
   * writes (default 4); record deletions of `removeMissing` too.
   */
  concurrency?: number;
  /**
   * Create anew a row whose record an earlier import of it created and someone deleted since. By
   * default such a row is reported and not written (the deletion may have been deliberate), and
   * the import is not complete. Created anew, it gets a key derived from its own, so a further
   * run answers with the new record instead of creating yet another.
   */
  recreateDeleted?: boolean;
  /**
   * Delete the topic's records whose source id (`context.global_element_id`) the file no longer
   * has, once every row was written. By default they are reported (`missing`) and kept.
   */
  removeMissing?: boolean;
  onProgress?: (progress: ImportProgress) => void;
}

export interface ImportProgress {
  phase: 'reading' | 'matching' | 'checking' | 'writing';
  rows: number;
  /** Rows in all, once the file has been read. */
  total?: number;
}

export interface RowProblem {
  where: string;
  readableId?: string;
  recordId?: string;
  /** `check`: found before writing; `write`: the service refused the write. */
  phase: 'check' | 'write';
  problems: string[];
}

export interface RowPreview {
  where: string;
  action: RowPlan['action'];
  name?: string;
  readableId?: string;
  recordId?: string;
  problems: string[];
}

export interface ImportReport {
  topic: { revisionId: string; name: string };
  format: ImportFormat;
  dryRun: boolean;
  allOrNothing: boolean;
  rows: number;
  /** What the check found: rows to create and to update (written or not). */
  planned: { created: number; updated: number };
  /** Records created and updated (in a dry run: that would be). */
  created: number;
  updated: number;
  /**
   * Rows whose record is as the file has it, so nothing was written: found so when checked, or
   * created by an earlier run of the import (the service answered the row's idempotency key with
   * that record).
   */
  unchanged: number;
  rejected: number;
  /** Rows the service refused when written (`deletedSince` included). */
  failed: number;
  /**
   * Of `failed`: rows an earlier import wrote whose record was deleted since. They are not in the
   * topic; restore the record, or import with `recreateDeleted` to create it anew.
   */
  deletedSince: number;
  /** Of `created`: rows created anew (`recreateDeleted`) because their earlier record was deleted since. */
  recreated: number;
  /**
   * Records of the topic with a source id that no row of the file has: the source no longer has
   * them. Counted only when the file gives source ids; the notes name the first ones.
   */
  missing: number;
  /** Of `missing`: records deleted (`removeMissing`; in a dry run: that would be). */
  removed: number;
  /** Whether anything was written. */
  wrote: boolean;
  /**
   * Every row is in the topic as the file has it (or, in a dry run, would be), and with
   * `removeMissing` every missing record was deleted.
   */
  complete: boolean;
  /** Each column of the file and the field it fills. */
  columns: ColumnMapping[];
  /** The first rows as checked (with `previewRows`). */
  preview: RowPreview[];
  /** Problems of the file as a whole: nothing was written. */
  problems: string[];
  notes: string[];
  /** Rejected and failed rows, the first MAX_LISTED of them. */
  rowProblems: RowProblem[];
  /** Rejected or failed rows beyond those listed. */
  unlisted: number;
}

const MAX_LISTED = 1000;

/**
 * Imports a file's rows into a topic, as `rxs import` does: reads the file once to find its
 * columns and the records it refers to, checks every row against the topic's form, and only then
 * writes (all or nothing by default), each write with an idempotency key so that a retry or a
 * re-run never creates a record twice. The file is streamed at every pass: memory holds the ids of
 * the rows and the records they update, never the rows themselves.
 */
export async function importRecords(
  client: ImportClient,
  source: RowSource,
  options: ImportOptions,
): Promise<ImportReport> {
  const spool = await ImportSpool.open(options.scratchDir);
  try {
    return await importThrough(spool, client, source, options);
  } finally {
    await spool.close();
  }
}

/**
 * The import: the file's rows are read for their columns and identities (pass 1), then read again
 * for the check (pass 2: from the file where the source reads it again cheaply, else from the copy
 * pass 1 kept in the spool), which keeps the plans to write, which the writing reads (pass 3).
 */
async function importThrough(
  spool: ImportSpool,
  client: ImportClient,
  source: RowSource,
  options: ImportOptions,
): Promise<ImportReport> {
  const target = await loadTarget(client, options.revisionId, options.mapping ?? defaultExportMapping);
  source.forTopic?.({ name: target.name, reqifTypeName: target.presentation.reqifTypeName });
  await source.prepare?.();
  const columns = new ImportColumns(
    target.name,
    target.fields,
    options.renames,
    options.ignoreUnknownColumns,
    options.wording,
    options.keyColumn,
  );
  const progress = options.onProgress ?? (() => {});
  const words = options.wording ?? CLI_WORDING;
  const report: ImportReport = {
    topic: { revisionId: target.revisionId, name: target.name },
    format: source.format,
    dryRun: options.dryRun === true,
    allOrNothing: options.continueOnError !== true,
    rows: 0,
    planned: { created: 0, updated: 0 },
    created: 0,
    updated: 0,
    unchanged: 0,
    rejected: 0,
    failed: 0,
    deletedSince: 0,
    recreated: 0,
    missing: 0,
    removed: 0,
    wrote: false,
    complete: false,
    columns: [],
    preview: [],
    problems: [],
    notes: [],
    rowProblems: [],
    unlisted: 0,
  };

  const writeNow = !report.dryRun && !report.allOrNothing;
  // All or nothing: the plans to write wait in the spool until every row is checked.
  const planSpool = (name: string) =>
    report.dryRun || writeNow ? undefined : spool.file(name, encodePlan, decodePlan);
  const previewRows = options.previewRows ?? 0;
  const plannerOptions = { ...options, writing: !report.dryRun };
  /** A row's plan, its idempotency key bound to its place in the file (`ordinal`, from 1). */
  const planOf = (
    identified: IdentifiedRow,
    ordinal: number,
    records: ExistingRecords,
    duplicate: string | undefined,
    mayMatchByReadableId: boolean,
  ) => {
    const plan = planRow(
      identified,
      target,
      columns,
      records,
      duplicate,
      plannerOptions,
      mayMatchByReadableId,
    );
    if (plan.idempotencyKey !== undefined) plan.idempotencyKey = inFileOrder(ordinal, plan.idempotencyKey);
    return plan;
  };

  // 1. The file's columns and the identities of its rows (a record twice in the file is refused).
  // A count per id, kept by hash: at a million rows this is what memory holds of the file.
  const identities = new HashedCounts();
  const referenced: Referenced = { ids: 0, readableIds: 0, sourceIds: 0 };
  const factColumns = source.factColumns ?? FIXED_COLUMNS;
  const identify = (row: SourceRow) => identifyRow(row, target, columns, options, factColumns);
  const rows = rowsToCheck(source, spool);
  // A row's plan depends on the rest of the file only through the records the rows name and the
  // rows that name one record twice. Into an empty topic, while no row has an `_id` or names a
  // record twice, each row is checked as it is read, against no records: the file is read once.
  // Once a row breaks that (or the topic has records), this early check is dropped and the rows
  // are checked after the matching (3), read again. It is kept only if the matching finds none of
  // the rows' records either (a record created meanwhile). Only for rows the check would read
  // again from the file (CSV): rows read back from the spool's copy are checked as the copy has
  // them.
  let early =
    writeNow || !rows.fromFile || !(await topicIsEmpty(client, target))
      ? undefined
      : new RowChecks(planSpool('writes.jsonl'), previewRows);
  // Other work of the process gets its turns between rows.
  const readTurn = eventLoopSlices();
  for await (const chunkRows of source.rowChunks?.() ?? oneByOne(source.rows()))
    for (const row of chunkRows) {
      const kept = rows.keep(row);
      if (kept) await kept;
      report.rows++;
      for (const column of row.values.keys()) columns.use(column, row.byFormKey);
      const identified = identify(row);
      const twice = countIdentities(identified, identities, referenced);
      if (
        early &&
        (twice || columns.problems.length > 0 || (row.facts.id !== undefined && !options.newRecords))
      ) {
        await early.drop();
        early = undefined;
      }
      if (early) {
        const writing = early.add(planOf(identified, report.rows, NO_RECORDS, undefined, false));
        if (writing) await writing;
      }
      if (report.rows % 1000 === 0) progress({ phase: early ? 'checking' : 'reading', rows: report.rows });
      // Most rows need no turn: awaiting nothing would still cost a microtask a row.
      const pause = readTurn();
      if (pause) await pause;
    }
  report.columns = columns.mapping();
  for (const note of [...source.notes, ...columns.notes]) report.notes.push(note);
  for (const problem of columns.problems) report.problems.push(problem);
  if (report.rows === 0) report.notes.push('The file has no rows: nothing to import.');
  else if (options.keyColumn !== undefined && referenced.sourceIds === 0)
    report.problems.push(
      `No row has a value in the key column "${options.keyColumn}": name the column that holds each row's identity in its source. The file's columns: ${report.columns.map((c) => `"${c.column}"`).join(', ') || 'none but the fixed ones'}.`,
    );
  if (report.problems.length > 0) return report;

  // 2. The records the rows refer to, and those whose source ids the file no longer has.
  const existing = await TopicMatches.find(client, target, identities, referenced, words, {
    keepMissing: options.removeMissing === true && !report.dryRun,
    newRecords: options.newRecords === true,
    onProgress: (rows) => progress({ phase: 'matching', rows }),
  });
  report.missing = existing.missing.count;
  const duplicateOf = ({ identity, sourceId }: IdentifiedRow) => {
    for (const id of [identity, sourceId === undefined ? undefined : sourceIdentity(sourceId)]) {
      const count = id === undefined ? 0 : identities.count(id);
      if (count > 1) return `${id} is in ${count} rows`;
    }
    return undefined;
  };
  /** A row's readable id finds a record without a source id only when no other row of the file has it. */
  const mayMatchByReadableId = ({ readableId, sourceId }: IdentifiedRow) =>
    sourceId !== undefined &&
    readableId !== undefined &&
    identities.count(readableFallback(readableId)) === 1;

  /** The rows read again and checked against the records they name. */
  const checkAgain = async function* (): AsyncGenerator<RowPlan> {
    let ordinal = 0;
    // Other work of the process gets its turns between rows.
    const turn = eventLoopSlices();
    // The rows of a group without an async step each: a promise and a microtask less a row. The
    // records a group's rows name are fetched together, and held only for as long as the group
    // (TopicMatches.groups bounds them); the next group's are asked for while this one is checked.
    const groups = (async function* () {
      for await (const chunk of rows.again()) {
        const identifiedRows: IdentifiedRow[] = [];
        for (const row of chunk) {
          if (row.facts.id !== undefined && !options.newRecords) await existing.explain(row.facts.id);
          identifiedRows.push(identify(row));
        }
        yield* existing.groups(identifiedRows);
      }
    })();
    const readGroup = async () => {
      const next = await groups.next();
      if (next.done) return undefined;
      const records = existing.recordsFor(next.value);
      // Awaited when its group is checked; a failure before then is not unhandled.
      records.catch(() => undefined);
      return { identifiedRows: next.value.rows, records };
    };
    try {
      for (let group = await readGroup(); group;) {
        const following = await readGroup();
        const records = await group.records;
        for (const identified of group.identifiedRows) {
          yield planOf(
            identified,
            ++ordinal,
            records,
            duplicateOf(identified),
            mayMatchByReadableId(identified),
          );
          // Most rows need no turn: awaiting nothing would still cost a microtask a row.
          const pause = turn();
          if (pause) await pause;
        }
        group = following;
      }
    } finally {
      await groups.return(undefined);
    }
    if (ordinal !== report.rows)
      throw new ImportFileError(
        `The file gave ${report.rows} rows when it was first read and ${ordinal} when it was read again to be checked: it changed while it was imported. Import it again once no program is writing it.`,
      );
  };

  // 3. Check every row (unless the early check stands); in all-or-nothing mode, write only when no
  // row was rejected.
  // The topic's records before this run wrote: a create answered with one of them is an earlier
  // run's, answered again from its idempotency key.
  let recordsBefore: Promise<HashedCounts> | undefined;
  const writerOptions = [
    report.allOrNothing,
    options.recreateDeleted === true,
    () =>
      (recordsBefore ??= existing.listedIds
        ? Promise.resolve(existing.listedIds)
        : recentRecordIds(client, target)),
  ] as const;
  // Batches where the service takes them (RXS's POST /records/bulk), else one write a row.
  const writer: WriteTally =
    !report.dryRun && (await servesBulkWrites(client))
      ? new BulkWriter(client, options.concurrency ?? 2, ...writerOptions)
      : new RowWriter(client, options.concurrency ?? 4, ...writerOptions);
  let checks = early !== undefined && existing.matched === 0 ? early : undefined;
  if (!checks) {
    await early?.drop();
    checks = new RowChecks(planSpool('writes-checked.jsonl'), previewRows);
    for await (const plan of checkAgain()) {
      const writing = checks.add(plan);
      if (writing) await writing;
      if (checks.checked % 1000 === 0)
        progress({ phase: 'checking', rows: checks.checked, total: report.rows });
      if (writeNow && (plan.action === 'create' || plan.action === 'update')) await writer.write(plan);
    }
  }
  checks.into(report);
  const toWrite = checks.toWrite;
  if (toWrite && report.rejected === 0) {
    // 4. Write the plans the check kept.
    let written = 0;
    for await (const plan of toWrite.read()) {
      if (writer.stopped) break;
      await writer.write(plan);
      if (++written % 100 === 0) progress({ phase: 'writing', rows: written, total: toWrite.count });
    }
  }
  await writer.drain();
  for (const failure of writer.failures) {
    report.failed++;
    listProblem(report, failure.plan, 'write', failure.problems);
  }
  report.deletedSince = writer.deletedSince;
  report.recreated = writer.recreated;
  if (writer.recreated > 0) {
    const one = writer.recreated === 1;
    report.notes.push(
      `${listed(writer.recreatedWhere, MAX_NAMED, writer.recreated)}: the record${one ? '' : 's'} an earlier import created had been deleted since; the row${one ? ' is' : 's are'} in the topic as ${one ? 'a new record' : 'new records'} now (the deleted ${one ? "record's history stays its own" : "records' histories stay their own"}).`,
    );
  }
  report.created = report.dryRun ? report.planned.created : writer.created;
  report.updated = report.dryRun ? report.planned.updated : writer.updated;
  report.unchanged += writer.replayed;
  if (writer.fatal) {
    report.problems.push(
      `The import stopped after ${writer.written} writes: ${writer.fatal.message} Running it again is safe: rows written already are unchanged now, and a write that was under way is answered from its idempotency key.`,
    );
  }
  if (writer.stopped && !writer.fatal && report.allOrNothing) {
    const skipped =
      report.planned.created + report.planned.updated - writer.written - writer.replayed - report.failed;
    report.problems.push(
      `The service refused a row after ${writer.written} rows were written (it checked something the form cannot say, such as a record changed meanwhile): ${skipped} rows were not written. Fix the row and run the import again: rows written already are unchanged and skipped.`,
    );
  }
  const allWritten = report.problems.length === 0 && report.rejected === 0 && report.failed === 0;
  const removalFailed = await removeMissing(client, existing.missing, report, allWritten, options, words);
  report.wrote = writer.written > 0 || (!report.dryRun && report.removed > 0);
  report.complete = allWritten && !removalFailed;
  return report;
}

/** The problems of a row, listed while fewer than MAX_LISTED are, else counted. */
function listProblem(
  list: Pick<ImportReport, 'rowProblems' | 'unlisted'>,
  plan: RowPlan,
  phase: RowProblem['phase'],
  problems: string[],
): void {
  if (list.rowProblems.length >= MAX_LISTED) {
    list.unlisted++;
    return;
  }
  list.rowProblems.push({
    where: plan.where,
    ...(plan.readableId !== undefined && { readableId: plan.readableId }),
    ...(plan.recordId !== undefined && { recordId: plan.recordId }),
    phase,
    problems,
  });
}

/**
 * What checking the rows found, kept apart from the report until the check is known to stand (an
 * early check can be dropped), then put into it. A row's warnings are notes: the row imports, and
 * what it leaves out is said where it is.
 */
class RowChecks {
  readonly planned = { created: 0, updated: 0 };
  unchanged = 0;
  rejected = 0;
  checked = 0;
  readonly rowProblems: RowProblem[] = [];
  unlisted = 0;
  private readonly preview: RowPreview[] = [];
  private warnings = 0;
  private readonly warningNotes: string[] = [];
  private readonly dates = new DatesOfDateTimes();

  constructor(
    /** Where the plans to write are kept until every row is checked (all or nothing), if they are. */
    readonly toWrite: SpoolFile<RowPlan> | undefined,
    private readonly previewRows: number,
  ) {}

  /** Counts a checked row, and keeps its plan when it writes something (the promise: until it is kept). */
  add(plan: RowPlan): Promise<void> | undefined {
    this.checked++;
    for (const warning of plan.warnings)
      if (++this.warnings <= MAX_LISTED) this.warningNotes.push(`${plan.where}: ${warning}`);
    for (const converted of plan.datesOfDateTimes) this.dates.add(converted);
    if (this.preview.length < this.previewRows) this.preview.push(previewOf(plan));
    if (plan.action === 'rejected') {
      this.rejected++;
      listProblem(this, plan, 'check', plan.problems);
    } else if (plan.action === 'unchanged') this.unchanged++;
    else {
      if (plan.action === 'create') this.planned.created++;
      else this.planned.updated++;
      return this.toWrite?.write(plan);
    }
    return undefined;
  }

  /** Drops the check: the plans it kept are not written. */
  async drop(): Promise<void> {
    await this.toWrite?.close();
  }

  /** Into the report, which has no row's outcome yet. */
  into(report: ImportReport): void {
    report.planned = this.planned;
    report.unchanged += this.unchanged;
    report.rejected += this.rejected;
    report.rowProblems.push(...this.rowProblems);
    report.unlisted += this.unlisted;
    report.preview.push(...this.preview);
    report.notes.push(...this.warningNotes);
    if (this.warnings > MAX_LISTED)
      report.notes.push(`… and ${this.warnings - MAX_LISTED} more warnings like these on other rows.`);
    report.notes.push(...this.dates.notes());
  }
}

/** No record: what an early check matches rows against (it stands only if the matching finds none). */
const NO_RECORDS: ExistingRecords = {
  byId: () => undefined,
  byReadableId: () => undefined,
  bySourceId: () => [],
  whyNot: (id) => {
    throw new Error(`import: the early check met a row with _id ${id}`);
  },
};

/** Whether the topic has no record: then no row of a file can name one. */
async function topicIsEmpty(client: ImportClient, target: ImportTarget): Promise<boolean> {
  for await (const _record of client.records.listRecords({
    context__knowledge_unit_topic_id: target.revisionId,
    limit: 1,
  }))
    return false;
  return true;
}

/** Rows one at a time, as chunks of one row. */
async function* oneByOne(rows: AsyncIterable<SourceRow>): AsyncGenerator<Iterable<SourceRow>> {
  for await (const row of rows) yield [row];
}

/**
 * The rows of pass 1 for the check: read again from the file where the source does that cheaply
 * (`rowsAgain`), else kept in the spool as they are read (`keep`; undefined when nothing is kept).
 */
function rowsToCheck(
  source: RowSource,
  spool: ImportSpool,
): {
  keep(row: SourceRow): Promise<void> | undefined;
  again(): AsyncIterable<Iterable<SourceRow>>;
  /** The rows are read again from the file, as they were read first (not through the spool's copy). */
  fromFile: boolean;
} {
  const rowsAgain = source.rowsAgain;
  if (rowsAgain) return { keep: () => undefined, again: () => rowsAgain.call(source), fromFile: true };
  const copy = spool.file('rows.jsonl', encodeRow, decodeRow);
  return { keep: (row) => copy.write(row), again: () => copy.chunks(), fromFile: false };
}

/**
 * Counts what a row is counted under: its identity (refused twice in a file), its source id when its
 * `_id` identifies it (so the source id is refused twice too), and the readable id of a row
 * identified by its source id (a record imported before it kept source ids is found by that, if it
 * is unique). True when its identity or source id was counted for an earlier row: the file has its
 * record twice.
 */
function countIdentities(
  { identity, sourceId, readableId }: IdentifiedRow,
  identities: HashedCounts,
  referenced: Referenced,
): boolean {
  let twice = false;
  const count = (key: string, names: boolean) => {
    if (identities.add(key) === 0) referenced[kindOf(key)]++;
    else if (names) twice = true;
  };
  if (identity !== undefined) count(identity, true);
  if (sourceId === undefined) return twice;
  const source = sourceIdentity(sourceId);
  if (identity !== source) count(source, true);
  else if (readableId !== undefined) count(readableFallback(readableId), false);
  return twice;
}

const kindOf = (identity: string): keyof Referenced =>
  identity.startsWith('_id ') ? 'ids' : identity.startsWith(sourceIdentity('')) ? 'sourceIds' : 'readableIds';

/**
 * Reports the records whose source ids the file no longer has, and with `removeMissing` deletes
 * them: only once every row was written (all or nothing: not while a row is rejected or was
 * refused), never in a dry run. True when a deletion failed.
 */
async function removeMissing(
  client: ImportClient,
  missing: MissingRecords,
  report: ImportReport,
  allWritten: boolean,
  options: ImportOptions,
  words: ImportWording,
): Promise<boolean> {
  if (missing.count === 0) return false;
  const one = missing.count === 1;
  const named = listed(missing.named, missing.named.length, missing.count);
  const which = `${missing.count} record${one ? '' : 's'} of "${report.topic.name}" ${one ? 'has a source id' : 'have source ids'} the file no longer has: ${named}`;
  if (options.removeMissing !== true) {
    report.notes.push(
      `${which}. ${one ? 'It is' : 'They are'} kept; delete ${one ? 'it' : 'them'} ${words.removeMissing}.`,
    );
    return false;
  }
  if (report.dryRun) {
    report.removed = missing.count;
    report.notes.push(`${which}. ${one ? 'It' : 'They'} would be deleted.`);
    return false;
  }
  if (!allWritten) {
    report.notes.push(`${which}. ${one ? 'It is' : 'They are'} kept: not every row was written.`);
    return true;
  }
  let failed = 0;
  const failures: string[] = [];
  const pool = new Set<Promise<void>>();
  for (const { id, sourceId } of missing.toRemove) {
    while (pool.size >= (options.concurrency ?? 4)) await Promise.race(pool);
    const task = client.records
      .deleteRecord(id, {
        reason: options.reason ?? `Its source id "${sourceId}" is no longer in the imported file.`,
      })
      .then(
        () => void report.removed++,
        (error: unknown) => {
          // Deleted meanwhile: gone, as asked.
          if (error instanceof NotFoundError) return;
          if (++failed <= MAX_NAMED) failures.push(`${id} ("${sourceId}"): ${(error as Error).message}`);
        },
      )
      .finally(() => pool.delete(task));
    pool.add(task);
  }
  await Promise.all(pool);
  report.notes.push(`${which}. ${report.removed} deleted.`);
  if (failed > 0)
    report.notes.push(
      `${failed} of them could not be deleted: ${failures.join('; ')}${failed > MAX_NAMED ? ' …' : ''}`,
    );
  return failed > 0;
}

function previewOf(plan: RowPlan): RowPreview {
  const { where, action, name, readableId, recordId, problems } = plan;
  return {
    where,
    action,
    problems,
    ...(name !== undefined && { name }),
    ...(readableId !== undefined && { readableId }),
    ...(recordId !== undefined && { recordId }),
  };
}

async function loadTarget(
  client: ImportClient,
  revisionId: string,
  mapping: ExportMapping,
): Promise<ImportTarget> {
  let revision;
  try {
    revision = await client.techdoc.getTopic(revisionId);
  } catch (error) {
    if (error instanceof NotFoundError)
      throw new ImportFileError(
        `No KT revision ${revisionId} in your tenant. Find the ids with: rxs kt list`,
      );
    throw error;
  }
  const latest = revision.latest_revision_id;
  if (latest && latest !== revision._id)
    throw new ImportFileError(
      `"${revision.knowledge_topic_name}" was re-approved: its records are under revision ${latest} now. Import into --kt ${latest}.`,
    );
  const revisions = await client.techdoc.listTopics({
    knowledge_topic_history_id: revision.knowledge_topic_history_id,
  });
  const { fields } = buildFieldMap(revision.knowledge_topic_schema);
  await loadConditionsFor(revision.knowledge_topic_schema);
  const { presentation, rule } = mapping.topic(
    { historyId: revision.knowledge_topic_history_id, name: revision.knowledge_topic_name },
    fields,
  );
  return {
    revisionId: revision._id,
    historyId: revision.knowledge_topic_history_id,
    name: revision.knowledge_topic_name,
    revisionIds: new Set([revision._id, ...revisions.map((r) => r._id)]),
    schema: revision.knowledge_topic_schema,
    validateData: recordDataValidator(revision.knowledge_topic_schema),
    fields,
    fieldsByKey: new Map(fields.map((field) => [field.key, field])),
    components: componentsByKey(revision.knowledge_topic_schema?.components),
    presentation,
    rule,
  };
}

/**
 * Whether the service takes batches of writes: an empty batch is answered 200 by a service with
 * `POST /records/bulk` and 404 or 405 by one without (the interface document's service).
 */
async function servesBulkWrites(client: ImportClient): Promise<boolean> {
  try {
    // Keyed, so the client retries it through transient faults: an empty batch writes nothing.
    await client.records.bulkWrite([], { idempotencyKey: `rxs-import-probe-${randomUUID()}` });
    return true;
  } catch (error) {
    if (error instanceof RxsApiError && (error.status === 404 || error.status === 405)) return false;
    throw error;
  }
}

/**
 * How old a record an earlier run's idempotency key can answer with may be: the service keeps a
 * write's answer 24 hours; a day more allows for a clock here that differs from the service's.
 */
const REPLAY_WINDOW_MS = 48 * 60 * 60 * 1000;

/** The ids of the topic's records created recently enough to answer an earlier run's idempotency key. */
async function recentRecordIds(client: ImportClient, target: ImportTarget): Promise<HashedCounts> {
  const ids = new HashedCounts();
  for await (const record of client.records.listRecords({
    context__knowledge_unit_topic_id: target.revisionId,
    audit_info__start_date: new Date(Date.now() - REPLAY_WINDOW_MS).toISOString(),
  }))
    ids.add(record._id);
  return ids;
}
