import type { Writable } from 'node:stream';
import type { ExportedRecord, ExportPart, ExportWriter } from '../model.js';
import { closeOutput } from './output.js';
import { Spool } from './spool.js';
import { ExportTracker } from './tracker.js';
import { recordEndpoints } from './traces.js';

/** A record as it waits on disk, with the position of its topic in `tracker.topics`. */
export interface SpooledRecord {
  topic: number;
  record: ExportedRecord;
}

/**
 * The common shape of formats that need the whole export before their first byte (all columns,
 * all link targets): records wait in a spool on disk, and `produce` writes the file on close.
 * A close without the `end` part (a failed export) only cleans up and ends `out`.
 */
export abstract class SpooledWriter implements ExportWriter {
  abstract readonly extension: string;
  protected readonly tracker = new ExportTracker();
  protected readonly spool: Spool<SpooledRecord>;

  constructor(
    protected readonly out: Writable,
    tempDir?: string,
  ) {
    this.spool = new Spool(tempDir);
  }

  async write(part: ExportPart): Promise<void> {
    this.tracker.observe(part);
    this.observe(part);
    if (part.kind === 'record')
      await this.spool.append({ topic: this.tracker.current.index, record: part.record });
  }

  close(): Promise<void> {
    return closeOutput(
      this.out,
      this.tracker.ended,
      () => this.produce(),
      () => this.spool.dispose(),
    );
  }

  /** Writes the whole output; the export is complete and every record is in the spool. */
  protected abstract produce(): Promise<void>;

  /** Sees each part after the tracker, for what a format learns while records pass. */
  protected observe(_part: ExportPart): void {}

  /** Ids of exported records that are trace ends: a pass over the spool, memory bound by traces. */
  protected async exportedTraceEnds(): Promise<Set<string>> {
    const endpoints = recordEndpoints(this.tracker.traces);
    const exported = new Set<string>();
    if (endpoints.size === 0) return exported;
    for await (const { record } of this.spool.replay()) if (endpoints.has(record.id)) exported.add(record.id);
    return exported;
  }
}
