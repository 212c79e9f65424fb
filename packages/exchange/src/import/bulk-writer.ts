import { createHash } from 'node:crypto';
import type { RecordsClient } from '@rxs/client';
import { formatValidationItems, PayloadTooLargeError, RxsApiError, ValidationError } from '@rxs/client';
import type { BulkRecordItem, BulkWriteResult, ValidationErrorItem } from '@rxs/contract';
import { MAX_BULK_RECORDS } from '@rxs/contract/plain';
import type { HashedCounts } from '../export/id-table.js';
import { deletedSince, MAX_RECREATIONS, recreationKey } from './recreation.js';
import type { RowPlan } from './row-plan.js';
import { WriteTally } from './write-tally.js';
import { MAX_NAMED } from './wording.js';

/**
 * Writes planned rows in batches through `POST /records/bulk`: each batch is one transaction of
 * the service, all or nothing, and every row in it carries its own idempotency key (the key its
 * single write would carry), so a retry, or a re-run of the import however its batches fall, never
 * writes a row twice. A batch is sent under a key derived from its rows' keys: a re-run that sends
 * the same rows again is answered from it without any writing.
 */

/** The calls the writer makes: an `RxsClient` has them, and the web app's in-process client. */
export interface BulkWriteClient {
  records: Pick<RecordsClient, 'bulkWrite'>;
}

/** How large a batch may grow: its rows, and the bytes of their JSON. */
export interface BatchLimits {
  items: number;
  bytes: number;
}

/**
 * 1,000 rows or 4 MiB, whichever comes first: the service's most items a request and under its
 * default request body limit of 5 MiB. A commit costs the service the same whatever the rows it
 * holds, so fewer and larger batches write faster; 1,000 rows of a typical form are a transaction
 * of a few tens of milliseconds, short enough not to hold other writers long.
 */
export const DEFAULT_BATCH_LIMITS: BatchLimits = { items: MAX_BULK_RECORDS, bytes: 4 * 1024 * 1024 };

/**
 * Attempts of one batch: each after the service refused some of its rows (left out, or created
 * anew under their next key). Past this the service's answers are not converging: the import stops.
 */
const MAX_ATTEMPTS = MAX_RECREATIONS + 10;

/**
 * The key of a batch: its rows' keys in order (and, after the service answered that the batch's
 * records were deleted since, how often). The same rows always make the same key.
 */
function batchKey(rows: readonly Row[], deletedRounds: number): string {
  const hash = createHash('sha256');
  for (const row of rows) hash.update(`${row.item.idempotency_key}\n`);
  if (deletedRounds > 0) hash.update(`deleted since ${deletedRounds}`);
  return `rxs-import-batch-${hash.digest('hex').slice(0, 40)}`;
}

/** A planned row as the batch sends it. */
interface Row {
  plan: RowPlan;
  item: BulkRecordItem & { idempotency_key: string };
  bytes: number;
  /** Times it was created anew (0: under its own key). */
  generation: number;
}

function rowOf(plan: RowPlan): Row {
  const key = plan.idempotencyKey!;
  const item = plan.create
    ? { ...plan.create, idempotency_key: key }
    : { _id: plan.recordId!, ...plan.update!, idempotency_key: key };
  return { plan, item, bytes: Buffer.byteLength(JSON.stringify(item)) + 1, generation: 0 };
}

/** The service's problems with each row of a refused batch, by the row's place in it. */
function problemsByItem(items: readonly ValidationErrorItem[]): Map<number, ValidationErrorItem[]> {
  const byIndex = new Map<number, ValidationErrorItem[]>();
  for (const item of items) {
    const [body, records, index, ...rest] = item.loc;
    if (body !== 'body' || records !== 'records' || typeof index !== 'number') continue;
    // As the row's single write would have them: `body.data.priority`.
    const problems = byIndex.get(index) ?? [];
    problems.push({ ...item, loc: ['body', ...rest] });
    byIndex.set(index, problems);
  }
  return byIndex;
}

/**
 * Writes planned rows in batches, a few batches in flight, with the public surface of the
 * importer's one-row-at-a-time writer: `write`, `drain` and the same counters. In all-or-nothing
 * mode it stops at the first refused row; rows of that batch and later ones are not written.
 */
export class BulkWriter extends WriteTally {
  /** Batches sent, attempts again included (for tests and progress). */
  requests = 0;
  private readonly running = new Set<Promise<void>>();
  private batch: Row[] = [];
  private batchBytes = 0;

  constructor(
    private readonly client: BulkWriteClient,
    /** Batches in flight at once. */
    private readonly inFlight: number,
    private readonly stopAtFirstRefusal: boolean,
    private readonly recreateDeleted: boolean,
    /** The ids of the topic's records before this run created any. */
    private readonly recordsBefore: () => Promise<HashedCounts>,
    private readonly limits: BatchLimits = DEFAULT_BATCH_LIMITS,
  ) {
    super();
  }

  /** Adds a planned create or update to the batch, sending the batch once it is full. */
  async write(plan: RowPlan): Promise<void> {
    if (this.stopped) return;
    const row = rowOf(plan);
    const full = this.batch.length >= this.limits.items || this.batchBytes + row.bytes > this.limits.bytes;
    if (this.batch.length > 0 && full) await this.dispatch();
    this.batch.push(row);
    this.batchBytes += row.bytes;
  }

  /** Sends what is left and waits for every batch. */
  async drain(): Promise<void> {
    if (this.batch.length > 0) await this.dispatch();
    await Promise.all(this.running);
  }

  private async dispatch(): Promise<void> {
    const rows = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    while (this.running.size >= this.inFlight) await Promise.race(this.running);
    if (this.stopped) return;
    const task = this.send(rows).finally(() => this.running.delete(task));
    this.running.add(task);
  }

  /**
   * Sends a batch until the service wrote it or nothing of it is left to write: rows it refused
   * are reported and left out (or, all or nothing, the import stops); rows whose record an earlier
   * import wrote and someone deleted since are reported, or created anew under their next key.
   */
  private async send(rows: Row[]): Promise<void> {
    try {
      const before = rows.some((row) => row.plan.create) ? await this.recordsBefore() : undefined;
      let pending = rows;
      let deletedRounds = 0;
      for (let attempt = 1; pending.length > 0; attempt++) {
        if (this.stopped && attempt > 1) return;
        if (attempt > MAX_ATTEMPTS)
          throw new Error(
            `The service refused rows ${pending[0]!.plan.where} to ${pending[pending.length - 1]!.plan.where} again after ${MAX_ATTEMPTS} attempts.`,
          );
        this.requests++;
        try {
          const answer = await this.client.records.bulkWrite(
            pending.map((row) => row.item),
            { idempotencyKey: batchKey(pending, deletedRounds) },
          );
          this.settle(pending, answer.records, before);
          return;
        } catch (error) {
          // Records the batch wrote were deleted since: the rows' own keys say which.
          if (deletedSince(error)) deletedRounds++;
          else if (error instanceof ValidationError && problemsByItem(error.items).size > 0)
            pending = this.refused(pending, problemsByItem(error.items));
          else if (error instanceof PayloadTooLargeError && pending.length > 1) {
            // The service takes smaller requests than the batch: halves, each as a batch.
            const half = Math.ceil(pending.length / 2);
            await this.send(pending.slice(0, half));
            await this.send(pending.slice(half));
            return;
          } else if (error instanceof PayloadTooLargeError) {
            this.refuse(pending[0]!.plan, [error.message]);
            return;
          } else throw error;
        }
      }
    } catch (error) {
      this.fatal ??= error as Error;
      this.stopped = true;
      const where =
        rows.length > 1
          ? ` (rows ${rows[0]!.plan.where} to ${rows[rows.length - 1]!.plan.where} were sent together)`
          : '';
      this.failures.push({ plan: rows[0]!.plan, problems: [`${(error as Error).message}${where}`] });
    }
  }

  /** Counts a written batch's rows by the service's answer, one result per row in order. */
  private settle(
    rows: readonly Row[],
    results: readonly BulkWriteResult[],
    before: HashedCounts | undefined,
  ): void {
    if (results.length !== rows.length)
      throw new Error(`The service answered ${results.length} results to a batch of ${rows.length} rows.`);
    for (const [index, row] of rows.entries()) {
      const result = results[index]!;
      if (row.plan.create) {
        // A record that was there before this run was created by an earlier one under the row's key.
        if (before?.count(result._id)) {
          this.replayed++;
          continue;
        }
        this.created++;
        if (row.generation > 0 && ++this.recreated <= MAX_NAMED) this.recreatedWhere.push(row.plan.where);
      } else this.updated++;
      this.written++;
    }
  }

  /**
   * The rows of a refused batch to send again: those the service did not name, and those whose
   * record was deleted since an earlier import wrote it that are created anew. Every other named
   * row is reported as refused.
   */
  private refused(rows: readonly Row[], problems: ReadonlyMap<number, ValidationErrorItem[]>): Row[] {
    const again: Row[] = [];
    for (const [index, row] of rows.entries()) {
      const found = problems.get(index);
      if (!found) again.push(row);
      else if (found.every((problem) => problem.type === 'deleted_since')) {
        if (this.createdAnew(row)) again.push(row);
        else this.deletedSinceWritten(row, found);
      } else this.refuse(row.plan, this.problemsOf(row, found));
    }
    return this.stopped ? [] : again;
  }

  /** With `recreateDeleted`, the row under its next derived key; false when it is not created anew. */
  private createdAnew(row: Row): boolean {
    if (!row.plan.create || !this.recreateDeleted || row.generation >= MAX_RECREATIONS) return false;
    row.generation++;
    row.item.idempotency_key = recreationKey(row.plan.idempotencyKey!, row.generation);
    return true;
  }

  /** A row an earlier import wrote, whose record was deleted since: reported, not a refusal of the row. */
  private deletedSinceWritten(row: Row, problems: readonly ValidationErrorItem[]): void {
    this.deletedSince++;
    const { plan } = row;
    const server = ` Server: ${problems.map((problem) => problem.msg).join(' ')}`;
    this.failures.push({
      plan,
      problems: [
        row.generation >= MAX_RECREATIONS
          ? `its record was created and deleted ${MAX_RECREATIONS + 1} times by imports of this row within 24 hours: it is not created again. Restore one of the records, or wait until the idempotency keys expire (24 hours).`
          : plan.create
            ? `the record an earlier import created for this row was deleted since, so it was not created again: restore the record to bring it back with its history.${server}`
            : `record ${plan.recordId} was deleted while the file was imported: the change was not written. Restore the record and import the file again.${server}`,
      ],
    });
  }

  /** What the report says of a refused row, as for its single write. */
  private problemsOf(row: Row, problems: readonly ValidationErrorItem[]): string[] {
    const { plan } = row;
    if (problems.some((problem) => problem.type === 'conflict'))
      return [
        `record ${plan.recordId} changed while the file was imported (or its topic is read-only now): run the import again to compare it anew.`,
      ];
    if (plan.update && problems.some((problem) => problem.type === 'not_found'))
      return [
        `record ${plan.recordId} was deleted while the file was imported: the change was not written. Restore the record and import the file again.`,
      ];
    return formatValidationItems(problems);
  }

  private refuse(plan: RowPlan, problems: string[]): void {
    this.failures.push({ plan, problems });
    if (this.stopAtFirstRefusal) this.stopped = true;
  }
}
