import type { FormSchema } from '@rxs/contract';
import type { NodeType, OutlineEntryShape, RelationType, TraceRole } from '@rxs/contract';
import type { ExportedField, ExportedRecord } from '../mapping/model.js';

export type { ExportedField, ExportedRecord, NameSource } from '../mapping/model.js';

/**
 * The export as a stream of parts: for each topic a header, then its records one by one, then
 * (optionally) the traces. Writers and sync consume these parts as they arrive, so an export of any
 * size runs in flat memory. Records arrive in `_id` order, as the records service lists them.
 */

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
  /** How requirements tools see this topic: from the mapping file, else the defaults. */
  presentation: TopicPresentation;
  /** Who approved the revision, when and what it means (absent for a draft, or before the moment exported). */
  approval?: TopicApproval;
}

/** An approval as exports carry it (JSON topic entry, ReqIF header comment, XLSX Export sheet). */
export interface TopicApproval {
  /** User id of the approver. */
  by: string;
  byEmail: string | null;
  at: string;
  /** `approved` or `reviewed`. */
  meaning: string;
  reason: string | null;
  /** How the approver signed: `password` (web app), `api-key`, or `none` (before signatures existed). */
  signature: string;
}

/**
 * How one topic appears in requirements tools, set per topic by a mapping file (see
 * `export/mapping-file.ts`); without one, defaults derived from the topic's name and fields.
 */
export interface TopicPresentation {
  /** Sphinx-Needs need type (e.g. `req`, `test`): a lower-case identifier. */
  needType: string;
  /** Prefix of identifiers made up for records with no readable id of their own (e.g. `REQ`). */
  idPrefix: string;
  /** Name of the ReqIF SPEC-OBJECT-TYPE of the topic's records. */
  reqifTypeName: string;
  /** Semantic names of the fields that give a record's title, description and status, if any. */
  titleField?: string;
  descriptionField?: string;
  statusField?: string;
  /** The Sphinx document its needs are shown in (Sphinx-Needs `docname`), when a mapping file names one. */
  docname?: string;
}

/**
 * The name of the links from records of one topic to records of another (e.g. System Requirements
 * -> Verification Tests = `verifies`): a Sphinx-Needs extra link type and a ReqIF relation type.
 */
export interface LinkType {
  /** Identifier of the link type (Sphinx-Needs option name, ReqIF SPEC-RELATION-TYPE name). */
  name: string;
  /** How the reverse direction reads (Sphinx-Needs `incoming`), e.g. `verified by`. */
  incoming: string;
  /** History ids of the topics at the source and target ends. */
  sourceTopicHistoryId: string;
  targetTopicHistoryId: string;
}

/**
 * A topic's document outline (contract/outline.ts) as the service has it now: its records in
 * document order with their levels (the records still arrive in `_id` order). ReqIF nests its
 * SPEC-HIERARCHY by it; other formats keep the record order.
 */
export interface ExportedOutline {
  entries: readonly OutlineEntryShape[];
  /** When it was last put (ISO 8601): an export of an earlier moment cannot use it. */
  updatedAt: string | null;
}

/** Told a record's row as an export writer writes it: its length in bytes (`WriterOptions.onRow`). */
export type RowObserver = (record: ExportedRecord, bytes: number) => void;

/** One end of a trace; `readableId` is set when the end is a record of this export. */
export interface TraceEnd {
  id: string;
  type: NodeType;
  readableId?: string;
}

export interface ExportedTrace {
  id: string;
  source: TraceEnd;
  target: TraceEnd;
  relationTypes: RelationType[];
  /** The named link type of this pair of topics (from the mapping file), when one is set. */
  linkType?: string;
  /**
   * The tenant's trace model role the trace names (its forward name, as it reads from the record
   * of the role's `from` topic), when both ends are exported records and a role matches their
   * topics and one of the relation types (the first, in `relationTypes` order). Absent with
   * `linksBy: 'relation-type'` or without a model.
   */
  role?: string;
  /** That role's id: the key of `roles` in the traces part. */
  roleId?: string;
  /**
   * Suspect: a record at either end changed since the trace was made or last reviewed (the answer's
   * `outdated`), so the link needs a look before it counts as evidence.
   */
  suspect: boolean;
}

export interface ExportServers {
  techdoc: string;
  records: string;
  tracer: string;
}

/** Facts about the whole export, known before the first topic. */
export interface ExportHeader {
  /** When the export was taken; for an export as of a moment, that moment (so it reproduces byte for byte). */
  exportedAt: string;
  /**
   * Set when the export reads the state at a past moment (`--as-of`, `--baseline`). Writers leave
   * it out of their files: such an export must equal, byte for byte, the one taken at that moment.
   */
  asOf?: string;
  servers: ExportServers;
  /** Revision ids asked for, in order. */
  revisionIds: string[];
  withTraces: boolean;
}

/** Everything a writer receives, in order: one header, per topic a topic part and its records, traces, end. */
export type ExportPart =
  | { kind: 'header'; header: ExportHeader }
  | {
      kind: 'topic';
      topic: ExportedTopic;
      /** The topic's document outline, when it has one. */
      outline?: ExportedOutline;
    }
  | { kind: 'record'; record: ExportedRecord }
  | { kind: 'topic-end'; topic: ExportedTopic; recordCount: number }
  | {
      kind: 'traces';
      traces: ExportedTrace[];
      /** The named link types the traces use (from the mapping file); empty without one. */
      linkTypes: LinkType[];
      /**
       * Every link the mapping file names between two topics of this export, used by a trace or
       * not: the rules of a traceability report (a link no trace follows is 0% covered, not absent).
       */
      mappedLinkTypes?: LinkType[];
      /** The trace model's roles the traces name (`ExportedTrace.roleId`), in the model's order. */
      roles?: TraceRole[];
    }
  | { kind: 'end'; warnings: string[] };

/** A format writer: receives the parts in order and writes bytes to a stream. */
export interface ExportWriter {
  /** File extension without the dot (csv, xlsx, reqif, reqifz, json, jsonl). */
  readonly extension: string;
  write(part: ExportPart): Promise<void>;
  /** Optional: several parts in order, as `write` of each would take them, with fewer awaits. */
  writeParts?(parts: readonly ExportPart[]): Promise<void>;
  /** Flushes and closes; called once after the `end` part, or on failure (then the output is discarded). */
  close(): Promise<void>;
  /**
   * Optional: what the writer had to change to fit a value into its format (a value cut, a
   * character dropped), one sentence each naming the record and field; complete once `close` resolved.
   */
  readonly warnings?: readonly string[];
}

/**
 * How exports name links: `role` by the tenant's trace model where a role matches (the contract
 * relation type stays beside it), `relation-type` by the relation type alone, as before models.
 */
export const LINKS_BY = ['role', 'relation-type'] as const;
export type LinksBy = (typeof LINKS_BY)[number];

export const EXPORT_FORMATS = ['json', 'jsonl', 'csv', 'xlsx', 'reqif', 'reqifz', 'needs'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
