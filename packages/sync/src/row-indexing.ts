import type { ExportedRecord, ExportPart, RowObserver } from '@rxs/exchange/export';
import type { Rendering } from './rendering.js';
import { readableIdHash, RowIndexWriter } from './row-index.js';

/**
 * The row index of a run that downloads everything (`SyncSession.indexRows`), so that the first
 * poll after it finds its records in an index instead of walking the output row by row. A spliced
 * poll writes the index as it copies rows (splice.ts); in a full run the export writer writes the
 * rows, and tells each one's length (`row`, a `RowObserver`), while the session tells where each
 * record's snapshot line starts (`line`). The two run side by side, so each side's entries wait
 * here for the other's; paired, they make the index entries. The parts around the records are
 * measured by the format's rendering (splice.ts writes them with it). At the end the index is kept
 * only when the output ends exactly where it says (`finish`).
 */
export class RowIndexing {
  private writer: RowIndexWriter | undefined;
  /** Set once the run cannot have an index. */
  private stopped = false;
  /** The open topic's fields: a record with another key makes the CSV writer rearrange its rows. */
  private fields: ReadonlySet<string> = new Set();
  private topics = 0;
  /** Bytes of the parts after the records (JSON lines: the topic's end, the end). */
  private tail = 0;
  /** Where the next row starts. */
  private rowAt = 0;
  private linesEnd: number | undefined;
  /** Records whose line was told and whose row was not yet, and the reverse. */
  private readonly lines: { record: ExportedRecord; line: number }[] = [];
  private readonly rows: { id: string; bytes: number }[] = [];
  private linesFrom = 0;
  private rowsFrom = 0;

  constructor(private readonly rendering: Rendering) {}

  /** The index file, once a topic started it. */
  get path(): string | undefined {
    return this.writer?.path;
  }

  /**
   * After the session took a part other than a record; a topic starts the index at `path()`, a
   * topic's end says where its records file ended (`linesEnd`).
   */
  async after(part: ExportPart, path: () => string, linesEnd: number): Promise<void> {
    const bytes = Buffer.byteLength(this.rendering.part(part));
    if (part.kind === 'header') this.rowAt += bytes;
    else if (part.kind === 'topic') {
      // One topic: a row index describes the output of one topic.
      if (++this.topics > 1) return this.abandon();
      this.rowAt += bytes;
      this.fields = new Set(part.topic.fields.map((field) => field.name));
      this.writer = await RowIndexWriter.create(path());
    } else {
      if (part.kind === 'topic-end') this.linesEnd = linesEnd;
      this.tail += bytes;
    }
  }

  /** The session wrote record `record`'s snapshot line at `line`. */
  line(record: ExportedRecord, line: number): Promise<void> | undefined {
    if (this.stopped) return undefined;
    if (!this.writer) return this.abandon();
    for (const key in record.values) if (!this.fields.has(key)) return this.abandon();
    this.lines.push({ record, line });
    this.pair();
    // Pairing may have found the records out of step and stopped.
    return this.writer?.full ? this.writer.flush() : undefined;
  }

  /** The writer wrote `record`'s row, `bytes` long (a `RowObserver`). */
  readonly row: RowObserver = (record, bytes) => {
    // Rows may come before the session took the topic: they wait for their lines.
    if (this.stopped) return;
    this.rows.push({ id: record.id, bytes });
    this.pair();
  };

  /**
   * After the output was written, `outputBytes` long: finishes the index when every record's row
   * and line were told and the output ends where they say; else removes it. Returns whether kept.
   */
  async finish(outputBytes: number): Promise<boolean> {
    const writer = this.writer;
    const complete =
      writer?.open === true &&
      this.linesFrom === this.lines.length &&
      this.rowsFrom === this.rows.length &&
      this.linesEnd !== undefined &&
      this.rowAt + this.tail === outputBytes;
    if (!complete) {
      await this.abandon();
      return false;
    }
    this.writer = undefined;
    return writer.finish({ linesEnd: this.linesEnd!, rowsEnd: this.rowAt });
  }

  /** Stops without an index (the run failed, or cannot have one). */
  async abandon(): Promise<void> {
    this.stopped = true;
    const writer = this.writer;
    this.writer = undefined;
    await writer?.abandon();
  }

  /** Makes an entry of each record whose line and row are both known (both sides go in `_id` order). */
  private pair(): void {
    const writer = this.writer;
    if (!writer) return;
    while (this.linesFrom < this.lines.length && this.rowsFrom < this.rows.length) {
      const { record, line } = this.lines[this.linesFrom++]!;
      const { id, bytes } = this.rows[this.rowsFrom++]!;
      if (id !== record.id) {
        // Not the same records in the same order: no index (`finish` removes it).
        void this.abandon().catch(() => undefined);
        return;
      }
      writer.add(id, readableIdHash(this.rendering.writtenId(record.readableId)), line, this.rowAt);
      this.rowAt += bytes;
    }
    // Emptied: the arrays start again (they hold a batch at most).
    if (this.linesFrom === this.lines.length) this.lines.length = this.linesFrom = 0;
    if (this.rowsFrom === this.rows.length) this.rows.length = this.rowsFrom = 0;
  }
}
