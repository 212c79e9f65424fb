import type { RecordsClient } from '@rxs/client';
import { ConflictError, ValidationError, formatValidationItems, type RxsApiError } from '@rxs/client';
import type { ServiceRecord } from '@rxs/contract';
import type { HashedCounts } from '../export/id-table.js';
import { deletedSince, MAX_RECREATIONS, recreationKey } from './recreation.js';
import type { RowPlan } from './row-plan.js';
import { WriteTally } from './write-tally.js';
import { MAX_NAMED } from './wording.js';

/** The calls the writer makes: an `RxsClient` has them, and the web app's in-process client. */
export interface RowWriteClient {
  records: Pick<RecordsClient, 'createRecord' | 'updateRecord'>;
}

/**
 * Writes planned rows a few at a time; stops at the first refusal in all-or-nothing mode. A row
 * whose record was deleted since an earlier import wrote it is no refusal of the row: it is
 * reported (or created anew) and the other rows are written.
 */
export class RowWriter extends WriteTally {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly client: RowWriteClient,
    private readonly concurrency: number,
    private readonly stopAtFirstRefusal: boolean,
    private readonly recreateDeleted: boolean,
    /** The ids of the topic's records before this run created any. */
    private readonly recordsBefore: () => Promise<HashedCounts>,
  ) {
    super();
  }

  async write(plan: RowPlan): Promise<void> {
    if (this.stopped) return;
    while (this.running.size >= this.concurrency) await Promise.race(this.running);
    if (this.stopped) return;
    const task = this.send(plan).finally(() => this.running.delete(task));
    this.running.add(task);
  }

  async drain(): Promise<void> {
    await Promise.all(this.running);
  }

  private async send(plan: RowPlan): Promise<void> {
    const options = { idempotencyKey: plan.idempotencyKey! };
    try {
      if (plan.create) {
        const outcome = await this.create(plan);
        if (outcome === 'replayed') this.replayed++;
        if (outcome !== 'created') return;
        this.created++;
      } else {
        await this.client.records.updateRecord(plan.recordId!, plan.update!, options);
        this.updated++;
      }
      this.written++;
    } catch (error) {
      if (deletedSince(error)) this.deletedSinceWritten(plan, error);
      else if (error instanceof ValidationError) this.refused(plan, formatValidationItems(error.items));
      else if (error instanceof ConflictError)
        this.refused(plan, [
          `record ${plan.recordId} changed while the file was imported (or its topic is read-only now): run the import again to compare it anew.`,
        ]);
      else {
        this.fatal ??= error as Error;
        this.stopped = true;
        this.failures.push({ plan, problems: [(error as Error).message] });
      }
    }
  }

  /**
   * Creates the row's record: `replayed` when the service answered with a record that was there
   * before this run (an earlier run created it under the row's key), `reported` when an earlier
   * import created it under the row's key and someone deleted it since. With `recreateDeleted`,
   * it is created anew under the next derived key whose record is not deleted.
   */
  private async create(plan: RowPlan): Promise<'created' | 'replayed' | 'reported'> {
    const before = await this.recordsBefore();
    const existedBefore = (record: ServiceRecord) => before.count(record._id) > 0;
    try {
      const record = await this.client.records.createRecord(plan.create!, {
        idempotencyKey: plan.idempotencyKey!,
      });
      return existedBefore(record) ? 'replayed' : 'created';
    } catch (error) {
      if (!deletedSince(error) || !this.recreateDeleted) throw error;
    }
    for (let generation = 1; generation <= MAX_RECREATIONS; generation++) {
      try {
        const record = await this.client.records.createRecord(plan.create!, {
          idempotencyKey: recreationKey(plan.idempotencyKey!, generation),
        });
        if (existedBefore(record)) return 'replayed';
        if (++this.recreated <= MAX_NAMED) this.recreatedWhere.push(plan.where);
        return 'created';
      } catch (error) {
        if (!deletedSince(error)) throw error;
      }
    }
    this.deletedSince++;
    this.failures.push({
      plan,
      problems: [
        `its record was created and deleted ${MAX_RECREATIONS + 1} times by imports of this row within 24 hours: it is not created again. Restore one of the records, or wait until the idempotency keys expire (24 hours).`,
      ],
    });
    return 'reported';
  }

  /** A row an earlier import wrote, whose record was deleted since: reported, not a refusal of the row. */
  private deletedSinceWritten(plan: RowPlan, error: RxsApiError): void {
    this.deletedSince++;
    const server = typeof error.detail === 'string' ? ` Server: ${error.detail}` : '';
    this.failures.push({
      plan,
      problems: [
        plan.create
          ? `the record an earlier import created for this row was deleted since, so it was not created again: restore the record to bring it back with its history.${server}`
          : `record ${plan.recordId} was deleted while the file was imported: the change was not written. Restore the record and import the file again.${server}`,
      ],
    });
  }

  private refused(plan: RowPlan, problems: string[]): void {
    this.failures.push({ plan, problems });
    if (this.stopAtFirstRefusal) this.stopped = true;
  }
}
