import type { FormSchema } from '../contract/form.js';
import type { NodeType, RelationType } from '../contract/trace.js';

/**
 * The export as a stream of parts: for each topic a header, then its records one by one, then
 * (optionally) the traces. Writers and sync consume these parts as they arrive, so an export of any
 * size runs in flat memory. Records arrive in `_id` order, as the records service lists them.
 */

/** Where a semantic name came from, by the document's priority rules. */
export type NameSource = 'service-key' | 'label' | 'key' | 'data';

/** One column of a topic: a form key and the semantic name it resolves to. */
export interface ExportedField {
  /** The opaque form key (for nested components, the full data path, e.g. "risks.severity"). */
  key: string;
  /** Semantic name, unique within the topic (see mapping for how collisions are kept apart). */
  name: string;
  source: NameSource;
  /** form-js component type (textfield, select, checklist, dynamiclist, ...); absent for data-only keys. */
  type?: string;
  label?: string;
  /** Allowed values with their labels, for select, radio and checklist. */
  options?: { value: unknown; label: string }[];
  /** For a dynamiclist: the fields of each item, keys relative to the item. */
  itemFields?: ExportedField[];
}

export interface ExportedTopic {
  revisionId: string;
  historyId: string;
  name: string;
  version: string;
  status: string;
  /** Newest revision of the topic at export time: differs from revisionId after a re-approval. */
  latestRevisionId: string;
  schema: FormSchema;
  /** Columns in schema order, then keys met only in record data (in order of first appearance). */
  fields: ExportedField[];
}

export interface ExportedRecord {
  id: string;
  name: string;
  version: string;
  /** Revision id the record belongs to. */
  topicRevisionId: string;
  /** Values by semantic name. A dynamiclist value is an array of objects keyed by item field names. */
  values: Record<string, unknown>;
  createdAt?: string;
  updatedAt?: string | null;
}

export interface ExportedTrace {
  id: string;
  source: { id: string; type: NodeType };
  target: { id: string; type: NodeType };
  relationTypes: RelationType[];
}

export interface ExportServers {
  techdoc: string;
  records: string;
  tracer: string;
}

/** Facts about the whole export, known before the first topic. */
export interface ExportHeader {
  exportedAt: string;
  servers: ExportServers;
  /** Revision ids asked for, in order. */
  revisionIds: string[];
  withTraces: boolean;
}

/** Everything a writer receives, in order: one header, per topic a topic part and its records, traces, end. */
export type ExportPart =
  | { kind: 'header'; header: ExportHeader }
  | { kind: 'topic'; topic: ExportedTopic }
  | { kind: 'record'; record: ExportedRecord }
  | { kind: 'topic-end'; topic: ExportedTopic; recordCount: number }
  | { kind: 'traces'; traces: ExportedTrace[] }
  | { kind: 'end'; warnings: string[] };

/** A format writer: receives the parts in order and writes bytes to a stream. */
export interface ExportWriter {
  /** File extension without the dot (csv, xlsx, reqif, json, jsonl). */
  readonly extension: string;
  write(part: ExportPart): Promise<void>;
  /** Optional: several parts in order, as `write` of each would take them, with fewer awaits. */
  writeParts?(parts: readonly ExportPart[]): Promise<void>;
  /** Flushes and closes; called once after the `end` part, or on failure (then the output is discarded). */
  close(): Promise<void>;
}

export const EXPORT_FORMATS = ['json', 'jsonl', 'csv', 'xlsx', 'reqif', 'needs'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
