import type { ColumnType, Generated, Selectable } from 'kysely';

/**
 * The tables, as Kysely sees them. JSON columns hold JSON text on SQLite; on PostgreSQL records' (and
 * their versions') hold `json`, the text as written (migration 010), and the others `jsonb`.
 * Repositories read them through `json.ts` so all look the same to the services. Timestamps are
 * ISO-8601 UTC strings, which sort correctly as text on both engines.
 */
export interface Database {
  tenants: TenantTable;
  users: UserTable;
  api_keys: ApiKeyTable;
  kt_histories: KtHistoryTable;
  kt_revisions: KtRevisionTable;
  records: RecordTable;
  traces: TraceTable;
  sessions: SessionTable;
  audit_events: AuditEventTable;
  record_versions: RecordVersionTable;
  trace_events: TraceEventTable;
  kt_revision_versions: KtRevisionVersionTable;
  baselines: BaselineTable;
  baseline_events: BaselineEventTable;
  record_listing_tags: RecordListingTagTable;
  trace_listing_tags: TraceListingTagTable;
  record_listing_changes: RecordListingChangeTable;
  trace_listing_changes: TraceListingChangeTable;
  idempotency_keys: IdempotencyKeyTable;
  record_numbers: RecordNumberTable;
  trace_roles: TraceRoleTable;
  trace_model_versions: TraceModelVersionTable;
  record_outlines: RecordOutlineTable;
  record_outline_entries: RecordOutlineEntryTable;
  traceability_views: TraceabilityViewTable;
}

type Json = ColumnType<unknown, string, string>;

export interface TenantTable {
  id: string;
  name: string;
  product_history_id: string;
  knowledge_unit_history_id: string;
  created_at: string;
}

export interface UserTable {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  role: string;
  password_hash: string | null;
  created_at: string;
  deleted_at: string | null;
}

export interface ApiKeyTable {
  /** Public part of the key, shown in listings and used to find the row. */
  id: string;
  tenant_id: string;
  user_id: string;
  name: string;
  /** SHA-256 of the whole key, hex; compared in constant time. */
  hash: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface KtHistoryTable {
  id: string;
  tenant_id: string;
  /** Newest revision (an open draft, if any). */
  latest_revision_id: string;
  /** Newest approved revision, or null before the first approval. */
  current_revision_id: string | null;
  /** Bumped by every change of the history row, so concurrent approvals can detect each other. */
  lock_version: Generated<number>;
}

export interface KtRevisionTable {
  id: string;
  tenant_id: string;
  history_id: string;
  name: string;
  type: string;
  version: string;
  status: string;
  schema: Json;
  data: Json;
  product_history_id: string;
  product_version: string;
  knowledge_unit_history_id: string;
  knowledge_unit_version: string;
  source_schema_id: string | null;
  created_by: string;
  created_at: string;
  updated_by: string | null;
  updated_at: string | null;
  last_action: string;
  approved_by: string | null;
  approved_at: string | null;
  /** What the approver's signature means: `approved` or `reviewed`; null for an approval without one. */
  approval_meaning: string | null;
  approval_reason: string | null;
  /** How the approver proved who they were: `password` (web app) or `api-key`. */
  approval_signature: string | null;
}

/**
 * Rows as read. They live beside their tables so that storage's writers and the services above them
 * share one type without storage importing a service.
 */
export type RevisionRow = Selectable<KtRevisionTable>;
export type HistoryRow = Selectable<KtHistoryTable>;

export interface RecordTable {
  id: string;
  tenant_id: string;
  /** `context.knowledge_unit_topic_id`, kept as a column so listing by revision uses an index. */
  kt_revision_id: string | null;
  name: string;
  form: Json;
  version: string;
  data: Json;
  read_only: number;
  /** The rest of `context` (without knowledge_unit_topic_id). */
  context: Json;
  created_by: string;
  created_at: string;
  updated_by: string | null;
  updated_at: string | null;
  last_action: string;
}

export type RecordRow = Selectable<RecordTable>;

export interface TraceTable {
  id: string;
  tenant_id: string;
  source_id: string;
  source_type: string;
  target_id: string;
  target_type: string;
  relation_type: string;
  created_by: string;
  created_at: string;
  /**
   * The version of a record end when the trace was made or last reviewed; null for other node kinds
   * (migrations/009_suspect_traces.ts). A record end at another version makes the trace suspect.
   */
  source_version: string | null;
  target_version: string | null;
}

export type TraceRow = Selectable<TraceTable>;

export interface SessionTable {
  /** SHA-256 of the session token, hex. */
  id: string;
  user_id: string;
  tenant_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

/** The security audit log: rows are only ever inserted (see auth/audit.ts). */
export interface AuditEventTable {
  id: string;
  tenant_id: string;
  at: string;
  /** e.g. `sign-in`, `sign-in-failed`, `key-created`, `role-changed`. */
  action: string;
  /** The acting user, when a user acted (null for the command line or an unknown sign-in). */
  actor_user_id: string | null;
  /** Who acted, readable: the user's e-mail, or `rxs admin (local user)`. */
  actor: string;
  /** The client's address, from the trusted-proxy rules; null for the command line. */
  client_address: string | null;
  target_type: string | null;
  target_id: string | null;
  /** The target, readable: an e-mail or a key's name. */
  target: string | null;
  detail: string | null;
}

/** Who made a change and how: common to every history table. */
export interface ChangeActorColumns {
  /** When the change was made (ISO-8601 UTC, milliseconds). */
  at: string;
  actor_user_id: string;
  /** The API key of the call, when it came with one. */
  actor_key_id: string | null;
  /** `api-key`, `session` (web app), `local` (rxs serve --demo, rxs admin) or `upgrade` (migration 003). */
  via: string;
}

/** One immutable version of a record: appended by storage/records-write.ts with every change. */
export interface RecordVersionTable extends Omit<RecordTable, 'id'>, ChangeActorColumns {
  record_id: string;
  /** 1, 2, 3, ... per record. */
  n: number;
  /** `created`, `updated`, `deleted`, `moved` (a re-approval), `restored`. */
  action: string;
  reason: string | null;
}

/** A trace was created, became suspect, was reviewed or deleted: appended, never changed. */
export interface TraceEventTable extends Omit<TraceTable, 'id'>, ChangeActorColumns {
  id: string;
  trace_id: string;
  tenant_id: string;
  /** `created`, `suspect` (a record end changed), `reviewed` (reason: the comment) or `deleted`. */
  action: string;
  reason: string | null;
}

/** One immutable version of a KT revision (created, updated, approved). */
export interface KtRevisionVersionTable extends Omit<KtRevisionTable, 'id'>, ChangeActorColumns {
  revision_id: string;
  n: number;
  action: string;
}

/** A named, immutable point in time over one or more topics. */
export interface BaselineTable {
  id: string;
  tenant_id: string;
  name: string;
  description: string;
  at: string;
  /** JSON array of the KT revision ids the baseline covers. */
  revision_ids: Json;
  created_by: string;
  created_at: string;
  /** JSON array of `{user_id, email, meaning}`; NULL: released at its creation, without signers. */
  required_signers: Json | null;
  /** The earlier baseline this one replaces. */
  supersedes: string | null;
}

/** One step of a baseline's review, numbered from 1 (migrations/015_baseline_signatures.ts). */
export interface BaselineEventTable extends ChangeActorColumns {
  baseline_id: string;
  n: number;
  tenant_id: string;
  /** `proposed`, `signed`, `refused` or `released`. */
  action: string;
  /** The actor's e-mail at the moment of the step. */
  actor_email: string;
  /** `approved` or `reviewed` for a signature. */
  meaning: string | null;
  reason: string | null;
}

/** How often the records under a KT revision changed (migrations/004_listing_tags.ts). */
/** One counted change of a revision's listing (migrations/006_changes_feeds.ts). */
export interface RecordListingChangeTable {
  tenant_id: string;
  kt_revision_id: string;
  /** The revision's counter after the change. */
  seq: number;
  record_id: string;
}

/** One trace created or deleted in a tenant (migrations/006_changes_feeds.ts). */
export interface TraceListingChangeTable {
  tenant_id: string;
  /** The tenant's trace counter after the change. */
  seq: number;
  trace_id: string;
}

export interface RecordListingTagTable {
  tenant_id: string;
  /** '' for records under no revision. */
  kt_revision_id: string;
  changes: number;
}

/** How often a tenant's traces changed (migrations/005_trace_tags.ts). */
export interface TraceListingTagTable {
  tenant_id: string;
  changes: number;
}

/** The first answer to an `Idempotency-Key` (migrations/007_idempotency_keys.ts). */
export interface IdempotencyKeyTable {
  tenant_id: string;
  key: string;
  fingerprint: string;
  status: number;
  /** The answer's JSON text, as sent; '' when the answer is the record version named below. */
  body: string;
  created_at: string;
  /** The record version the answer is (`recordJson` of it), when kept so (migration 016). */
  record_id: string | null;
  record_n: number | null;
}

/** The last auto-number given per topic and name prefix (migrations/008_record_numbers.ts). */
export interface RecordNumberTable {
  tenant_id: string;
  history_id: string;
  prefix: string;
  last: number;
}

/** One role of a tenant's trace model, as it is now (migrations/012_trace_model.ts). */
export interface TraceRoleTable {
  tenant_id: string;
  id: string;
  /** The role's place in the model, from 0: the order of the V. */
  position: number;
  forward_name: string;
  backward_name: string;
  from_topic_history_id: string;
  to_topic_history_id: string;
  /** `from` or `to`: which end is the trace's source. */
  trace_source: string;
  relation_type: string;
}

/** One version of a tenant's trace model: the roles as the change left them, and what it changed. */
export interface TraceModelVersionTable extends ChangeActorColumns {
  tenant_id: string;
  /** 1, 2, 3, ... per tenant. */
  version: number;
  reason: string | null;
  roles: Json;
  changes: Json;
}

/** A topic's document outline: who put it last and when (migrations/013_record_outlines.ts). */
export interface RecordOutlineTable {
  tenant_id: string;
  topic_history_id: string;
  updated_at: string;
  /** The user id of the last `PUT`. */
  updated_by: string;
}

/** One entry of a topic's outline, as put: deleted records' entries stay, so a restore finds its place. */
export interface RecordOutlineEntryTable {
  tenant_id: string;
  topic_history_id: string;
  /** The entry's place in the outline, from 0. */
  position: number;
  record_id: string;
  /** 1 is the top of the document. */
  level: number;
}

/** A saved view of the traceability page (migrations/014_traceability_views.ts). */
export interface TraceabilityViewTable {
  tenant_id: string;
  /** Unique in the tenant; the view's key. */
  name: string;
  /** JSON array of trace-model role ids, in the view's order; null for a view of topics. */
  role_ids: string | null;
  /** JSON array of topic revision ids, in the view's order; null for a view of roles. */
  revision_ids: string | null;
  updated_at: string;
  /** The user id of the last save. */
  updated_by: string;
}
