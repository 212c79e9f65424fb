import type { ExportedTrace, ExportServers } from '@rxs/exchange/export';

/**
 * The change report of one sync: what differs between the previous snapshot and this export.
 * A stable JSON shape (`format` and `version` name it); every member is always present, lists may
 * be empty, and `null` stands for "not applicable". Counts are always complete; the lists of
 * records and traces hold at most `detailLimit` entries of each kind for the whole report, the
 * rest is counted in `omitted` (and `truncated` is true), so the report stays small whatever the
 * size of the export.
 */

export const CHANGE_REPORT_FORMAT = 'rxs-sync-report';
export const CHANGE_REPORT_VERSION = 1;
export const DEFAULT_DETAIL_LIMIT = 10_000;

export interface ChangeReport {
  format: typeof CHANGE_REPORT_FORMAT;
  version: typeof CHANGE_REPORT_VERSION;
  /** No previous state: this is the initial snapshot, and everything in it is reported as added. */
  initial: boolean;
  /** Anything differs: records, traces, topics or their schemas. */
  changed: boolean;
  exportedAt: string;
  /** When the previous snapshot was exported; null on the initial snapshot. */
  previousExportedAt: string | null;
  servers: ExportServers;
  summary: ChangeSummary;
  /** Topics of this export in export order, then topics of the previous snapshot no longer exported. */
  topics: TopicChanges[];
  traces: TraceChanges;
  /** The most entries each list kind (records added, removed, changed; traces ...) holds. */
  detailLimit: number;
  /** Some list was cut at `detailLimit`; its counts are still complete. */
  truncated: boolean;
  /** Sentences worth telling a reader: initial snapshot, re-approvals, cut lists, ... */
  notes: string[];
  /** Warnings of the export itself (its `end` part). */
  warnings: string[];
}

export interface ChangeSummary {
  topics: { before: number; after: number; added: number; removed: number; changed: number };
  records: RecordCounts;
  traces: { before: number; after: number; added: number; removed: number; changed: number };
  /** Topics in both snapshots whose schema changed. */
  schemaChanges: number;
  /** Topics re-approved since the previous snapshot (same history id, new revision id). */
  reapprovals: number;
}

/** Records before and after, and how they differ; before = removed + changed + unchanged, after = added + changed + unchanged. */
export interface RecordCounts {
  before: number;
  after: number;
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
}

export type TopicStatus = 'added' | 'removed' | 'present';

export interface Change<T> {
  before: T;
  after: T;
}

export interface TopicChanges {
  /** The key of a topic across snapshots (the revision id changes on re-approval). */
  historyId: string;
  /** Current name (the previous one for a removed topic). */
  name: string;
  /** added: not in the previous snapshot; removed: no longer exported; present: in both. */
  status: TopicStatus;
  revisionId: string | null;
  previousRevisionId: string | null;
  /** Present in both with different revision ids: the topic was re-approved. */
  reapproved: boolean;
  renamed: Change<string> | null;
  versionChange: Change<string> | null;
  schema: SchemaChanges;
  /** Anything about the topic or its records differs. */
  changed: boolean;
  counts: RecordCounts;
  added: RecordRef[];
  removed: RecordRef[];
  changedRecords: RecordChange[];
  /** Entries counted but not listed (beyond `detailLimit`). */
  omitted: { added: number; removed: number; changed: number };
}

export interface RecordRef {
  id: string;
  name: string;
}

export interface RecordChange {
  id: string;
  /** Current name. */
  name: string;
  nameChange: Change<string> | null;
  versionChange: Change<string> | null;
  /** By semantic name (as of the current schema: renamed fields are compared under their new name). */
  fields: FieldChange[];
}

export interface FieldChange {
  /** Semantic name. */
  field: string;
  change: 'added' | 'removed' | 'modified';
  /** Absent when added. */
  before?: unknown;
  /** Absent when removed. */
  after?: unknown;
}

export interface SchemaChanges {
  /** The schema hash differs (also when no field changed, e.g. layout or validation rules). */
  changed: boolean;
  previousHash: string | null;
  hash: string | null;
  /**
   * Fields by form key. Fields of dynamiclist items appear with keys and names joined by "[].",
   * e.g. key "risks[].severity", name "Risks[].Severity".
   */
  fieldsAdded: FieldRef[];
  fieldsRemoved: FieldRef[];
  /** Same form key, new semantic name. */
  fieldsRenamed: { key: string; before: string; after: string }[];
  /** Same form key, another component type, label or options. */
  fieldsModified: FieldModification[];
}

export interface FieldRef {
  key: string;
  name: string;
  type: string | null;
}

export interface FieldModification {
  key: string;
  name: string;
  type: Change<string | null> | null;
  label: Change<string | null> | null;
  options: Change<{ value: unknown; label: string }[] | null> | null;
}

export interface TraceChanges {
  /** False when this export had no traces: nothing was compared and none are kept. */
  compared: boolean;
  added: ExportedTrace[];
  removed: ExportedTrace[];
  /** Same trace id, other ends or relation types. */
  changed: Change<ExportedTrace>[];
  omitted: { added: number; removed: number; changed: number };
}
