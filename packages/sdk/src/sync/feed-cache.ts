import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { RxsClient } from '../client/client.js';
import type { RecordListQuery, ServiceRecord } from '../contract/record.js';
import type { BatchRetrieveNode, TraceEdge } from '../contract/trace.js';
import type { ExportSource } from '../export/procedure.js';
import { fsyncPath, writeFileAtomic } from './durable.js';
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
const TEMP_PREFIX = '.tmp-feed-';
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
  topics: {
    revisionId: string;
    file: string;
    /** Every change since the listing was kept (newest wins): what a merged export applies. */
    changes: Map<string, ServiceRecord | null>;
    /** The ids the feed named since the cursor: the changes since the snapshot, all a splice applies. */
    fresh: Set<string>;
    cursor: string;
  }[];
  /** The trace changes since the kept traces, when the cache has them and the service says. */
  traces?: { file: string; plan: TracePlan };
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
      const changes = new Map<string, ServiceRecord | null>();
      // The changes kept since the listing, then the feed's since the cursor (newer ones win).
      if (topic.changes !== undefined) {
        const kept = join(folder, topic.changes);
        if (!(await stat(kept).catch(() => undefined))?.isFile()) return undefined;
        for await (const [id, record] of readJsonLines<[string, ServiceRecord | null]>(kept))
          changes.set(id, record);
      }
      let cursor = topic.cursor;
      const fresh = new Set<string>();
      for (;;) {
        const page = await client.records.recordChanges(topic.revisionId, { since: cursor });
        // A re-approval moved the records on: the topic is to be followed, which a full run does.
        if (page.superseded_by !== null || page.complete) return undefined;
        for (const record of page.records) {
          changes.set(record._id, record);
          fresh.add(record._id);
        }
        for (const id of page.removed) {
          changes.set(id, null);
          fresh.add(id);
        }
        cursor = page.cursor;
        if (!page.more) break;
      }
      plan.topics.push({ revisionId: topic.revisionId, file: topic.file, changes, fresh, cursor });
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
    await removeStrayTemps(dir);
    const temp = join(dir, `${TEMP_PREFIX}${process.pid}-${Date.now().toString(36)}`);
    await mkdir(temp);
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
        planned.changes,
      )) {
        for (let i = 0; i < records.length; i++) sink.push(lines[i] ?? JSON.stringify(records[i]));
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
   * listing: the old listing is linked, not read, and the plan's changes (all since it was listed)
   * are written beside it; once they outgrow a tenth of it (or 16 MiB), the listing is merged and
   * written anew.
   */
  async keepListing(revisionId: string): Promise<void> {
    const index = this.revisionIds.indexOf(revisionId);
    const planned = this.plan?.topics.find((topic) => topic.revisionId === revisionId);
    if (index < 0 || !planned || this.sinks.has(revisionId) || this.linked.has(revisionId))
      throw new Error(`The feed cache cannot keep revision ${revisionId} (not planned, or kept already).`);
    const listing = join(this.plan!.folder, planned.file);
    const file = `topic-${index}.jsonl`;
    const lines = [...planned.changes.keys()]
      .sort(compareIds)
      .map((id) => JSON.stringify([id, planned.changes.get(id)]));
    const bytes = lines.reduce((total, line) => total + Buffer.byteLength(line) + 1, 0);
    if (bytes > Math.min((await stat(listing)).size * CHANGES_SHARE, CHANGES_MAX_BYTES)) {
      const sink = new JsonLinesSink(join(this.temp, file));
      this.sinks.set(revisionId, sink);
      for await (const batch of mergeChanges(listing, planned.changes)) {
        for (let i = 0; i < batch.records.length; i++)
          sink.push(batch.lines[i] ?? JSON.stringify(batch.records[i]));
        if (sink.full) await sink.flush();
      }
      await sink.close();
      return;
    }
    // A link where the folder allows one (the old cache is removed once the new one is named).
    await link(listing, join(this.temp, file)).catch(() => copyFile(listing, join(this.temp, file)));
    const changes = `topic-${index}.changes.jsonl`;
    const sink = new JsonLinesSink(join(this.temp, changes));
    try {
      for (const line of lines) {
        sink.push(line);
        if (sink.full) await sink.flush();
      }
      await sink.close();
    } catch (error) {
      await sink.destroy();
      throw error;
    }
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

async function removeStrayTemps(dir: string): Promise<void> {
  for (const entry of await readdir(dir).catch(() => [] as string[]))
    if (entry.startsWith(TEMP_PREFIX)) await rm(join(dir, entry), { recursive: true, force: true });
}

async function removeOtherCaches(dir: string, keep: string | undefined): Promise<void> {
  for (const entry of await readdir(dir).catch(() => [] as string[]))
    if (entry.startsWith(FOLDER_PREFIX) && join(dir, entry) !== keep)
      await rm(join(dir, entry), { recursive: true, force: true });
}
