import type { KnowledgeTopicRevision } from '../contract/knowledge-topic.js';
import type { RecordListQuery, ServiceRecord } from '../contract/record.js';
import type { BatchRetrieveNode, TraceEdge } from '../contract/trace.js';
import { buildFieldMap, extendFieldMap, RecordMapper, type FieldMap } from '../mapping/index.js';
import type { ExportedTopic, ExportedTrace, ExportPart, ExportServers } from './model.js';

/** What the export procedure needs from the three services (the sdk client provides it). */
export interface ExportSource {
  readonly servers: ExportServers;
  /** Step 1: `GET /kt/{revision_id}`. */
  getTopic(revisionId: string): Promise<KnowledgeTopicRevision>;
  /** Step 2: `GET /records/?context__knowledge_unit_topic_id=...`, yielded as records arrive. */
  listRecords(query: RecordListQuery): AsyncIterable<ServiceRecord>;
  /** Step 2 in batches, when the source can (the same records as `listRecords`, fewer awaits). */
  listRecordBatches?(query: RecordListQuery): AsyncIterable<ServiceRecord[]>;
  /** Step 4: `POST /traces/batch/list` for these nodes, chunked and with bounded concurrency. */
  listTraces(nodes: BatchRetrieveNode[]): Promise<TraceEdge[]>;
}

export interface ExportOptions {
  /** KT revision ids, exported in this order. */
  revisionIds: string[];
  /** Step 4: retrieve the traces between the records. */
  traces?: boolean;
  /** Show select, radio and checklist values by their labels. */
  labels?: boolean;
  /**
   * When a topic was re-approved (its `latest_revision_id` is newer than the id asked for), export
   * the newest revision instead of failing.
   */
  followLatest?: boolean;
  /** Called with each warning as it arises (they are also in the `end` part). */
  onWarning?: (message: string) => void;
  /** Called as records arrive (at least once per batch of records), for progress display. */
  onProgress?: (progress: { topic: string; revisionId: string; records: number }) => void;
  /** Clock, for reproducible exports in tests. */
  now?: () => Date;
}

/** A revision asked for whose topic was re-approved since: its records moved to another revision. */
export class TopicReapprovedError extends Error {
  constructor(
    readonly revisionId: string,
    readonly latestRevisionId: string,
    readonly topicName: string,
  ) {
    super(
      `The knowledge topic "${topicName}" was re-approved: its records moved from revision ${revisionId} to ${latestRevisionId}. ` +
        `Export revision ${latestRevisionId} instead (or pass --follow-latest).`,
    );
  }
}

function exportedTopic(revision: KnowledgeTopicRevision, map: FieldMap): ExportedTopic {
  return {
    revisionId: revision._id,
    historyId: revision.knowledge_topic_history_id,
    name: revision.knowledge_topic_name,
    version: revision.version ?? '',
    status: revision.status ?? '',
    latestRevisionId: revision.latest_revision_id ?? revision._id,
    schema: revision.knowledge_topic_schema,
    fields: map.fields,
  };
}

/**
 * The documented export procedure, in its fixed order: (1) the KT schema by revision id, (2) the
 * records of that revision, (3) each record mapped from form keys to semantic names, (4) optionally
 * the traces. Yields the export as parts, so writers and sync consume it in flat memory; only the
 * record ids are kept, for step 4.
 */
export async function* exportParts(source: ExportSource, options: ExportOptions): AsyncGenerator<ExportPart> {
  for await (const batch of exportPartBatches(source, options)) yield* batch;
}

/** One-record batches of a source that only lists record by record. */
async function* singleRecordBatches(records: AsyncIterable<ServiceRecord>): AsyncGenerator<ServiceRecord[]> {
  for await (const record of records) yield [record];
}

/**
 * `exportParts` in batches (never empty): the same parts in the same order, with the records of
 * each chunk of the listing together, so consumers pay one await per batch instead of per record.
 */
export async function* exportPartBatches(
  source: ExportSource,
  options: ExportOptions,
): AsyncGenerator<ExportPart[]> {
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    options.onWarning?.(message);
  };
  const now = options.now ?? (() => new Date());
  yield [
    {
      kind: 'header',
      header: {
        exportedAt: now().toISOString(),
        servers: source.servers,
        revisionIds: [...options.revisionIds],
        withTraces: !!options.traces,
      },
    },
  ];

  const recordIds: string[] = [];
  for (const requested of options.revisionIds) {
    // 1. The schema, by the same revision id the records are listed by.
    let revision = await source.getTopic(requested);
    const latest = revision.latest_revision_id;
    if (latest && latest !== revision._id) {
      if (!options.followLatest)
        throw new TopicReapprovedError(requested, latest, revision.knowledge_topic_name);
      warn(
        `"${revision.knowledge_topic_name}" was re-approved: exporting its current revision ${latest} instead of ${requested}.`,
      );
      revision = await source.getTopic(latest);
    }
    let map = buildFieldMap(revision.knowledge_topic_schema);
    for (const warning of map.warnings) warn(`${revision.knowledge_topic_name}: ${warning}`);
    yield [{ kind: 'topic', topic: exportedTopic(revision, map) }];

    // 2. and 3. The records of that revision, mapped as they arrive. The mapper is built once per
    // topic and learns the keys met only in record data as the map is extended with them.
    let count = 0;
    const mapper = new RecordMapper(map, { labels: options.labels });
    const query = { context__knowledge_unit_topic_id: revision._id };
    const batches = source.listRecordBatches
      ? source.listRecordBatches(query)
      : singleRecordBatches(source.listRecords(query));
    for await (const records of batches) {
      const parts: ExportPart[] = new Array(records.length);
      for (let i = 0; i < records.length; i++) {
        const record = records[i]!;
        const mapped = mapper.map(record);
        if (mapped.newFields.length > 0) map = extendFieldMap(map, mapped.newFields);
        if (options.traces) recordIds.push(record._id);
        parts[i] = { kind: 'record', record: mapped.record };
      }
      if (records.length === 0) continue;
      count += records.length;
      options.onProgress?.({
        topic: revision.knowledge_topic_name,
        revisionId: revision._id,
        records: count,
      });
      yield parts;
    }
    if (count === 0) {
      warn(
        `Revision ${revision._id} ("${revision.knowledge_topic_name}") has no records. An empty list is a success, but usually means a wrong id: ` +
          `use the revision id (not the history id ${revision.knowledge_topic_history_id}) and fetch it again after a re-approval.`,
      );
    }
    yield [{ kind: 'topic-end', topic: exportedTopic(revision, map), recordCount: count }];
  }

  // 4. The traces touching the exported records.
  if (options.traces) {
    const edges = await source.listTraces(
      recordIds.map((id) => ({ node_id: id, node_type: 'Record', version: '' })),
    );
    const seen = new Set<string>();
    const traces: ExportedTrace[] = [];
    for (const edge of edges) {
      if (seen.has(edge._id)) continue;
      seen.add(edge._id);
      traces.push({
        id: edge._id,
        source: { id: edge.source, type: edge.source_node?.type ?? 'Record' },
        target: { id: edge.target, type: edge.target_node?.type ?? 'Record' },
        relationTypes: [...edge.relation_type],
      });
    }
    traces.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    yield [{ kind: 'traces', traces }];
  }
  yield [{ kind: 'end', warnings }];
}
