/**
 * The shapes of the web app's JSON API under `/api/...`. Types only: the browser app imports this
 * file (type-only) so both sides agree on one definition.
 */
import type {
  Approval,
  ApprovalMeaning,
  ChangeChannel,
  CoverageReport,
  ExportFormat,
  FormSchema,
  ImportReport,
  KnowledgeTopicRevision,
  KnowledgeTopicType,
  NameSource,
  Permission,
  RecordVersionAction,
  RelationType,
  Role,
  ServiceRecord,
  ValidationErrorItem,
} from '@rxs/sdk';

export type {
  ImportReport,
  Approval,
  ApprovalMeaning,
  ChangeChannel,
  ExportFormat,
  FormSchema,
  KnowledgeTopicRevision,
  KnowledgeTopicType,
  Permission,
  RecordVersionAction,
  RelationType,
  Role,
  ServiceRecord,
  ValidationErrorItem,
};

/** Every error body: a sentence, or for 422 one item per problem. */
export interface ApiErrorBody {
  detail: string | ValidationErrorItem[];
}

/**
 * 409 from `POST /api/session` when the address and password match users of several tenants: sign in
 * again with one of these as `tenant_id`.
 */
export interface SignInTenantChoice {
  detail: string;
  tenants: { id: string; name: string }[];
}

/** One event of the security audit log (`GET /api/audit`, owners and admins). */
export interface AuditEventView {
  id: string;
  at: string;
  action: string;
  actor: string;
  actor_user_id: string | null;
  client_address: string | null;
  target_type: 'user' | 'key' | null;
  target_id: string | null;
  target: string | null;
  detail: string | null;
}

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  tenantId: string;
  tenantName: string;
}

/** `GET /api/session` and `POST /api/session`. */
export interface SessionInfo {
  user: SessionUser;
  permissions: Permission[];
  /** May this user create and regenerate API keys for themselves (viewers may not). */
  canCreateOwnKeys: boolean;
  /** Send as `X-CSRF-Token` with every state-changing request. */
  csrfToken: string;
  expiresAt: string;
}

/** `GET /api/meta`: fixed vocabularies the forms offer. */
export interface ApiMeta {
  relationTypes: RelationType[];
  exportFormats: { format: ExportFormat; label: string; extension: string }[];
  roles: Role[];
  /** Shortest password the server accepts for new passwords. */
  minPasswordLength: number;
  /** The largest file the import takes, in bytes: the page refuses a larger one before sending it. */
  importMaxBytes: number;
}

/** An API key as listed (the `ApiKeyInfo` of the server's Accounts, restated here for the browser). */
export interface ApiKeyView {
  id: string;
  name: string;
  user_id: string;
  user_email: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** A key just created or regenerated: `key` is shown once and never again. */
export interface NewApiKeyView extends ApiKeyView {
  key: string;
}

export interface UserView {
  id: string;
  email: string;
  name: string;
  role: Role;
  created_at: string;
}

export interface TopicSummary {
  historyId: string;
  name: string;
  type: KnowledgeTopicType;
  /** The approved revision records live under; null before the first approval. */
  currentRevisionId: string | null;
  currentVersion: string | null;
  /** An open draft, if any. */
  draftRevisionId: string | null;
  recordCount: number;
  updatedAt: string;
}

export interface TopicList {
  items: TopicSummary[];
  /** Pass as `after` for the next page. */
  next: string | null;
}

export interface RevisionSummary {
  id: string;
  version: string;
  status: 'draft' | 'approved';
  createdAt: string;
  createdBy: string | null;
  approvedAt: string | null;
  approvedBy: string | null;
  isCurrent: boolean;
  recordCount: number;
}

/** One column of the records table: a form key and its semantic name, as the exporter maps it. */
export interface FieldColumn {
  key: string;
  name: string;
  source: NameSource;
  type?: string;
  label?: string;
}

/** `GET /api/topics/{historyId}`. */
export interface TopicDetail {
  historyId: string;
  name: string;
  type: KnowledgeTopicType;
  currentRevisionId: string | null;
  draftRevisionId: string | null;
  /** The current revision (or the only draft, before the first approval), with its schema. */
  revision: KnowledgeTopicRevision;
  fields: FieldColumn[];
  /** Newest first. */
  revisions: RevisionSummary[];
  recordCount: number;
  /** Who approved the current revision, when, with what meaning and why; null before the first approval. */
  approval: Approval | null;
}

/** `POST /api/revisions/{id}/approve`. */
export interface ApprovalResult {
  revision: KnowledgeTopicRevision;
  /** The revision that was current before, when this was a re-approval. */
  previousRevisionId: string | null;
  /** Records that moved to the new revision. */
  recordsMoved: number;
}

export interface RecordRow {
  id: string;
  name: string;
  version: string;
  createdAt: string;
  updatedAt: string | null;
  /** Display text by column name. */
  values: Record<string, string>;
  /** Problems of the record against its revision's form (0: it validates; else it cannot be saved as is). */
  problems: number;
}

/** `GET /api/revisions/{id}/records`: one page of the sorted, filtered table. */
export interface RecordTable {
  revisionId: string;
  columns: FieldColumn[];
  /** Matches after filtering. */
  total: number;
  /** Records of the revision before filtering. */
  unfilteredTotal: number;
  offset: number;
  limit: number;
  rows: RecordRow[];
}

/** `GET /api/records/{id}`. */
export interface RecordDetail {
  record: ServiceRecord;
  topic: {
    historyId: string;
    revisionId: string;
    name: string;
    schema: FormSchema;
    /** Differs from revisionId when the topic was re-approved and the record did not move (never, normally). */
    currentRevisionId: string | null;
  } | null;
  /** Values by semantic name, in column order. */
  values: { name: string; key: string; text: string }[];
  createdBy: string | null;
  updatedBy: string | null;
}

export interface RecordHit {
  id: string;
  name: string;
  revisionId: string | null;
  historyId: string | null;
  topicName: string | null;
}

export interface LinkView {
  traceId: string;
  /** outgoing: this record is the trace's source. */
  direction: 'outgoing' | 'incoming';
  relationType: RelationType;
  /** A record at either end changed since the link was made or last reviewed. */
  suspect: boolean;
  node: {
    id: string;
    type: string;
    name: string | null;
    historyId: string | null;
    topicName: string | null;
    deleted: boolean;
  };
}

/** One value that differs between two versions of a record, by semantic name, as display text. */
export interface FieldDifference {
  field: string;
  change: 'added' | 'removed' | 'modified';
  /** Absent when added. */
  before?: string;
  /** Absent when removed. */
  after?: string;
}

/** What changed from one state of a record to another: its name and its values. */
export interface RecordChanges {
  name: { before: string; after: string } | null;
  fields: FieldDifference[];
}

/** One version of a record in its history: who changed it, when, why, and what changed. */
export interface RecordVersionView {
  n: number;
  action: RecordVersionAction;
  at: string;
  /** The user's e-mail, else their id. */
  by: string;
  keyId: string | null;
  via: ChangeChannel;
  reason: string | null;
  name: string;
  version: string;
  revisionId: string | null;
  /** Against the version before; for the first version, every value is added. */
  changes: RecordChanges;
}

/** `GET /api/records/{id}/history`: newest first; a deleted record's history stays readable. */
export interface RecordHistoryView {
  recordId: string;
  /** The name of the newest version. */
  name: string;
  deleted: boolean;
  topic: { historyId: string; revisionId: string; name: string } | null;
  versions: RecordVersionView[];
  /** Pass as `before` for older versions. */
  next: number | null;
}

/** `GET /api/records/{id}/versions/{n}`: one version with the form it was filled in with. */
export interface RecordVersionDetail {
  version: RecordVersionView;
  record: ServiceRecord;
  topic: { historyId: string; revisionId: string; name: string; schema: FormSchema } | null;
  /** Values by semantic name, in column order. */
  values: { name: string; key: string; text: string }[];
}

/** A topic a baseline includes: its revision id then, and the topic it belongs to. */
export interface BaselineTopic {
  revisionId: string;
  historyId: string | null;
  name: string;
  version: string | null;
}

export interface BaselineView {
  id: string;
  name: string;
  description: string;
  /** The moment the baseline names. */
  at: string;
  createdAt: string;
  /** E-mail of the creator, else their user id. */
  createdBy: string;
  topics: BaselineTopic[];
}

/** `GET /api/baselines`. */
export interface BaselineList {
  items: BaselineView[];
  /** Pass as `after` for the next page. */
  next: string | null;
}

/** A record that differs between the two sides of a comparison. */
export interface RecordDifference {
  id: string;
  name: string;
  kind: 'added' | 'removed' | 'changed';
  changes: RecordChanges | null;
}

/** One topic of a comparison of two baselines (or a baseline and now). */
export interface TopicComparison {
  historyId: string;
  name: string;
  /** added: only in the second; removed: only in the first; present: in both. */
  status: 'added' | 'removed' | 'present';
  fromRevisionId: string | null;
  toRevisionId: string | null;
  counts: { added: number; removed: number; changed: number; unchanged: number };
  /**
   * This page's differences, in record id order (values cut to 1,000 characters); `omitted` more
   * were counted but not listed (on pages before or after this one).
   */
  differences: RecordDifference[];
  omitted: number;
}

/** `GET /api/baselines/compare?from=ID&to=ID|now`. */
export interface BaselineComparison {
  from: { id: string; name: string; at: string };
  /** `id` null: now. */
  to: { id: string | null; name: string; at: string };
  topics: TopicComparison[];
  /** Differences listed at most, over all topics (fewer when they pass the answer's size limit). */
  limit: number;
  /** Differences skipped before this page (the `offset` asked for). */
  offset: number;
  /** The `offset` that lists the differences after this page; null when this page lists the last. */
  next: number | null;
}

/** A suspect link of the traceability page: its trace id (for the review) and both ends. */
export interface SuspectLinkView {
  traceId: string;
  source: { id: string; readableId: string };
  target: { id: string; readableId: string };
  relationTypes: string[];
}

/** `GET /api/traceability`: coverage per rule (as `rxs trace-report --format json`) and the suspect links. */
export interface TraceabilityView {
  report: CoverageReport;
  suspect: SuspectLinkView[];
  generatedAt: string;
}

/** `POST /api/revisions/{id}/impact`: the topic's records checked against the draft's form. */
export interface ApprovalImpact {
  checked: number;
  /** Records that would not validate (could not be saved until fixed) under the new form. */
  failing: number;
  /** The first of them, with the problems a save would answer. */
  examples: { id: string; name: string; problems: string[] }[];
}

/** `POST /api/import/check` and `POST /api/import`: the file, the topic's fields and the report. */
export interface ImportView {
  file: { name: string; size: number; format: 'csv' | 'xlsx' };
  /** The topic's fields (semantic name and form key), to map a column of the file to one. */
  fields: { name: string; key: string }[];
  report: ImportReport;
}
