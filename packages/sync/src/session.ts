import { copyFile, link, mkdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type {
  ExportedRecord,
  ExportedTopic,
  ExportedTrace,
  ExportHeader,
  ExportPart,
  RowObserver,
} from '@rxs/exchange/export';
import { Generation, removeStrayGenerations } from './generation.js';
import { jsonEqual } from '@rxs/contract/plain';
import { compareIds, jsonHash } from './json-values.js';
import { JsonLinesSink } from './jsonl.js';
import { goneLine, LayeredLineCursor, type PreviousLines } from './layered-cursor.js';
import { SortedLineCursor } from './line-cursor.js';
import { acquireSyncLock, type SyncLock } from './lock.js';
import { diffRecord } from './record-diff.js';
import type { Rendering } from './rendering.js';
import { RowIndexing } from './row-indexing.js';
import { valueRenamer, type ValueRenamer } from './renames.js';
import { DEFAULT_DETAIL_LIMIT, type ChangeReport, type TopicChanges } from './report.js';
import { ReportBuilder } from './report-builder.js';
import { diffSchema } from './schema-diff.js';
import { SortedCursor } from './sorted-cursor.js';
import {
  readSyncState,
  stateFilePath,
  SYNC_STATE_FORMAT,
  SYNC_STATE_VERSION,
  SYNC_STATE_VERSION_WITHOUT_OVERLAYS,
  SyncStateError,
  toStoredTrace,
  type StoredRecord,
  type StoredTopic,
  type StoredTrace,
  type SyncState,
} from './state.js';
import { SyncError, type SyncErrorCode } from './errors.js';

export interface SyncSessionOptions {
  /** The most records (and traces) of each kind the report lists; counts are always complete. */
  detailLimit?: number;
  /** Clock for `committedAt`, for reproducible states in tests. */
  now?: () => Date;
}

/** The export stream does not have the shape sync relies on. */
export class SyncStreamError extends SyncError {
  override name = 'SyncStreamError';
  readonly code: SyncErrorCode = 'RXS_ERR_SYNC_STREAM';
}

/** Records of a topic did not arrive in strictly ascending `_id` order. */
export class SyncOrderError extends SyncStreamError {
  override name = 'SyncOrderError';
  override readonly code = 'RXS_ERR_SYNC_ORDER';
  constructor(
    readonly topic: string,
    readonly id: string,
    readonly previousId: string,
  ) {
    super(
      id === previousId
        ? `Record ${id} of "${topic}" arrived twice. Sync compares lists sorted by _id and needs each record once.`
        : `Records of "${topic}" arrived out of _id order: ${id} came after ${previousId}. ` +
            `Sync compares lists sorted by _id and needs the records in _id order, as the records service lists them.`,
    );
  }
}

/** A record said to be kept or gone (`takePrevious`) is not the previous snapshot's next one. */
export class PreviousRecordMissingError extends SyncStreamError {
  override name = 'PreviousRecordMissingError';
  override readonly code = 'RXS_ERR_SYNC_PREVIOUS_RECORD_MISSING';
  constructor(
    readonly topic: string,
    readonly id: string,
  ) {
    super(
      `Record ${id} of "${topic}" is not in the previous snapshot as kept; it cannot be copied from there.`,
    );
  }
}

/** A part after the sync ended: refused, the session stays as it was. */
class LateStreamError extends SyncStreamError {
  override name = 'LateStreamError';
  override readonly code = 'RXS_ERR_SYNC_LATE_STREAM';
}

type Phase = 'start' | 'topics' | 'ended' | 'committed' | 'aborted';

/** The topic whose records are streaming: its new file, the previous file and the report entry. */
interface OpenTopic {
  topic: ExportedTopic;
  previous: StoredTopic | undefined;
  file: string;
  /** The new records file; its lines are gathered per batch and written together. */
  sink: JsonLinesSink;
  /** The previous snapshot's records of the topic, as lines. */
  cursor: PreviousLines;
  renamer: ValueRenamer | undefined;
  entry: TopicChanges;
  lastId: string | undefined;
  count: number;
  /** The row index kept beside the new records file (`keepRowIndex`). */
  rows: string | undefined;
  /** Set by `layer`: the new snapshot keeps the previous base and writes only an overlay. */
  layered: Layered | undefined;
}

/** A topic whose new snapshot is the previous base (linked, not copied) with a new overlay. */
interface Layered {
  cursor: LayeredLineCursor;
  /** The base's size: the end of the lines a row index counts in. */
  baseSize: number;
  /** The overlay of the previous snapshot (undefined: it had none). */
  previousOverlay: string | undefined;
  /** This poll's changed records' lines and gone lines, in id order, merged into the overlay at the end. */
  fresh: { id: string; line: Buffer }[];
}

/**
 * A spliced poll keeps the previous base while the overlay stays under this share of it; beyond,
 * the poll walks the rows and writes one records file again (and the next ones layer on it).
 */
const OVERLAY_SHARE = 1 / 8;

/**
 * One run of `rxs sync` on a state folder. Feed it the export's parts in order (`write`); it writes
 * the new snapshot into a temporary generation and compares it with the previous one as the parts
 * stream, by a merge-join on record id (both sides sorted), so memory stays flat in the number of
 * records. After the `end` part, `report` holds the changes. Then either `commit()` (after the
 * caller has written its output) switches the folder to the new snapshot, or `abort()` drops it;
 * both release the lock. A failing `write` aborts by itself and rethrows.
 */
export class SyncSession {
  private phase: Phase = 'start';
  private header: ExportHeader | undefined;
  private open: OpenTopic | undefined;
  private readonly previousTopics = new Map<string, StoredTopic>();
  private readonly seen = new Set<string>();
  private readonly topics: StoredTopic[] = [];
  private traces: ExportedTrace[] | undefined;
  private readonly builder: ReportBuilder;
  private next: Omit<SyncState, 'generation'> | undefined;
  private result: ChangeReport | undefined;
  private readonly now: () => Date;
  /** Set by `indexRows`: the row index of a run that downloads everything. */
  private rowIndexing: RowIndexing | undefined;

  private constructor(
    readonly dir: string,
    /** The snapshot compared against; undefined on the first sync. */
    readonly previous: SyncState | undefined,
    private readonly lock: SyncLock,
    private readonly generation: Generation,
    options: SyncSessionOptions,
  ) {
    this.builder = new ReportBuilder(options.detailLimit ?? DEFAULT_DETAIL_LIMIT);
    this.now = options.now ?? (() => new Date());
    for (const topic of previous?.topics ?? []) this.previousTopics.set(topic.historyId, topic);
  }

  /**
   * Opens a sync on `dir` (created if missing): takes the lock, reads the previous snapshot,
   * removes leftovers of interrupted syncs and prepares a temporary generation.
   */
  static async open(dir: string, options: SyncSessionOptions = {}): Promise<SyncSession> {
    const root = resolve(dir);
    await mkdir(root, { recursive: true });
    const lock = await acquireSyncLock(root);
    try {
      const previous = await readSyncState(root);
      if (previous) {
        const folder = join(root, previous.generation);
        const found = await stat(folder).catch(() => undefined);
        if (!found?.isDirectory())
          throw new SyncStateError(
            `${join(root, 'state.json')} names ${previous.generation}, which is missing; the sync state is damaged.`,
          );
        for (const topic of previous.topics)
          for (const file of [topic.file, topic.overlay]) {
            if (file === undefined) continue;
            if (!(await stat(join(folder, file)).catch(() => undefined))?.isFile())
              throw new SyncStateError(
                `${join(root, 'state.json')} names ${join(previous.generation, file)}, which is missing; ` +
                  `the sync state is damaged. Start over with an empty state folder (the next sync reports everything as added).`,
              );
          }
      }
      await removeStrayGenerations(root, previous?.generation);
      const generation = await Generation.create(root);
      return new SyncSession(root, previous, lock, generation, options);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** The sync before this one on the folder died holding the lock: its process id (see `SyncLock`). */
  get staleHolder(): number | undefined {
    return this.lock.staleHolder;
  }

  /** The change report, once the `end` part arrived. */
  get report(): ChangeReport | undefined {
    return this.result;
  }

  write(part: ExportPart): Promise<void> {
    return this.writeParts([part]);
  }

  /**
   * Several parts in order, as `write` of each would take them (an export writer's `writeParts`):
   * the records of a batch are compared without an await each, and their lines of the new
   * snapshot are written in large pieces (the rest when the topic ends).
   */
  async writeParts(parts: readonly ExportPart[]): Promise<void> {
    try {
      for (const part of parts) {
        if (this.phase === 'ended' || this.phase === 'committed' || this.phase === 'aborted')
          throw new LateStreamError(`Export part "${part.kind}" arrived after the sync ${this.phase}.`);
        const indexing = this.rowIndexing;
        if (part.kind === 'record') {
          const open = this.open;
          if (this.phase !== 'topics' || !open) this.expect('record', true);
          const start = open!.sink.offset;
          const line = this.record(open!, part.record);
          while (!this.merge(open!, part.record, line)) await open!.cursor.fill();
          if (open!.sink.full) await open!.sink.flush();
          const indexed = indexing?.line(part.record, start);
          if (indexed) await indexed;
        } else if (indexing) {
          // The end of the topic's records file, before the topic closes.
          const linesEnd = part.kind === 'topic-end' && this.open ? this.open.sink.offset : 0;
          await this.handle(part);
          await indexing.after(part, () => this.rowIndexPath(), linesEnd);
        } else {
          await this.handle(part);
        }
      }
    } catch (error) {
      // A part after the end (or after an abort) is refused without touching the session.
      if (!(error instanceof LateStreamError)) await this.abort().catch(() => undefined);
      throw error;
    }
  }

  /**
   * For a spliced poll (splice.ts), which walks the previous output alongside: the previous
   * snapshot's next record of the open topic must be `id`. `kept`: it did not change, so its line
   * is copied as it is, neither mapped nor serialised again; else it is gone. Synchronous: false
   * when the previous snapshot must be read on or the new one written first (`readPrevious`, then
   * call again). Throws when the previous snapshot holds another record next, or its records under
   * other field names; unlike `write`, a failure does not abort the session: the caller does.
   */
  takePrevious(id: string, kept: boolean): boolean {
    if (this.phase !== 'topics' || !this.open) this.expect('record', true);
    const open = this.open!;
    const { cursor, sink } = open;
    if (sink.full || !cursor.ready) return false;
    if (cursor.peekId() !== id || open.renamer) throw new PreviousRecordMissingError(open.topic.name, id);
    if (!kept) {
      this.removePrevious(open);
      return true;
    }
    if (open.layered)
      throw new Error('SyncSession: a layered topic keeps unchanged records by copyPrevious.');
    if (open.lastId !== undefined && compareIds(open.lastId, id) >= 0)
      throw new SyncOrderError(open.topic.name, id, open.lastId);
    sink.pushBytes(cursor.line());
    cursor.take();
    open.lastId = id;
    open.count++;
    this.builder.recordUnchanged(open.entry);
    return true;
  }

  /**
   * Where the open topic's next record line will start in the new records file; in a layered
   * topic, where the previous base goes on (the row index keeps base positions).
   */
  recordOffset(): number {
    if (this.phase !== 'topics' || !this.open) this.expect('record', true);
    const open = this.open!;
    return open.layered ? open.layered.cursor.offset : open.sink.offset;
  }

  /** The end of the open topic's records file (in a layered topic, of the base), for a row index. */
  recordsEnd(): number {
    if (this.phase !== 'topics' || !this.open) this.expect('record', true);
    const open = this.open!;
    return open.layered ? open.layered.baseSize : open.sink.offset;
  }

  /** The path of the open topic's row index in the previous snapshot, if it kept one. */
  previousRowIndex(): string | undefined {
    const previous = this.open?.previous;
    if (!previous?.rows || !this.previous) return undefined;
    return stateFilePath(this.dir, this.previous, previous.rows);
  }

  /** The size of the open topic's records file (its base) in the previous snapshot (undefined: none). */
  async previousRecordsSize(): Promise<number | undefined> {
    const previous = this.open?.previous;
    if (!previous || !this.previous) return undefined;
    return (await stat(stateFilePath(this.dir, this.previous, previous.file))).size;
  }

  /**
   * For a spliced poll that found its records in a row index, before its first record: when the
   * previous snapshot's overlay is small enough, the new snapshot links the previous base instead
   * of copying it, and writes the overlay merged with this poll's changes; the unchanged records
   * are then passed over by `copyPrevious`, not read. False (nothing changed) when the overlay
   * has grown too large: the caller walks the rows and writes one file.
   */
  async layer(): Promise<boolean> {
    if (this.phase !== 'topics' || !this.open) this.expect('record', true);
    const open = this.open!;
    if (!open.previous || !this.previous || open.renamer || open.count > 0 || open.layered)
      throw new Error('SyncSession: layer() applies only to a previous topic before its first record.');
    const base = stateFilePath(this.dir, this.previous, open.previous.file);
    const overlay = open.previous.overlay && stateFilePath(this.dir, this.previous, open.previous.overlay);
    const baseSize = (await stat(base)).size;
    const overlaySize = overlay ? (await stat(overlay)).size : 0;
    if (overlaySize > baseSize * OVERLAY_SHARE) return false;
    // The sink opened for a records file is not used: the base takes its name.
    await open.sink.destroy();
    const file = this.generation.path(open.file);
    await rm(file, { force: true });
    // A hard link shares the base's bytes; where links are refused, the kernel copies the file.
    await link(base, file).catch(() => copyFile(base, file));
    await open.cursor.close();
    const cursor = new LayeredLineCursor(new SortedLineCursor(base), new SortedLineCursor(overlay));
    open.cursor = cursor;
    open.layered = { cursor, baseSize, previousOverlay: overlay, fresh: [] };
    return true;
  }

  /**
   * For a run that downloads everything into an output of `rendering`'s format (one topic, CSV or
   * JSON lines): writes the topic's row index, so that the next poll finds its records there
   * instead of walking the output (row-indexing.ts). Call before the first part; hand the returned
   * observer to the export writer (it tells each row's length), then `finishRowIndex` once the
   * output is written.
   */
  indexRows(rendering: Rendering): RowObserver {
    if (this.phase !== 'start') throw new Error('SyncSession: indexRows() comes before the first part.');
    this.rowIndexing = new RowIndexing(rendering);
    return this.rowIndexing.row;
  }

  /**
   * After the export ended and its output was written, `outputBytes` long: the new snapshot names
   * the row index of `indexRows` when every record's row was told and the output ends where they
   * say; else the index is removed (the next poll walks the rows). Returns whether it was kept.
   */
  async finishRowIndex(outputBytes: number): Promise<boolean> {
    if (this.phase !== 'ended' || !this.next)
      throw new Error('SyncSession: finishRowIndex() comes after the end.');
    const indexing = this.rowIndexing;
    const path = indexing?.path;
    if (!indexing || path === undefined || !(await indexing.finish(outputBytes))) return false;
    const topic = this.topics.find((stored) => this.generation.path(rowIndexFile(stored.file)) === path);
    if (topic) topic.rows = rowIndexFile(topic.file);
    return topic !== undefined;
  }

  /** Where the open topic's row index goes in the new snapshot (named there by `keepRowIndex`). */
  rowIndexPath(): string {
    if (!this.open) this.expect('record', true);
    return this.generation.path(rowIndexFile(this.open!.file));
  }

  /** The row index written at `rowIndexPath` is complete: the new snapshot names it. */
  keepRowIndex(): void {
    if (!this.open) this.expect('record', true);
    this.open!.rows = rowIndexFile(this.open!.file);
  }

  /**
   * For a spliced poll that found its records in a row index (splice.ts), in a layered topic
   * (`layer`): the previous base's lines up to byte `to`, `count` records that did not change (the
   * last of them `lastId`, which may be in the overlay), stay where they are: they are neither read
   * nor compared, and the previous side goes on at `to`. Like `takePrevious`, a failure does not
   * abort the session: the caller does.
   */
  async copyPrevious(to: number, count: number, lastId: string): Promise<void> {
    if (this.phase !== 'topics' || !this.open) this.expect('record', true);
    const open = this.open!;
    if (!open.layered) throw new PreviousRecordMissingError(open.topic.name, lastId);
    if (open.lastId !== undefined && compareIds(open.lastId, lastId) >= 0)
      throw new SyncOrderError(open.topic.name, lastId, open.lastId);
    await open.layered.cursor.skipTo(to, lastId);
    open.count += count;
    open.lastId = lastId;
    this.builder.recordUnchanged(open.entry, count);
  }

  /** The id of the previous snapshot's next record of the open topic (undefined: none left). */
  async previousId(): Promise<string | undefined> {
    const cursor = this.open?.cursor;
    if (!cursor) return undefined;
    if (!cursor.ready) await cursor.fill();
    return cursor.peekId();
  }

  /** What `takePrevious` waits for: the previous snapshot read on, the new one's lines written. */
  async readPrevious(): Promise<void> {
    const open = this.open;
    if (!open) return;
    if (!open.cursor.ready) await open.cursor.fill();
    if (open.sink.full) await open.sink.flush();
  }

  /** For use as an export writer: a close before the `end` part means the export failed. */
  async close(): Promise<void> {
    if (this.phase !== 'ended' && this.phase !== 'committed') await this.abort();
  }

  /** Switches the folder to the new snapshot atomically and releases the lock. */
  async commit(): Promise<SyncState> {
    if (this.phase !== 'ended' || !this.next)
      throw new Error(
        this.phase === 'committed'
          ? 'This sync was already committed.'
          : this.phase === 'aborted'
            ? 'This sync was aborted; nothing to commit.'
            : 'The export did not end yet; a sync commits only a complete export.',
      );
    this.phase = 'committed';
    try {
      return await this.generation.commit({ ...this.next, committedAt: this.now().toISOString() });
    } catch (error) {
      // Either state.json still names the old generation, or it names the new, complete one.
      await rm(this.generation.tempDir, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    } finally {
      await this.lock.release();
    }
  }

  /** Drops the new snapshot; the previous one stays as it was. Releases the lock. */
  async abort(): Promise<void> {
    if (this.phase === 'committed' || this.phase === 'aborted') return;
    this.phase = 'aborted';
    try {
      const open = this.open;
      this.open = undefined;
      await this.rowIndexing?.abandon().catch(() => undefined);
      await open?.cursor.close().catch(() => undefined);
      await open?.sink.destroy().catch(() => undefined);
      await this.generation.discard();
    } finally {
      await this.lock.release();
    }
  }

  private async handle(part: ExportPart): Promise<void> {
    switch (part.kind) {
      case 'header':
        if (this.phase !== 'start') throw new SyncStreamError('The export header arrived twice.');
        this.header = part.header;
        this.phase = 'topics';
        if (!this.previous)
          this.builder.note(
            `Initial snapshot: ${this.dir} holds no previous state, so everything is reported as added.`,
          );
        return;
      case 'topic':
        return this.openTopic(part.topic);
      case 'record':
        // Taken by writeParts directly.
        throw new Error('unreachable');
      case 'topic-end':
        return this.closeTopic(part.topic, part.recordCount);
      case 'traces':
        this.expect('traces', false);
        (this.traces ??= []).push(...part.traces);
        return;
      case 'end':
        return this.end(part.warnings);
    }
  }

  private expect(kind: string, inTopic: boolean): void {
    if (this.phase !== 'topics')
      throw new SyncStreamError(`Export part "${kind}" arrived before the header.`);
    if (inTopic && !this.open) throw new SyncStreamError(`Export part "${kind}" arrived outside a topic.`);
    if (!inTopic && this.open)
      throw new SyncStreamError(
        `Export part "${kind}" arrived inside the topic "${this.open.topic.name}" (no topic-end before it).`,
      );
    if (kind === 'topic' && this.traces)
      throw new SyncStreamError('A topic arrived after the traces; the traces come after all topics.');
  }

  private async openTopic(topic: ExportedTopic): Promise<void> {
    this.expect('topic', false);
    if (this.seen.has(topic.historyId))
      throw new SyncStreamError(
        `The topic "${topic.name}" (history id ${topic.historyId}) is in the export twice. ` +
          `Sync keeps one revision per topic: ask for each topic once.`,
      );
    this.seen.add(topic.historyId);
    const previous = this.previousTopics.get(topic.historyId);
    const file = `topic-${this.topics.length + 1}.jsonl`;
    const sink = new JsonLinesSink(this.generation.path(file));
    const cursor = this.previousLines(previous);
    this.open = {
      topic,
      previous,
      file,
      sink,
      cursor,
      renamer: previous ? valueRenamer(previous.fields, topic.fields) : undefined,
      entry: this.builder.openTopic(topic.historyId, topic.name, previous ? 'present' : 'added'),
      lastId: undefined,
      count: 0,
      rows: undefined,
      layered: undefined,
    };
  }

  /** The previous snapshot's records of a topic: its file, through its overlay when it has one. */
  private previousLines(stored: StoredTopic | undefined): PreviousLines {
    if (!stored || !this.previous) return new SortedLineCursor(undefined);
    const base = new SortedLineCursor(stateFilePath(this.dir, this.previous, stored.file));
    if (stored.overlay === undefined) return base;
    return new LayeredLineCursor(
      base,
      new SortedLineCursor(stateFilePath(this.dir, this.previous, stored.overlay)),
    );
  }

  /** The previous side's next record is gone: reported, and hidden by the overlay of a layered topic. */
  private removePrevious(open: OpenTopic): void {
    const old = open.cursor.parse<StoredRecord>();
    open.cursor.take();
    this.builder.recordRemoved(open.entry, { id: old.id, name: old.name });
    open.layered?.fresh.push({ id: old.id, line: Buffer.from(goneLine(old.id)) });
  }

  /**
   * Writes a layered topic's overlay: the previous overlay's lines merged by id with this poll's
   * (which replace those of the same id). Returns its file name in the generation.
   */
  private async writeOverlay(open: OpenTopic, layered: Layered): Promise<string> {
    const file = overlayFile(open.file);
    const sink = new JsonLinesSink(this.generation.path(file));
    open.sink = sink;
    const previous = new SortedLineCursor(layered.previousOverlay);
    try {
      for (const { id, line } of layered.fresh) {
        for (;;) {
          if (!previous.ready) await previous.fill();
          const old = previous.peekId();
          if (old === undefined || compareIds(old, id) > 0) break;
          if (old !== id) sink.pushBytes(previous.line());
          previous.take();
          if (sink.full) await sink.flush();
        }
        sink.pushBytes(line);
        if (sink.full) await sink.flush();
      }
      for (;;) {
        if (!previous.ready) await previous.fill();
        if (previous.peekId() === undefined) break;
        sink.pushBytes(previous.line());
        previous.take();
        if (sink.full) await sink.flush();
      }
    } finally {
      await previous.close();
    }
    layered.fresh = [];
    return file;
  }

  /**
   * Checks a record of the open topic and adds its line to the new snapshot (in a layered topic,
   * to the overlay's changes); returns the line, as text and where its bytes are.
   */
  private record(open: OpenTopic, record: ExportedRecord): NewLine {
    const id = record.id;
    if (typeof id !== 'string' || id === '')
      throw new SyncStreamError(`A record of "${open.topic.name}" has no id.`);
    if (open.lastId !== undefined && compareIds(open.lastId, id) >= 0)
      throw new SyncOrderError(open.topic.name, id, open.lastId);
    open.lastId = id;
    open.count++;
    const text = JSON.stringify({ id, name: record.name, version: record.version, values: record.values });
    if (open.layered) {
      const bytes = Buffer.from(text);
      open.layered.fresh.push({ id, line: bytes });
      return { text, bytes, from: 0, to: bytes.length };
    }
    const from = open.sink.push(text);
    return { text, bytes: open.sink.pending, from, to: open.sink.pendingEnd - 1 };
  }

  /**
   * Merge-join of one record (and its new `line`) with the previous snapshot's lines, both sorted
   * by id: previous records with smaller ids are gone, an equal id is compared. Synchronous while
   * the previous side has lines in memory; false when it needs `cursor.fill()` first (then call
   * again: the records found gone so far stay counted).
   */
  private merge(open: OpenTopic, record: ExportedRecord, line: NewLine): boolean {
    const cursor = open.cursor;
    // Most records did not change: their new line is the next previous line, byte for byte.
    if (!open.renamer && cursor.takeIfSame(line.bytes, line.from, line.to, record.id)) {
      this.builder.recordUnchanged(open.entry);
      return true;
    }
    for (;;) {
      if (!cursor.ready) return false;
      const oldId = cursor.peekId();
      if (oldId === undefined || compareIds(oldId, record.id) > 0) {
        this.builder.recordAdded(open.entry, { id: record.id, name: record.name });
        return true;
      }
      if (compareIds(oldId, record.id) < 0) {
        this.removePrevious(open);
        continue;
      }
      // The same record: unchanged when stored the same way, byte for byte (both sides are
      // JSON.stringify of the same shape). Otherwise both are compared as stored, after the same
      // JSON round trip, which also ignores differences diffRecord does not count (key order).
      if (!open.renamer && cursor.sameBytes(line.bytes, line.from, line.to)) {
        cursor.take();
        this.builder.recordUnchanged(open.entry);
        return true;
      }
      const old = cursor.parse<StoredRecord>();
      cursor.take();
      const before = open.renamer ? { ...old, values: open.renamer(old.values) } : old;
      const change = diffRecord(before, JSON.parse(line.text) as StoredRecord);
      if (change) this.builder.recordChanged(open.entry, change);
      else this.builder.recordUnchanged(open.entry);
      return true;
    }
  }

  private async closeTopic(topic: ExportedTopic, recordCount: number): Promise<void> {
    this.expect('topic-end', true);
    const open = this.open!;
    if (topic.historyId !== open.topic.historyId)
      throw new SyncStreamError(
        `The end of topic "${topic.name}" arrived while the records of "${open.topic.name}" were streaming.`,
      );
    if (recordCount !== open.count)
      throw new SyncStreamError(
        `The export says "${topic.name}" has ${recordCount} records, but ${open.count} arrived.`,
      );
    for (;;) {
      if (!open.cursor.ready) await open.cursor.fill();
      if (open.cursor.peekId() === undefined) break;
      this.removePrevious(open);
    }
    await open.cursor.close();
    const overlay = open.layered ? await this.writeOverlay(open, open.layered) : undefined;
    await open.sink.close();

    const stored: StoredTopic = {
      historyId: topic.historyId,
      revisionId: topic.revisionId,
      name: topic.name,
      version: topic.version,
      status: topic.status,
      fields: topic.fields,
      schemaHash: jsonHash(topic.schema),
      recordCount,
      file: open.file,
      ...(overlay === undefined ? {} : { overlay }),
      ...(open.rows === undefined ? {} : { rows: open.rows }),
    };
    this.builder.closeTopic(open.entry, {
      before: open.previous,
      after: stored,
      schema: diffSchema(open.previous, stored),
    });
    this.topics.push(stored);
    this.open = undefined;
  }

  private async end(warnings: string[]): Promise<void> {
    this.expect('end', false);
    const header = this.header!;
    const previous = this.previous;

    // Topics of the previous snapshot that this export no longer has: their records are gone.
    for (const old of previous?.topics ?? []) {
      if (this.seen.has(old.historyId)) continue;
      const entry = this.builder.openTopic(old.historyId, old.name, 'removed');
      const cursor = this.previousLines(old);
      try {
        for (;;) {
          if (!cursor.ready) await cursor.fill();
          if (cursor.peekId() === undefined) break;
          const record = cursor.parse<StoredRecord>();
          cursor.take();
          this.builder.recordRemoved(entry, { id: record.id, name: record.name });
        }
      } finally {
        await cursor.close();
      }
      this.builder.closeTopic(entry, { before: old, schema: diffSchema(old, undefined) });
    }

    const traces = await this.compareTraces();
    this.next = {
      format: SYNC_STATE_FORMAT,
      // A state without overlays is written as version 1, so that an rxs without overlays still reads it.
      version: this.topics.some((topic) => topic.overlay !== undefined)
        ? SYNC_STATE_VERSION
        : SYNC_STATE_VERSION_WITHOUT_OVERLAYS,
      exportedAt: header.exportedAt,
      committedAt: '',
      servers: header.servers,
      revisionIds: header.revisionIds,
      topics: this.topics,
      traces,
    };
    this.result = this.builder.finish({
      exportedAt: header.exportedAt,
      previousExportedAt: previous?.exportedAt ?? null,
      servers: header.servers,
      warnings,
    });
    this.phase = 'ended';
  }

  /** Writes the traces sorted by id and merge-joins them with the previous ones. */
  private async compareTraces(): Promise<SyncState['traces']> {
    const previous = this.previous;
    if (!this.traces) {
      if (previous?.traces)
        this.builder.note(
          'This export has no traces: traces were not compared, and the new snapshot keeps none.',
        );
      return null;
    }
    this.builder.traces.compared = true;
    if (previous && !previous.traces)
      this.builder.note('The previous snapshot had no traces, so every trace is reported as added.');
    const traces = [...this.traces].sort((a, b) => compareIds(a.id, b.id));
    const file = 'traces.jsonl';
    const sink = new JsonLinesSink(this.generation.path(file));
    const cursor = new SortedCursor<StoredTrace>(
      previous?.traces ? stateFilePath(this.dir, previous, previous.traces.file) : undefined,
      (trace) => trace[0],
    );
    let before = 0;
    const removed = (old: StoredTrace) => {
      before++;
      this.builder.traceRemoved(fromStoredTrace(old));
    };
    try {
      let lastId: string | undefined;
      for (const trace of traces) {
        if (trace.id === lastId) continue; // listed twice (reached from both ends)
        lastId = trace.id;
        const stored = toStoredTrace(trace);
        await sink.append(stored);
        let old = await cursor.peek();
        while (old !== undefined && compareIds(old[0], trace.id) < 0) {
          await cursor.take();
          removed(old);
          old = await cursor.peek();
        }
        if (old === undefined || old[0] !== trace.id) {
          this.builder.traceAdded(fromStoredTrace(stored));
          continue;
        }
        await cursor.take();
        before++;
        if (!jsonEqual(old, stored))
          this.builder.traceChanged({ before: fromStoredTrace(old), after: fromStoredTrace(stored) });
      }
      for (let old = await cursor.take(); old !== undefined; old = await cursor.take()) removed(old);
      await sink.close();
    } finally {
      await cursor.close();
      await sink.destroy();
    }
    this.builder.traceCounts(before, sink.count);
    return { file, count: sink.count };
  }
}

/** The overlay beside a records file: `topic-1.jsonl` → `topic-1.overlay.jsonl`. */
function overlayFile(recordsFile: string): string {
  return recordsFile.replace(/\.jsonl$/, '') + '.overlay.jsonl';
}

/** A new record's line: its text and where its bytes are. */
interface NewLine {
  text: string;
  bytes: Buffer;
  from: number;
  to: number;
}

/** The row index beside a records file: `topic-1.jsonl` → `topic-1.rows`. */
function rowIndexFile(recordsFile: string): string {
  return recordsFile.replace(/\.jsonl$/, '') + '.rows';
}

function fromStoredTrace([id, source, target, relationTypes, suspect]: StoredTrace): ExportedTrace {
  return { id, source, target, relationTypes, suspect: suspect === true };
}

/** Opens a sync on the state folder `dir`; see `SyncSession`. */
export function createSyncSession(dir: string, options: SyncSessionOptions = {}): Promise<SyncSession> {
  return SyncSession.open(dir, options);
}
