import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { RxsClient } from '@rxs/client';
import { recordText } from '@rxs/client';
import type { RecordListQuery, ServiceRecord } from '@rxs/contract';
import type { BatchRetrieveNode, TraceEdge } from '@rxs/contract';
import type { ExportSource } from '@rxs/exchange/export';
import { fsyncPath, tempPath, writeFileAtomic } from '@rxs/exchange/export';
import { compareIds } from './json-values.js';
import { JsonLinesSink, readJsonLines } from './jsonl.js';
import { applyTraceChanges, feedUnavailable, planTraces, type TracePlan } from './feed-traces.js';

/**
 * A poll proportional to the changes: with a service that has the records changes feed
 * (`GET /records/changes`), a sync keeps, beside its snapshot, each topic's records as the service
 * listed them and the feed's cursor taken before they were read:
 *
 *   DIR/feed.json             which snapshot (generation) and export options (fingerprint) the
 *                             cache belongs to, and per topic its revision, cursor and file
 *   DIR/feed-<generation>/    the records of each topic, one JSON line each, in `_id` order,
 *                             and with --traces the traces they touch (feed-traces.ts); after a
 *                             spliced poll (splice.ts), a topic's listing is the one before,
 *                             linked, with the changes since beside it (`changes`)
 *
 * The next sync, when something changed, asks the feed for the changes since each cursor and
 * hands the export the cached records with the changes merged in, in `_id` order, exactly as a
 * listing would bring them: mapping, writers and the snapshot comparison run as on a full
 * download, so both give the same files. Anything unusual (another snapshot, other options, a
 * re-approval, a service without the feed, a refused cursor) makes a full run, which writes a new
 * cache. The cache is written beside the new snapshot and named in feed.json only once that
 * snapshot is committed.
 */
export const FEED_FILE = 'feed.json';
const FEED_FORMAT = 'rxs-sync-feed';
const FEED_VERSION = 2;
const FOLDER_PREFIX = 'feed-';
const READ_BATCH = 500;
const TRACES_FILE = 'traces.jsonl';

interface FeedTopic {
  revisionId: string;
  cursor: string;
  file: string;
  /** The changes since `file` was listed, one `[id, record or null]` line each, in `_id` order. */
  changes?: string;
}

/**
 * Changes kept beside a linked listing up to this share of its size, and this many bytes (the next
 * poll holds them in memory); beyond, the listing is written anew.
 */
const CHANGES_SHARE = 0.1;
const CHANGES_MAX_BYTES = 16 * 1024 * 1024;

interface FeedCacheFile {
  format: typeof FEED_FORMAT;
  version: typeof FEED_VERSION;
  generation: string;
  fingerprint: string;
  topics: FeedTopic[];
  /** With --traces, from a service with the trace feed: its cursor and the traces kept. */
  traces?: { cursor: string; file: string };
}

/** The changes of the topics since the cached cursors: per revision, each changed id and its record (null: gone). */
export interface FeedPlan {
  folder: string;
  topics: PlannedTopic[];
  /** The trace changes since the kept traces, when the cache has them and the service says. */
  traces?: { file: string; plan: TracePlan };
}

export interface PlannedTopic {
  revisionId: string;
  /** The kept listing, in the old cache's folder. */
  file: string;
  /** The feed's changes since the cursor, newest wins: the changes since the snapshot, all a splice applies. */
  fresh: Map<string, ServiceRecord | null>;
  /**
   * The changes kept since the listing, before the fresh ones (`[id, record or null]` lines in
   * `_id` order), or undefined: read only when an export merges them (`allChanges`) or the listing
   * is written anew; a spliced poll copies them as lines.
   */
  kept: string | undefined;
  cursor: string;
}

/** Every change since the topic's listing was kept: the kept ones, then the fresh ones (newer win). */
export async function allChanges(topic: PlannedTopic): Promise<Map<string, ServiceRecord | null>> {
  const changes = new Map<string, ServiceRecord | null>();
  if (topic.kept !== undefined)
    for await (const [id, record] of readJsonLines<[string, ServiceRecord | null]>(topic.kept))
      changes.set(id, record);
  for (const [id, record] of topic.fresh) changes.set(id, record);
  return changes;
}

/**
 * The cursors of now (before anything is read), or undefined from a service without the feed.
 * Call it before a full export, as the probe's tags.
 */
export async function takeFeedCursors(
  client: RxsClient,
  revisionIds: readonly string[],
): Promise<Map<string, string> | undefined> {
  const cursors = new Map<string, string>();
  try {
    for (const revisionId of revisionIds)
      cursors.set(revisionId, (await client.records.recordChanges(revisionId, { fromNow: true })).cursor);
  } catch (error) {
    if (feedUnavailable(error)) return undefined;
    throw error;
  }
  return cursors;
}

/**
 * The changes since the cache of DIR, if it belongs to snapshot `generation` and these options and
 * topics, and the service follows every topic's feed; undefined otherwise (then a full run).
 */
export async function planFromFeed(
  client: RxsClient,
  dir: string,
  generation: string,
  fingerprint: string,
  revisionIds: readonly string[],
  withTraces = false,
): Promise<FeedPlan | undefined> {
  let cache: FeedCacheFile;
  try {
    cache = JSON.parse(await readFile(join(dir, FEED_FILE), 'utf8')) as FeedCacheFile;
  } catch {
    return undefined;
  }
  if (cache.format !== FEED_FORMAT || cache.version !== FEED_VERSION) return undefined;
  if (cache.generation !== generation || cache.fingerprint !== fingerprint) return undefined;
  if (cache.topics.length !== revisionIds.length) return undefined;
  if (cache.topics.some((topic, i) => topic.revisionId !== revisionIds[i])) return undefined;
  const folder = join(dir, `${FOLDER_PREFIX}${generation}`);
  const plan: FeedPlan = { folder, topics: [] };
  try {
    // Traces first: their cursor must not pass the records' (feed-traces.ts says why).
    const tracesFile = cache.traces && join(folder, cache.traces.file);
    if (withTraces && cache.traces && (await stat(tracesFile!).catch(() => undefined))?.isFile()) {
      const traces = await planTraces(client, cache.traces.cursor);
      if (traces) plan.traces = { file: tracesFile!, plan: traces };
    }
    for (const topic of cache.topics) {
      if (!(await stat(join(folder, topic.file)).catch(() => undefined))?.isFile()) return undefined;
      // The changes kept since the listing are only found here; the feed's since the cursor are read.
      let kept: string | undefined;
      if (topic.changes !== undefined) {
        kept = join(folder, topic.changes);
        if (!(await stat(kept).catch(() => undefined))?.isFile()) return undefined;
      }
      let cursor = topic.cursor;
      const fresh = new Map<string, ServiceRecord | null>();
      for (;;) {
        const page = await client.records.recordChanges(topic.revisionId, { since: cursor });
        // A re-approval moved the records on: the topic is to be followed, which a full run does.
        if (page.superseded_by !== null || page.complete) return undefined;
        // A record named again in a later page changed again: the newest wins.
        for (const record of page.records) fresh.set(record._id, record);
        for (const id of page.removed) fresh.set(id, null);
        cursor = page.cursor;
        if (!page.more) break;
      }
      plan.topics.push({ revisionId: topic.revisionId, file: topic.file, fresh, kept, cursor });
    }
  } catch (error) {
    if (feedUnavailable(error)) return undefined;
    throw error;
  }
  return plan;
}

/**
 * Keeps a new cache while an export runs: its `wrap` hands the export source's record listings
 * through (a full run) or builds them from the old cache and the plan's changes (a feed run), and
 * writes each listing, as the export receives it, to a file of the new cache. `commit` names it in
 * feed.json for the snapshot just committed; `abort` drops it.
 */
export class FeedCacheWriter {
  /** The new cache's file of each revision listed so far. */
  private readonly sinks = new Map<string, JsonLinesSink>();
  /** Revisions whose listing is the old one, linked, with the changes since in this file. */
  private readonly linked = new Map<string, string>();
  /** A listing the cache cannot stand for passed (another revision, a moment in the past). */
  private spoiled = false;
  /** The traces listed, kept in the new cache (false: none, or not ones the cache can stand for). */
  private tracesKept = false;
  private tracesListed = false;

  private constructor(
    readonly dir: string,
    readonly temp: string,
    private readonly revisionIds: readonly string[],
    private readonly cursors: Map<string, string>,
    private readonly plan: FeedPlan | undefined,
    /** The trace feed's cursor the kept traces will stand for (none: traces are not kept). */
    private readonly traceCursor: string | undefined,
  ) {}

  /**
   * A writer for a full run (cursors taken before the export) or a feed run (`plan`). `traceCursor`:
   * the trace feed's cursor of now, taken before anything was read, when the traces are not planned.
   */
  static async open(
    dir: string,
    revisionIds: readonly string[],
    source: ({ cursors: Map<string, string> } | { plan: FeedPlan }) & { traceCursor?: string },
  ): Promise<FeedCacheWriter> {
    // Named as every temporary file: a killed sync's is removed once a day old (`removeLeftovers`),
    // not while it may still be renamed after the lock's release.
    const temp = tempPath(join(dir, 'feed'));
    // Writable by this user only: a later sync may remove it whole (`removeLeftovers`).
    await mkdir(temp, { mode: 0o755 });
    const plan = 'plan' in source ? source.plan : undefined;
    const cursors = plan
      ? new Map(plan.topics.map((topic) => [topic.revisionId, topic.cursor]))
      : (source as { cursors: Map<string, string> }).cursors;
    const traceCursor = plan?.traces?.plan.cursor ?? source.traceCursor;
    return new FeedCacheWriter(dir, temp, revisionIds, cursors, plan, traceCursor);
  }

  /** The export source, with its record listings and traces kept (in a feed run, made from the cache). */
  wrap(source: ExportSource): ExportSource {
    return {
      ...source,
      listRecords: (query) => singles(this.listRecordBatches(source, query)),
      listRecordBatches: (query) => this.listRecordBatches(source, query),
      listTraces: (nodes, options) => this.listTraces(source, nodes, options),
      // The kept traces are whole edges: the export asks for them through listTraces.
      listTraceBatches: undefined,
    };
  }

  /** The traces of `nodes`: the kept ones with the feed's changes applied, or the source's; kept. */
  private async listTraces(
    source: ExportSource,
    nodes: BatchRetrieveNode[],
    options?: { asOf?: string },
  ): Promise<TraceEdge[]> {
    const keepable = this.traceCursor !== undefined && options?.asOf === undefined && !this.tracesListed;
    this.tracesListed = true;
    const planned = keepable ? this.plan?.traces : undefined;
    const edges = planned
      ? await applyTraceChanges(planned.file, planned.plan, nodes)
      : await source.listTraces(nodes, options);
    if (!keepable) return edges;
    const sink = new JsonLinesSink(join(this.temp, TRACES_FILE));
    try {
      for (const edge of edges) {
        sink.push(JSON.stringify(edge));
        if (sink.full) await sink.flush();
      }
    } finally {
      await sink.close();
    }
    this.tracesKept = true;
    return edges;
  }

  private async *listRecordBatches(
    source: ExportSource,
    query: RecordListQuery,
  ): AsyncGenerator<ServiceRecord[]> {
    const revisionId = query.context__knowledge_unit_topic_id;
    const index = revisionId === undefined ? -1 : this.revisionIds.indexOf(revisionId);
    const plain =
      index < 0 ||
      query.as_of !== undefined ||
      Object.keys(query).length !== 1 ||
      this.sinks.has(revisionId!);
    if (plain) {
      this.spoiled = true;
      yield* batchesOf(source, query);
      return;
    }
    const sink = new JsonLinesSink(join(this.temp, `topic-${index}.jsonl`));
    this.sinks.set(revisionId!, sink);
    const planned = this.plan?.topics.find((topic) => topic.revisionId === revisionId);
    if (planned) {
      // A cached record goes into the new cache as the line it was: only changes are serialised.
      for await (const { records, lines } of mergeChanges(
        join(this.plan!.folder, planned.file),
        await allChanges(planned),
      )) {
        for (let i = 0; i < records.length; i++) sink.push(lines[i] ?? recordLine(records[i]!));
        if (sink.full) await sink.flush();
        yield records;
      }
    } else {
      for await (const batch of batchesOf(source, query)) {
        for (const record of batch) sink.push(JSON.stringify(record));
        if (sink.full) await sink.flush();
        yield batch;
      }
    }
    await sink.close();
  }

  /**
   * The new cache's listing of a revision in a spliced poll (splice.ts), which hands the export no
   * listing: the old listing is linked, not read, and the changes since it was listed are written
   * beside it: the kept ones copied as the lines they are (neither parsed nor serialised again),
   * merged by id with the plan's fresh ones. Once they outgrow a tenth of the listing (or 16 MiB),
   * the listing is merged and written anew instead.
   */
  async keepListing(revisionId: string): Promise<void> {
    const index = this.revisionIds.indexOf(revisionId);
    const planned = this.plan?.topics.find((topic) => topic.revisionId === revisionId);
    if (index < 0 || !planned || this.sinks.has(revisionId) || this.linked.has(revisionId))
      throw new Error(`The feed cache cannot keep revision ${revisionId} (not planned, or kept already).`);
    const listing = join(this.plan!.folder, planned.file);
    const changes = `topic-${index}.changes.jsonl`;
    const limit = Math.min((await stat(listing)).size * CHANGES_SHARE, CHANGES_MAX_BYTES);
    const sink = new JsonLinesSink(join(this.temp, changes));
    let within: boolean;
    try {
      within = await writeChangeLines(sink, planned, limit);
      if (within) await sink.close();
      else await sink.destroy();
    } catch (error) {
      await sink.destroy();
      throw error;
    }
    if (!within) {
      await rm(join(this.temp, changes), { force: true });
      const merged = new JsonLinesSink(join(this.temp, `topic-${index}.jsonl`));
      this.sinks.set(revisionId, merged);
      for await (const batch of mergeChanges(listing, await allChanges(planned))) {
        for (let i = 0; i < batch.records.length; i++)
          merged.push(batch.lines[i] ?? recordLine(batch.records[i]!));
        if (merged.full) await merged.flush();
      }
      await merged.close();
      return;
    }
    // A link where the folder allows one (the old cache is removed once the new one is named).
    const file = `topic-${index}.jsonl`;
    await link(listing, join(this.temp, file)).catch(() => copyFile(listing, join(this.temp, file)));
    this.linked.set(revisionId, changes);
  }

  /** After the snapshot `generation` was committed: the new cache becomes the one in feed.json. */
  async commit(generation: string, fingerprint: string): Promise<boolean> {
    if (this.spoiled || this.revisionIds.some((id) => !this.sinks.has(id) && !this.linked.has(id))) {
      await this.abort();
      await dropFeedCache(this.dir);
      return false;
    }
    try {
      await this.keep(generation, fingerprint);
      return true;
    } catch {
      // The snapshot is committed already; without a cache the next poll is a full run, no more.
      await this.abort();
      await dropFeedCache(this.dir).catch(() => undefined);
      return false;
    }
  }

  private async keep(generation: string, fingerprint: string): Promise<void> {
    const folder = join(this.dir, `${FOLDER_PREFIX}${generation}`);
    await fsyncPath(this.temp);
    await rename(this.temp, folder);
    await fsyncPath(this.dir);
    const content: FeedCacheFile = {
      format: FEED_FORMAT,
      version: FEED_VERSION,
      generation,
      fingerprint,
      topics: this.revisionIds.map((revisionId, index) => {
        const changes = this.linked.get(revisionId);
        return {
          revisionId,
          cursor: this.cursors.get(revisionId)!,
          file: `topic-${index}.jsonl`,
          ...(changes !== undefined && { changes }),
        };
      }),
      ...(this.tracesKept && { traces: { cursor: this.traceCursor!, file: TRACES_FILE } }),
    };
    await writeFileAtomic(join(this.dir, FEED_FILE), `${JSON.stringify(content, null, 2)}\n`);
    await removeOtherCaches(this.dir, folder);
  }

  async abort(): Promise<void> {
    for (const sink of this.sinks.values()) await sink.close().catch(() => undefined);
    await rm(this.temp, { recursive: true, force: true });
  }
}

/** Removes the cache of DIR (after a run that could not keep one, so no stale cache stays named). */
export async function dropFeedCache(dir: string): Promise<void> {
  await rm(join(dir, FEED_FILE), { force: true });
  await removeOtherCaches(dir, undefined);
}

/** A changed record's line: its text as the feed sent it where known, else serialised. */
function recordLine(record: ServiceRecord): string {
  return recordText(record) ?? JSON.stringify(record);
}

async function* batchesOf(source: ExportSource, query: RecordListQuery): AsyncGenerator<ServiceRecord[]> {
  if (source.listRecordBatches) yield* source.listRecordBatches(query);
  else for await (const record of source.listRecords(query)) yield [record];
}

async function* singles(batches: AsyncIterable<ServiceRecord[]>): AsyncGenerator<ServiceRecord> {
  for await (const batch of batches) yield* batch;
}

/**
 * The cached records (a file in `_id` order) with the changes merged in, in `_id` order: a changed
 * record replaces or joins, a gone one is left out. Each batch has the records and, for those that
 * came from the cache, their lines as they were (undefined for a change).
 */
async function* mergeChanges(
  file: string,
  changes: Map<string, ServiceRecord | null>,
): AsyncGenerator<{ records: ServiceRecord[]; lines: (string | undefined)[] }> {
  const changedIds = [...changes.keys()].sort(compareIds);
  let next = 0;
  let records: ServiceRecord[] = [];
  let lines: (string | undefined)[] = [];
  const take = (record: ServiceRecord | null | undefined, line: string | undefined) => {
    if (!record) return;
    records.push(record);
    lines.push(line);
  };
  const changesBefore = (id: string | undefined) => {
    while (next < changedIds.length && (id === undefined || compareIds(changedIds[next]!, id) < 0))
      take(changes.get(changedIds[next++]!), undefined);
  };
  const input = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of input) {
    if (line === '') continue;
    const cached = JSON.parse(line) as ServiceRecord;
    changesBefore(cached._id);
    if (next < changedIds.length && changedIds[next] === cached._id)
      take(changes.get(changedIds[next++]!), undefined);
    else take(cached, line);
    if (records.length >= READ_BATCH) {
      yield { records, lines };
      records = [];
      lines = [];
    }
  }
  changesBefore(undefined);
  if (records.length > 0) yield { records, lines };
}

/**
 * Writes a topic's changes since its listing into `sink`, in `_id` order, one `[id, record or
 * null]` line each: the kept lines as they are (their ids read from their first bytes) merged with
 * the fresh changes, a fresh one taking the place of a kept one of the same id. Returns false,
 * having stopped, once the lines pass `limit` bytes.
 */
async function writeChangeLines(sink: JsonLinesSink, topic: PlannedTopic, limit: number): Promise<boolean> {
  const ids = [...topic.fresh.keys()].sort(compareIds);
  let next = 0;
  let bytes = 0;
  const push = (line: string) => {
    const start = sink.push(line);
    bytes += sink.pendingEnd - start;
  };
  const pushFresh = async (before: string | undefined) => {
    while (next < ids.length && (before === undefined || compareIds(ids[next]!, before) < 0)) {
      const id = ids[next++]!;
      const record = topic.fresh.get(id);
      push(record ? `[${JSON.stringify(id)},${recordLine(record)}]` : JSON.stringify([id, null]));
      if (sink.full) await sink.flush();
    }
  };
  if (topic.kept !== undefined) {
    const input = createReadStream(topic.kept, 'utf8');
    const lines = createInterface({ input, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (line === '') continue;
        const id = changeLineId(line, topic.kept);
        await pushFresh(id);
        if (next < ids.length && ids[next] === id) continue; // changed again since: the fresh one wins
        push(line);
        if (bytes > limit) return false;
        if (sink.full) await sink.flush();
      }
    } finally {
      lines.close();
      input.destroy();
    }
  }
  await pushFresh(undefined);
  return bytes <= limit;
}

/** The id a kept change line (`["<id>",…]`) starts with, read without parsing the record after it. */
export function changeLineId(line: string, file: string): string {
  const damaged = () =>
    new Error(`${file}: a line does not start with a record id; the sync state is damaged.`);
  if (!line.startsWith('["')) throw damaged();
  let end = 2; // the id's closing quote
  while (end < line.length && line[end] !== '"') end += line[end] === '\\' ? 2 : 1;
  if (line[end] !== '"' || line[end + 1] !== ',') throw damaged();
  try {
    return JSON.parse(line.slice(1, end + 1)) as string;
  } catch {
    throw damaged(); // an escape JSON does not have
  }
}

async function removeOtherCaches(dir: string, keep: string | undefined): Promise<void> {
  for (const entry of await readdir(dir).catch(() => [] as string[]))
    if (entry.startsWith(FOLDER_PREFIX) && join(dir, entry) !== keep)
      await rm(join(dir, entry), { recursive: true, force: true });
}
