import type { ExportedTrace, ExportServers } from '@rxs/exchange/export';
import {
  CHANGE_REPORT_FORMAT,
  CHANGE_REPORT_VERSION,
  type Change,
  type ChangeReport,
  type RecordChange,
  type RecordRef,
  type SchemaChanges,
  type TopicChanges,
  type TopicStatus,
  type TraceChanges,
} from './report.js';

/** What a topic entry is closed with: its metadata on either side, if any. */
export interface TopicSides {
  before?: { revisionId: string; name: string; version: string };
  after?: { revisionId: string; name: string; version: string };
  schema: SchemaChanges;
}

/**
 * Collects a report while the export streams. Counts are kept for everything; each kind of list
 * holds at most `limit` entries for the whole report, so memory is bounded by the limit and by the
 * number of topics, never by the number of records.
 */
export class ReportBuilder {
  readonly topics: TopicChanges[] = [];
  readonly traces: TraceChanges = {
    compared: false,
    added: [],
    removed: [],
    changed: [],
    omitted: { added: 0, removed: 0, changed: 0 },
  };
  private readonly listed = { added: 0, removed: 0, changed: 0 };
  private readonly notes: string[] = [];
  private tracesBefore = 0;
  private tracesAfter = 0;

  constructor(readonly limit: number) {}

  openTopic(historyId: string, name: string, status: TopicStatus): TopicChanges {
    const entry: TopicChanges = {
      historyId,
      name,
      status,
      revisionId: null,
      previousRevisionId: null,
      reapproved: false,
      renamed: null,
      versionChange: null,
      schema: {
        changed: false,
        previousHash: null,
        hash: null,
        fieldsAdded: [],
        fieldsRemoved: [],
        fieldsRenamed: [],
        fieldsModified: [],
      },
      changed: false,
      counts: { before: 0, after: 0, added: 0, removed: 0, changed: 0, unchanged: 0 },
      added: [],
      removed: [],
      changedRecords: [],
      omitted: { added: 0, removed: 0, changed: 0 },
    };
    this.topics.push(entry);
    return entry;
  }

  recordAdded(topic: TopicChanges, record: RecordRef): void {
    topic.counts.added++;
    if (this.take('added')) topic.added.push(record);
    else topic.omitted.added++;
  }

  recordRemoved(topic: TopicChanges, record: RecordRef): void {
    topic.counts.removed++;
    if (this.take('removed')) topic.removed.push(record);
    else topic.omitted.removed++;
  }

  recordChanged(topic: TopicChanges, change: RecordChange): void {
    topic.counts.changed++;
    if (this.take('changed')) topic.changedRecords.push(change);
    else topic.omitted.changed++;
  }

  recordUnchanged(topic: TopicChanges, count = 1): void {
    topic.counts.unchanged += count;
  }

  closeTopic(topic: TopicChanges, sides: TopicSides): void {
    const { before, after } = sides;
    const counts = topic.counts;
    counts.before = counts.removed + counts.changed + counts.unchanged;
    counts.after = counts.added + counts.changed + counts.unchanged;
    topic.revisionId = after?.revisionId ?? null;
    topic.previousRevisionId = before?.revisionId ?? null;
    topic.schema = sides.schema;
    if (before && after) {
      topic.reapproved = before.revisionId !== after.revisionId;
      topic.renamed = textChange(before.name, after.name);
      topic.versionChange = textChange(before.version, after.version);
      if (topic.reapproved)
        this.notes.push(
          `"${after.name}" was re-approved since the previous snapshot: revision ${before.revisionId} -> ${after.revisionId}.`,
        );
    }
    if (topic.status === 'removed')
      this.notes.push(`"${topic.name}" is no longer exported; its records are reported as removed.`);
    topic.changed =
      topic.status !== 'present' ||
      topic.reapproved ||
      topic.renamed !== null ||
      topic.versionChange !== null ||
      topic.schema.changed ||
      counts.added + counts.removed + counts.changed > 0;
  }

  traceAdded(trace: ExportedTrace): void {
    if (this.traces.added.length < this.limit) this.traces.added.push(trace);
    else this.traces.omitted.added++;
  }

  traceRemoved(trace: ExportedTrace): void {
    if (this.traces.removed.length < this.limit) this.traces.removed.push(trace);
    else this.traces.omitted.removed++;
  }

  traceChanged(change: Change<ExportedTrace>): void {
    if (this.traces.changed.length < this.limit) this.traces.changed.push(change);
    else this.traces.omitted.changed++;
  }

  traceCounts(before: number, after: number): void {
    this.tracesBefore = before;
    this.tracesAfter = after;
  }

  note(text: string): void {
    this.notes.push(text);
  }

  finish(facts: {
    exportedAt: string;
    previousExportedAt: string | null;
    servers: ExportServers;
    warnings: string[];
  }): ChangeReport {
    const topics = this.topics;
    const sum = (pick: (t: TopicChanges) => number) => topics.reduce((total, t) => total + pick(t), 0);
    const traces = this.traces;
    const traceCount = (kind: 'added' | 'removed' | 'changed') => traces[kind].length + traces.omitted[kind];
    const summary: ChangeReport['summary'] = {
      topics: {
        before: topics.filter((t) => t.status !== 'added').length,
        after: topics.filter((t) => t.status !== 'removed').length,
        added: topics.filter((t) => t.status === 'added').length,
        removed: topics.filter((t) => t.status === 'removed').length,
        changed: topics.filter((t) => t.changed).length,
      },
      records: {
        before: sum((t) => t.counts.before),
        after: sum((t) => t.counts.after),
        added: sum((t) => t.counts.added),
        removed: sum((t) => t.counts.removed),
        changed: sum((t) => t.counts.changed),
        unchanged: sum((t) => t.counts.unchanged),
      },
      traces: {
        before: this.tracesBefore,
        after: this.tracesAfter,
        added: traceCount('added'),
        removed: traceCount('removed'),
        changed: traceCount('changed'),
      },
      schemaChanges: topics.filter((t) => t.status === 'present' && t.schema.changed).length,
      reapprovals: topics.filter((t) => t.reapproved).length,
    };
    const truncated =
      topics.some((t) => t.omitted.added + t.omitted.removed + t.omitted.changed > 0) ||
      traces.omitted.added + traces.omitted.removed + traces.omitted.changed > 0;
    const notes = [...this.notes];
    if (truncated)
      notes.push(
        `Lists are cut at ${this.limit} entries of each kind (records added, removed, changed; traces added, removed, changed); all counts are complete.`,
      );
    return {
      format: CHANGE_REPORT_FORMAT,
      version: CHANGE_REPORT_VERSION,
      initial: facts.previousExportedAt === null,
      changed:
        summary.topics.changed > 0 ||
        summary.traces.added + summary.traces.removed + summary.traces.changed > 0,
      exportedAt: facts.exportedAt,
      previousExportedAt: facts.previousExportedAt,
      servers: facts.servers,
      summary,
      topics,
      traces,
      detailLimit: this.limit,
      truncated,
      notes,
      warnings: facts.warnings,
    };
  }

  private take(kind: 'added' | 'removed' | 'changed'): boolean {
    if (this.listed[kind] >= this.limit) return false;
    this.listed[kind]++;
    return true;
  }
}

function textChange(before: string, after: string): Change<string> | null {
  return before === after ? null : { before, after };
}
