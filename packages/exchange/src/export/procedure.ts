import type { Approval } from '@rxs/contract';
import type { KnowledgeTopicRevision } from '@rxs/contract';
import type { RecordListQuery, RecordOutline, ServiceRecord } from '@rxs/contract';
import type { BatchRetrieveNode, RelationType, TraceEdge, TraceRole } from '@rxs/contract';
import { roleOfTrace, storedRole } from '@rxs/contract/plain';
import { buildFieldMap, extendFieldMap, RecordMapper, type FieldMap } from '../mapping/index.js';
import { ExportDataError } from './errors.js';
import { checkExportColumns } from './limits.js';
import { RecordEnds } from './record-ends.js';
import { TraceTable } from './trace-table.js';
import {
  defaultIdentifierRule,
  defaultPresentation,
  readableIdOf,
  ReadableIds,
  type IdentifierRule,
} from './identity.js';
import type {
  ExportedField,
  ExportedOutline,
  ExportedTopic,
  ExportedTrace,
  ExportPart,
  ExportServers,
  LinksBy,
  LinkType,
  TopicApproval,
  TopicPresentation,
} from './model.js';

/** What the export procedure needs from the three services (the sdk client provides it). */
export interface ExportSource {
  readonly servers: ExportServers;
  /** Step 1: `GET /kt/{revision_id}` (with `as_of` when the export reads a past moment). */
  getTopic(revisionId: string, options?: { asOf?: string }): Promise<KnowledgeTopicRevision>;
  /** Step 2: `GET /records/?context__knowledge_unit_topic_id=...`, yielded as records arrive. */
  listRecords(query: RecordListQuery): AsyncIterable<ServiceRecord>;
  /** Step 2 in batches, when the source can (the same records as `listRecords`, fewer awaits). */
  listRecordBatches?(query: RecordListQuery): AsyncIterable<ServiceRecord[]>;
  /** Step 4: `POST /traces/batch/list` for these nodes, chunked and with bounded concurrency. */
  listTraces(nodes: BatchRetrieveNode[], options?: { asOf?: string }): Promise<TraceEdge[]>;
  /**
   * Step 4 handing each batch's edges to `onEdges` as it arrives, with the batch's place among the
   * batches (the same edges as `listTraces`), when the source can: the export then keeps a few
   * numbers per edge instead of the edges.
   */
  listTraceBatches?(
    nodes: BatchRetrieveNode[],
    onEdges: (edges: TraceEdge[], batch: number) => void,
    options?: { asOf?: string },
  ): Promise<void>;
  /** Who approved a revision (`GET /kt/{id}/approval`), undefined when nobody did; optional. */
  getApproval?(revisionId: string): Promise<Approval | undefined>;
  /**
   * RXS: a topic's document outline by the topic's history id (`GET /records/outline/{id}`);
   * undefined from a service that keeps no outlines. Optional: without it every topic is flat.
   */
  getOutline?(knowledgeTopicHistoryId: string): Promise<RecordOutline | undefined>;
  /**
   * RXS: the roles of the tenant's trace model (`GET /trace-model`), or as they were at `asOf`
   * (`traceRolesAsOf`); undefined from a service without one. Optional: without it, links are
   * named by their relation types.
   */
  getTraceRoles?(options?: { asOf?: string }): Promise<readonly TraceRole[] | undefined>;
}

/** A topic as a mapping file names it: by history id (survives re-approvals) or by name. */
export interface TopicRef {
  historyId: string;
  name: string;
}

/**
 * How topics appear in requirements tools and how their links are named: a mapping file
 * (`export/mapping-file.ts`), or the defaults of `defaultExportMapping`.
 */
export interface ExportMapping {
  topic(
    topic: TopicRef,
    fields: readonly ExportedField[],
  ): { presentation: TopicPresentation; rule: IdentifierRule };
  /** The named link type of traces from records of `source` to records of `target`, if one is set. */
  linkType(source: TopicRef, target: TopicRef): LinkType | undefined;
  /** Warnings once every topic is known (e.g. a mapping file's entries that named no exported topic). */
  warningsFor?(exported: readonly TopicRef[]): string[];
}

/** Without a mapping file: presentation from the topic's name and fields, the default identifier rule, no link names. */
export const defaultExportMapping: ExportMapping = {
  topic(topic, fields) {
    const presentation = defaultPresentation(topic.name, fields);
    return { presentation, rule: defaultIdentifierRule(presentation) };
  },
  linkType: () => undefined,
};

export interface ExportOptions {
  /** Per-topic presentation, identifier rules and link names (a mapping file); defaults without. */
  mapping?: ExportMapping;
  /** KT revision ids, exported in this order. */
  revisionIds: string[];
  /** Step 4: retrieve the traces between the records. */
  traces?: boolean;
  /**
   * How the traces' links are named (default `role`): by the tenant's trace model, read once for
   * the export when traces are asked for, where a role matches; or by relation type alone.
   */
  linksBy?: LinksBy;
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
  /**
   * Most columns one topic may have (fields, list item fields, keys met only in record data);
   * beyond it the export stops with a `TooManyColumnsError` (default `DEFAULT_MAX_EXPORT_COLUMNS`).
   */
  maxColumns?: number;
  /**
   * Export the state at this past moment (ISO 8601 date-time): the topics, records and traces as
   * they were then. The header's `exportedAt` is that moment, so the export equals, byte for byte,
   * one taken then (same format, mapping and rxs version).
   */
  asOf?: string;
  /** Clock, for reproducible exports in tests. */
  now?: () => Date;
}

/** A revision asked for whose topic was re-approved since: its records moved to another revision. */
export class TopicReapprovedError extends ExportDataError {
  override name = 'TopicReapprovedError';
  override readonly code = 'RXS_ERR_TOPIC_REAPPROVED';

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

export function exportedTopic(
  revision: KnowledgeTopicRevision,
  map: FieldMap,
  presentation: TopicPresentation,
  approval: TopicApproval | undefined,
): ExportedTopic {
  return {
    revisionId: revision._id,
    historyId: revision.knowledge_topic_history_id,
    name: revision.knowledge_topic_name,
    version: revision.version ?? '',
    status: revision.status ?? '',
    latestRevisionId: revision.latest_revision_id ?? revision._id,
    schema: revision.knowledge_topic_schema,
    fields: map.fields,
    presentation,
    ...(approval && { approval }),
  };
}

/** The approval of a revision as exports carry it, if it was approved by the moment exported. */
async function approvalOf(
  source: ExportSource,
  revision: KnowledgeTopicRevision,
  asOf: string | undefined,
): Promise<TopicApproval | undefined> {
  if (revision.status !== 'approved' || !source.getApproval) return undefined;
  const approval = await source.getApproval(revision._id);
  if (!approval || (asOf !== undefined && approval.approved_at > asOf)) return undefined;
  return {
    by: approval.approved_by,
    byEmail: approval.approved_by_email,
    at: approval.approved_at,
    meaning: approval.meaning,
    reason: approval.reason,
    signature: approval.signature,
  };
}

/** The header part of an export taken now (or as of `options.asOf`). */
export function headerPart(
  source: ExportSource,
  options: Pick<ExportOptions, 'asOf' | 'revisionIds' | 'traces'>,
  now: () => Date,
): ExportPart {
  const asOf = options.asOf;
  return {
    kind: 'header',
    header: {
      exportedAt: asOf ?? now().toISOString(),
      ...(asOf === undefined ? {} : { asOf }),
      servers: source.servers,
      revisionIds: [...options.revisionIds],
      withTraces: !!options.traces,
    },
  };
}

/** What step 1 gives a topic's records: its revision, field map, presentation and identifier rule. */
export interface TopicStep {
  revision: KnowledgeTopicRevision;
  map: FieldMap;
  columnsOf: { name: string; revisionId: string };
  topicRef: TopicRef;
  presentation: TopicPresentation;
  rule: IdentifierRule;
  approval: TopicApproval | undefined;
}

/** Step 1 of one topic: its schema by revision id (or its newest revision, with `followLatest`). */
export async function prepareTopic(
  source: ExportSource,
  requested: string,
  options: Pick<ExportOptions, 'asOf' | 'followLatest' | 'maxColumns' | 'mapping'>,
  warn: (message: string) => void,
): Promise<TopicStep> {
  const asOf = options.asOf;
  const at = asOf === undefined ? {} : { asOf };
  let revision = await source.getTopic(requested, at);
  const latest = revision.latest_revision_id;
  if (latest && latest !== revision._id) {
    if (!options.followLatest)
      throw new TopicReapprovedError(requested, latest, revision.knowledge_topic_name);
    warn(
      `"${revision.knowledge_topic_name}" was re-approved: exporting its current revision ${latest} instead of ${requested}.`,
    );
    revision = await source.getTopic(latest, at);
  }
  const map = buildFieldMap(revision.knowledge_topic_schema);
  const columnsOf = { name: revision.knowledge_topic_name, revisionId: revision._id };
  checkExportColumns(columnsOf, map.fields, options.maxColumns);
  for (const warning of map.warnings) warn(`${revision.knowledge_topic_name}: ${warning}`);
  const topicRef: TopicRef = {
    historyId: revision.knowledge_topic_history_id,
    name: revision.knowledge_topic_name,
  };
  const { presentation, rule } = (options.mapping ?? defaultExportMapping).topic(topicRef, map.fields);
  const approval = await approvalOf(source, revision, asOf);
  return { revision, map, columnsOf, topicRef, presentation, rule, approval };
}

/** The document outline of a topic, fetched once, when the source keeps outlines and the topic has one. */
async function outlineOf(
  source: ExportSource,
  revision: KnowledgeTopicRevision,
): Promise<ExportedOutline | undefined> {
  const outline = await source.getOutline?.(revision.knowledge_topic_history_id);
  return outline && outline.entries.length > 0
    ? { entries: outline.entries, updatedAt: outline.updated_at }
    : undefined;
}

/** The warning of a topic that has no records (usually a wrong id). */
export function emptyTopicWarning(revision: KnowledgeTopicRevision): string {
  return (
    `Revision ${revision._id} ("${revision.knowledge_topic_name}") has no records. An empty list is a success, but usually means a wrong id: ` +
    `use the revision id (not the history id ${revision.knowledge_topic_history_id}) and fetch it again after a re-approval.`
  );
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
  const asOf = options.asOf;
  const at = asOf === undefined ? {} : { asOf };
  yield [headerPart(source, options, now)];

  const mapping = options.mapping ?? defaultExportMapping;
  const readableIds = new ReadableIds();
  // For the traces: each exported record's id, readable id and topic (kept only when traces are asked for).
  const ends = new RecordEnds();
  const exportedTopics: TopicRef[] = [];
  for (const requested of options.revisionIds) {
    // 1. The schema, by the same revision id the records are listed by.
    const step = await prepareTopic(source, requested, options, warn);
    const { revision, columnsOf, topicRef, presentation, rule, approval } = step;
    let map = step.map;
    exportedTopics.push(topicRef);
    const outline = await outlineOf(source, revision);
    yield [
      {
        kind: 'topic',
        topic: exportedTopic(revision, map, presentation, approval),
        ...(outline && { outline }),
      },
    ];

    // 2. and 3. The records of that revision, mapped as they arrive. The mapper is built once per
    // topic and learns the keys met only in record data as the map is extended with them.
    let count = 0;
    const mapper = new RecordMapper(map, { labels: options.labels });
    const query: RecordListQuery = {
      context__knowledge_unit_topic_id: revision._id,
      ...(asOf && { as_of: asOf }),
    };
    const batches = source.listRecordBatches
      ? source.listRecordBatches(query)
      : singleRecordBatches(source.listRecords(query));
    for await (const records of batches) {
      const parts: ExportPart[] = new Array(records.length);
      for (let i = 0; i < records.length; i++) {
        const record = records[i]!;
        const mapped = mapper.map(record);
        if (mapped.newFields.length > 0) {
          map = extendFieldMap(map, mapped.newFields);
          checkExportColumns(columnsOf, map.fields, options.maxColumns);
        }
        const readableId = readableIds.assign(readableIdOf(mapped.record, rule, presentation), record._id);
        mapped.record.readableId = readableId;
        if (options.traces) ends.add(record._id, readableId, exportedTopics.length - 1);
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
    if (count === 0) warn(emptyTopicWarning(revision));
    yield [
      { kind: 'topic-end', topic: exportedTopic(revision, map, presentation, approval), recordCount: count },
    ];
  }

  // 4. The traces touching the exported records.
  if (options.traces) {
    const model = options.linksBy === 'relation-type' ? undefined : await source.getTraceRoles?.(at);
    const { traces, linkTypes, roles } = await tracesOf(source, ends, exportedTopics, mapping, model, at);
    const mappedLinkTypes: LinkType[] = [];
    for (const source of exportedTopics)
      for (const target of exportedTopics) {
        const named = mapping.linkType(source, target);
        if (named) mappedLinkTypes.push(named);
      }
    yield [{ kind: 'traces', traces, linkTypes, mappedLinkTypes, ...(roles.length > 0 && { roles }) }];
  }
  for (const warning of mapping.warningsFor?.(exportedTopics) ?? []) warn(warning);
  yield [{ kind: 'end', warnings }];
}

/**
 * Step 4: the traces between the exported records and beyond, each once, sorted by id, with the
 * named link types and the trace model's roles they use. Kept as rows of numbers while the batches
 * arrive (TraceTable), when the source hands them over batch by batch; the edges and the table are
 * garbage once it returns.
 */
async function tracesOf(
  source: ExportSource,
  ends: RecordEnds,
  topics: readonly TopicRef[],
  mapping: ExportMapping,
  model: readonly TraceRole[] | undefined,
  at: { asOf?: string },
): Promise<{ traces: ExportedTrace[]; linkTypes: LinkType[]; roles: TraceRole[] }> {
  const table = new TraceTable(ends);
  const nodes = ends.ids.map((id): BatchRetrieveNode => ({ node_id: id, node_type: 'Record', version: '' }));
  if (source.listTraceBatches)
    await source.listTraceBatches(nodes, (edges, batch) => table.add(edges, batch), at);
  else table.add(await source.listTraces(nodes, at), 0);
  const roleOf =
    model && model.length > 0
      ? (from: number, to: number, relationTypes: readonly RelationType[]) => {
          const [source, target] = [topics[from]!.historyId, topics[to]!.historyId];
          for (const relationType of relationTypes) {
            const role = roleOfTrace(model, source, target, relationType);
            if (role) return role;
          }
          return undefined;
        }
      : undefined;
  const { traces, linkTypes } = table.traces(
    (from, to) => mapping.linkType(topics[from]!, topics[to]!),
    roleOf,
  );
  const used = new Set(traces.map((trace) => trace.roleId));
  return { traces, linkTypes, roles: (model ?? []).filter((role) => used.has(role.id)).map(storedRole) };
}
