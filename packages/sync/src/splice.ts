import { open, type FileHandle } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { DuplicateIdentifierError, isMadeUpId, readableIdOf, ReadableIds } from '@rxs/exchange/export';
import type { ExportedRecord, ExportFormat, ExportPart } from '@rxs/exchange/export';
import {
  defaultExportMapping,
  emptyTopicWarning,
  exportedTopic,
  headerPart,
  prepareTopic,
  type ExportOptions,
  type ExportSource,
  type TopicRef,
} from '@rxs/exchange/export';
import { RecordMapper } from '@rxs/exchange/export';
import type { FeedCacheWriter, FeedPlan } from './feed-cache.js';
import { CHUNK_BYTES, ForwardRanges } from './chunks.js';
import { jsonEqual } from '@rxs/contract/plain';
import { compareIds } from './json-values.js';
import { OutputRows } from './output-rows.js';
import { PieceWriter } from './pieces.js';
import { renderingOf, type Rendering, type SpliceFormat } from './rendering.js';
import { HashSet, readableIdHash, RowIndexReader, RowIndexWriter, type ReadableIdHash } from './row-index.js';
import { PreviousRecordMissingError, type SyncSession } from './session.js';
import { SyncError } from './errors.js';

/**
 * A spliced poll: after a feed plan (feed-cache.ts) said which records changed, the new output and
 * snapshot are made from the previous ones record by record. The previous output is walked row by
 * row (in `_id` order, each row's id read from its first bytes) beside the previous snapshot: the
 * row and snapshot line of each record the plan does not name are copied as bytes; only changed
 * records are mapped, rendered, serialised and compared. The kept listing is not read either: it
 * is linked into the new cache with the plan's changes beside it (`FeedCacheWriter.keepListing`).
 * The result is the same, byte for byte, as a full run's: the parts around the records (header,
 * topic, topic-end, end) are made by the export procedure's own steps and the rows by the writers'
 * own functions.
 *
 * It applies only where a record's row depends on nothing but the record and the topic's columns:
 * CSV and JSON lines of one topic, without traces, when the topic's columns are those of the
 * previous snapshot and no record carries a key the form does not declare. Anything else, found
 * before or while splicing (also an output or snapshot that do not match), refuses
 * (`SpliceRefusedError`): the caller drops what was written and runs the export as before.
 */
export type { SpliceFormat } from './rendering.js';

/** The poll cannot be spliced; nothing it wrote may be kept, and a full run gives the result. */
export class SpliceRefusedError extends SyncError {
  override name = 'SpliceRefusedError';
  readonly code = 'RXS_ERR_SPLICE_REFUSED';
}

/** Whether an export of these options can be spliced at all (the rest is checked while splicing). */
export function spliceable(
  format: ExportFormat,
  options: { revisionIds: readonly string[]; traces: boolean; asOf?: string },
): format is SpliceFormat {
  // One topic: a changed record's readable id is checked against the rows walked, its topic's.
  if (options.traces || options.asOf !== undefined || options.revisionIds.length !== 1) return false;
  return format === 'csv' || format === 'jsonl';
}

export interface SpliceInput {
  source: ExportSource;
  plan: FeedPlan;
  /** The new feed cache; each topic's listing is kept in it as the plan's changes. */
  cache: FeedCacheWriter;
  /** The new snapshot, compared with the previous one (which it holds) as the parts arrive. */
  session: SyncSession;
  format: SpliceFormat;
  /** The output of the previous snapshot, untouched since (the probe checked its size and time). */
  previousOutput: string;
  /** The new output. */
  out: Writable;
  options: Pick<
    ExportOptions,
    'revisionIds' | 'mapping' | 'labels' | 'maxColumns' | 'onWarning' | 'onProgress' | 'now'
  >;
}

/** What walking a topic's records needs, whether row by row or by ranges of a row index. */
export interface RecordWalk {
  /** The changed (or gone) records' ids, in `_id` order, and the mapped ones (not the gone). */
  ids: readonly string[];
  mapped: ReadonlyMap<string, ExportedRecord>;
  /** The readable ids of changed records that are not made up, as written. */
  derived: ReadonlySet<string>;
  /** Writes the changed record `id` (nothing when gone): its row, snapshot line and index entry. */
  changed(id: string): Promise<void>;
  /** Adds an index entry (`writtenId` undefined: the topic gets no index). */
  indexed(id: string, writtenId: string | undefined, line: number, row: number): Promise<void>;
  /**
   * Adds an entry read from the previous index (its readable id by hash) at a new line and row;
   * refuses the splice when a changed record has that readable id.
   */
  reindexed(id: string, hash: ReadableIdHash, line: number, row: number): Promise<void>;
  /**
   * Adds entries of the previous index, their rows moved by `rowShift` (`entriesWritten` after a
   * batch); returns the id of one whose readable id is a changed record's (then adds nothing).
   */
  copyEntries(entries: Buffer, count: number, idBytes: number, rowShift: number): string | undefined;
  entriesWritten(): Promise<void>;
  /** Counts records written; `progress` reports the count. */
  counted(records?: number): void;
  progress(): void;
  session: SyncSession;
  pieces: PieceWriter;
  rendering: Rendering;
  previousRows: OutputRows;
  readRows(): Promise<void>;
  /** Writes the gathered pieces when there are enough. */
  emptied(): Promise<void> | false;
}

/**
 * The records without an index: the previous output is walked row by row beside the previous
 * snapshot, each row's id read from its first bytes; an unchanged record's row and line are
 * copied, a changed one written anew. Writes the new index as it goes.
 */
async function walkRows(walk: RecordWalk): Promise<void> {
  const { ids, mapped, derived, session, pieces, rendering, previousRows } = walk;
  let next = 0;
  let count = 0;
  for (;;) {
    // Awaited only at chunk boundaries: most records cost no await at all.
    if (!previousRows.ready) await walk.readRows();
    const row = previousRows.row();
    const id = row === undefined ? undefined : rendering.recordIdOf(row);
    while (next < ids.length && (id === undefined || compareIds(ids[next]!, id) < 0)) {
      await checkedBefore(session, ids[next]!, mapped);
      await walk.changed(ids[next++]!);
    }
    if (id === undefined) break;
    if (next < ids.length && ids[next] === id) {
      // Gone or changed: its row is left out (a changed one is written anew and compared).
      if (!mapped.has(id)) while (!session.takePrevious(id, false)) await session.readPrevious();
      previousRows.take();
      await checkedBefore(session, id, mapped);
      await walk.changed(ids[next++]!);
    } else {
      const written = rendering.readableIdIn(row!, id);
      if (derived.size > 0 && (written === undefined || derived.has(written)))
        throw new SpliceRefusedError(`Record ${id} shares its readable id with a changed record.`);
      await walk.indexed(id, written, session.recordOffset(), pieces.offset);
      pieces.pushBytes(row!);
      previousRows.take();
      while (!session.takePrevious(id, true)) await session.readPrevious();
      walk.counted();
      if (++count % 10_000 === 0) walk.progress();
    }
    await walk.emptied();
  }
  await checkedNoneLeft(session);
}

/**
 * The records by the previous row index, the snapshot written as one records file again (its
 * overlay grew too large to layer another over it): the unchanged records' rows are copied as
 * byte ranges, as `copyRanges` does, while their snapshot lines are merged one by one from the
 * previous base and overlay into the new file, each index entry taking its line's new place. No
 * row is read.
 */
async function compactByIndex(walk: RecordWalk, index: RowIndexReader): Promise<void> {
  const { ids, mapped, session, pieces } = walk;
  await byRowIndex(walk, index, async (copyRows) => {
    /** The previous output's rows [from, to), not yet copied, and where in the new output they go. */
    let from = 0;
    let to = 0;
    let at = 0;
    const copyPending = async () => {
      if (to > from) await copyRows(from, to);
      from = to = 0;
    };
    const changed = async (id: string) => {
      await copyPending();
      await checkedBefore(session, id, mapped);
      await walk.changed(id);
      await walk.emptied();
    };
    let next = 0;
    let count = 0;
    while (await index.fill()) {
      const id = index.nextId();
      while (next < ids.length && compareIds(ids[next]!, id) < 0) await changed(ids[next++]!);
      if (next < ids.length && ids[next] === id) {
        // Gone or changed: its row and line are left out (a changed one is written anew).
        if (!mapped.has(id)) while (!session.takePrevious(id, false)) await session.readPrevious();
        index.skip();
        await changed(ids[next++]!);
        continue;
      }
      const hash = index.nextHash();
      const row = index.nextRow();
      index.skip();
      const rowEnd = index.ready || (await index.fill()) ? index.nextRow() : index.header.rowsEnd;
      if (row !== to || to - from >= 4 * CHUNK_BYTES) {
        await copyPending();
        from = to = row;
        at = pieces.offset;
      }
      await walk.reindexed(id, hash, session.recordOffset(), at + (row - from));
      to = rowEnd;
      while (!session.takePrevious(id, true)) await session.readPrevious();
      walk.counted();
      if (++count % 10_000 === 0) walk.progress();
    }
    await copyPending();
    while (next < ids.length) await changed(ids[next++]!);
    await checkedNoneLeft(session);
  });
}

/**
 * The previous row index of the open topic, when the records can be found in it instead of
 * walking the rows: it exists and reads, its records file is as long as it says, and every changed
 * id has its width.
 */
async function usableRowIndex(
  session: SyncSession,
  ids: readonly string[],
): Promise<RowIndexReader | undefined> {
  const path = session.previousRowIndex();
  if (path === undefined) return undefined;
  let reader: RowIndexReader;
  try {
    reader = await RowIndexReader.open(path);
  } catch {
    return undefined;
  }
  const { idBytes, linesEnd } = reader.header;
  if (
    ids.some((id) => id.length !== idBytes || Buffer.byteLength(id) !== idBytes) ||
    (await session.previousRecordsSize()) !== linesEnd
  ) {
    await reader.close();
    return undefined;
  }
  return reader;
}

/**
 * The records by ranges of the previous row index: between two changed records, the unchanged
 * ones' rows are copied as a byte range and their index entries moved by how far the rows moved;
 * no row is read. Their snapshot lines stay where they are: the new snapshot keeps the previous
 * base and an overlay of the changes (`SyncSession.layer`). Only the changed records are written
 * anew.
 */
async function copyRanges(walk: RecordWalk, index: RowIndexReader): Promise<void> {
  const { ids, mapped, session, pieces } = walk;
  await byRowIndex(walk, index, async (copyRows) => {
    let next = 0;
    for (;;) {
      const target = next < ids.length ? Buffer.from(ids[next]!, 'latin1') : undefined;
      // The unchanged records before the target, a chunk of the index at a time.
      for (;;) {
        if (!(await index.fill())) break;
        const fromRow = index.nextRow();
        const records = index.countBefore(target);
        // Lines are positions in the base, which the new snapshot keeps as it is: only rows move.
        const rowShift = pieces.offset - fromRow;
        const shared = walk.copyEntries(index.entriesBytes(records), records, index.idBytes, rowShift);
        if (shared !== undefined)
          throw new SpliceRefusedError(`Record ${shared} shares its readable id with a changed record.`);
        index.skip(records);
        if (records === 0) break;
        const lastId = index.lastId(); // before the next chunk replaces this one
        const more = index.ready || (await index.fill());
        const toLine = more ? index.nextLine() : index.header.linesEnd;
        const toRow = more ? index.nextRow() : index.header.rowsEnd;
        await copyRows(fromRow, toRow);
        await session.copyPrevious(toLine, records, lastId);
        await walk.entriesWritten();
        walk.counted(records);
        walk.progress();
        if (more && target !== undefined && index.compareNext(target) >= 0) break;
      }
      if (target === undefined) break;
      const id = ids[next++]!;
      if ((await index.fill()) && index.compareNext(target) === 0) {
        // Its previous row and line are left out; a gone record is reported so.
        if (!mapped.has(id)) while (!session.takePrevious(id, false)) await session.readPrevious();
        index.skip();
      }
      await walk.changed(id);
      await walk.emptied();
    }
  });
}

/**
 * Runs `copy` over the previous output by its row index: opens the output, checks that its first
 * record starts where the index says (the parts before the records were read as rows), gives
 * `copy` a copier of the output's byte ranges into the new one, then moves the rows past the
 * records. Closes the output and the index however it ends.
 */
async function byRowIndex(
  walk: RecordWalk,
  index: RowIndexReader,
  copy: (copyRows: (from: number, to: number) => Promise<void>) => Promise<void>,
): Promise<void> {
  const { pieces, previousRows } = walk;
  let output: FileHandle | undefined;
  try {
    output = await open(previousRows.path, 'r');
    const ranges = new ForwardRanges(output);
    const first = (await index.fill()) ? index.nextRow() : index.header.rowsEnd;
    if (previousRows.offset !== first)
      throw new SpliceRefusedError('The previous output does not start its records where its index says.');
    /** Copies the previous output's bytes [from, to) into the new one. */
    await copy((from, to) =>
      ranges.copy(from, to, (bytes) => {
        pieces.pushBytes(bytes);
        return walk.emptied();
      }),
    );
    previousRows.seek(index.header.rowsEnd);
  } finally {
    await output?.close();
    await index.close();
  }
}

/** The previous snapshot, read to its end, must hold no record the previous output lacked. */
async function checkedNoneLeft(session: SyncSession): Promise<void> {
  const left = await session.previousId();
  if (left !== undefined)
    throw new SpliceRefusedError(`The previous output lacks record ${left} of the snapshot.`);
}

/** The previous snapshot must hold nothing before changed record `id` that the previous output did not. */
async function checkedBefore(
  session: SyncSession,
  id: string,
  mapped: ReadonlyMap<string, ExportedRecord>,
): Promise<void> {
  if (!mapped.has(id)) return;
  const previousId = await session.previousId();
  if (previousId !== undefined && compareIds(previousId, id) < 0)
    throw new SpliceRefusedError(`The previous output lacks record ${previousId} of the snapshot.`);
}

/** What a spliced poll wrote: the parts other than records, and how it found the records. */
export interface SpliceResult {
  parts: ExportPart[];
  /**
   * `index`: by ranges of the previous poll's row index, the snapshot layered; `compacted`: by the
   * index, the snapshot's records file written whole again; `rows`: by walking the previous output.
   */
  found: 'index' | 'compacted' | 'rows';
}

/**
 * Writes the spliced export into `out`, the session and the cache. Returns the parts other than
 * records (for the caller's summary) and how the records were found. Throws `SpliceRefusedError` when it cannot stand for a full
 * run; the session and the cache are then to be aborted and `out` dropped.
 */
export async function spliceExport(input: SpliceInput): Promise<SpliceResult> {
  const { source, plan, cache, session, options } = input;
  const pieces = new PieceWriter(input.out);
  const rendering = renderingOf(input.format);
  const previousRows = new OutputRows(input.previousOutput, rendering.syntax);
  const parts: ExportPart[] = [];
  let found: SpliceResult['found'] = 'index';
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(message);

  const readRows = async (): Promise<void> => {
    try {
      await previousRows.fill();
    } catch (error) {
      throw new SpliceRefusedError(`The previous output cannot be read: ${(error as Error).message}`);
    }
  };
  const nextRow = async (): Promise<Buffer | undefined> => {
    if (!previousRows.ready) await readRows();
    return previousRows.row();
  };
  const emit = async (part: ExportPart) => {
    parts.push(part);
    const text = rendering.part(part);
    const expected = rendering.expects(part, text);
    if (expected) {
      const row = await nextRow();
      if (!row || !expected(row))
        throw new SpliceRefusedError(`The previous output does not have the ${part.kind} where expected.`);
      previousRows.take();
    }
    pieces.push(text);
    await session.write(part);
  };

  try {
    await emit(
      headerPart(
        source,
        { revisionIds: options.revisionIds, traces: false },
        options.now ?? (() => new Date()),
      ),
    );
    const exportedTopics: TopicRef[] = [];
    const readableIds = new ReadableIds();
    for (const revisionId of options.revisionIds) {
      const planned = plan.topics.find((topic) => topic.revisionId === revisionId);
      if (!planned) throw new SpliceRefusedError(`No changes were planned for revision ${revisionId}.`);
      const step = await prepareTopic(source, revisionId, { ...options, followLatest: true }, warn);
      const { revision, map, presentation, rule, approval, topicRef } = step;
      // A re-approval, another form or columns met only in record data: a full run decides.
      const previous = session.previous?.topics.find((t) => t.historyId === topicRef.historyId);
      if (
        revision._id !== revisionId ||
        !previous ||
        previous.revisionId !== revisionId ||
        !jsonEqual(previous.fields, JSON.parse(JSON.stringify(map.fields)))
      )
        throw new SpliceRefusedError(
          `The columns of "${topicRef.name}" are not those of the previous snapshot.`,
        );
      exportedTopics.push(topicRef);
      const topic = exportedTopic(revision, map, presentation, approval);
      await emit({ kind: 'topic', topic });

      // The changes, mapped first: their readable ids are checked against every other record's.
      const mapper = new RecordMapper(map, { labels: options.labels });
      // The changes since the snapshot: older ones kept in the cache are in the previous output.
      const ids = [...planned.fresh.keys()].sort(compareIds);
      const mapped = new Map<string, ExportedRecord>();
      const derived = new Set<string>();
      for (const id of ids) {
        const record = planned.fresh.get(id);
        if (!record) continue;
        const { record: exported, newFields } = mapper.map(record);
        if (newFields.length > 0)
          throw new SpliceRefusedError(
            `Record ${id} carries a key the form of "${topicRef.name}" does not declare.`,
          );
        try {
          exported.readableId = readableIds.assign(readableIdOf(exported, rule, presentation), id);
        } catch (error) {
          if (error instanceof DuplicateIdentifierError) throw new SpliceRefusedError(error.message);
          throw error;
        }
        if (!isMadeUpId(exported.readableId, id)) derived.add(rendering.writtenId(exported.readableId));
        mapped.set(id, exported);
      }

      let count = 0;
      const progress = () => options.onProgress?.({ topic: topicRef.name, revisionId, records: count });
      // The new row index, written as the rows are (unusable ids leave the topic without one).
      const index = await RowIndexWriter.create(session.rowIndexPath());
      const refused = new HashSet([...derived].map(readableIdHash));
      const indexed = async (id: string, writtenId: string | undefined, line: number, row: number) => {
        if (writtenId === undefined) return index.abandon();
        index.add(id, readableIdHash(writtenId), line, row);
        if (index.full) await index.flush();
      };
      const reindexed = async (id: string, hash: ReadableIdHash, line: number, row: number) => {
        if (refused.has(hash[0], hash[1]))
          throw new SpliceRefusedError(`Record ${id} shares its readable id with a changed record.`);
        index.add(id, hash, line, row);
        if (index.full) await index.flush();
      };
      const changed = async (id: string) => {
        const record = mapped.get(id);
        if (!record) return; // gone
        await indexed(id, rendering.writtenId(record.readableId), session.recordOffset(), pieces.offset);
        pieces.push(rendering.row(record));
        await session.writeParts([{ kind: 'record', record }]);
        count++;
      };
      const walk: RecordWalk = {
        ...{ ids, mapped, derived, changed, indexed, reindexed, progress, session, pieces, rendering },
        previousRows,
        counted: (records = 1) => (count += records),
        readRows,
        emptied: () => pieces.full && pieces.flush(),
        copyEntries: (entries, count, idBytes, rowShift) =>
          index.copy(entries, count, idBytes, rowShift, refused),
        entriesWritten: async () => {
          if (index.full) await index.flush();
        },
      };
      try {
        const previousIndex = await usableRowIndex(session, ids);
        if (previousIndex && (await session.layer())) {
          await copyRanges(walk, previousIndex);
        } else if (previousIndex) {
          // An overlay grown too large: one records file is written again.
          found = 'compacted';
          await compactByIndex(walk, previousIndex);
        } else {
          found = 'rows';
          await walkRows(walk);
        }
        const ends = { linesEnd: session.recordsEnd(), rowsEnd: pieces.offset };
        if (index.open && (await index.finish(ends))) session.keepRowIndex();
      } finally {
        await index.abandon();
      }
      await cache.keepListing(revisionId);
      progress();
      if (count === 0) warn(emptyTopicWarning(revision));
      await emit({
        kind: 'topic-end',
        topic: exportedTopic(revision, map, presentation, approval),
        recordCount: count,
      });
    }
    for (const warning of (options.mapping ?? defaultExportMapping).warningsFor?.(exportedTopics) ?? [])
      warn(warning);
    await emit({ kind: 'end', warnings });
    if (await nextRow()) throw new SpliceRefusedError('The previous output goes on after its end.');
    await pieces.flush();
  } catch (error) {
    if (error instanceof PreviousRecordMissingError) throw new SpliceRefusedError(error.message);
    throw error;
  } finally {
    await previousRows.close();
  }
  for (const warning of warnings) options.onWarning?.(warning);
  return { parts, found };
}
