import { Type, type Static } from '@sinclair/typebox';
import { AuditInfo, Nullable, ObjectId, TenantMetadata, Dictionary } from './common.js';

export const LinkedDocument = Type.Object({
  document_id: Type.Optional(Nullable(Type.String())),
  document_version: Type.Optional(Nullable(Type.String())),
  template_id: Type.Optional(Nullable(Type.String())),
  template_version: Type.Optional(Nullable(Type.String())),
});

export const RecordContext = Type.Object({
  linked_product: Type.Optional(Nullable(Type.String())),
  linked_sop: Type.Optional(Nullable(Type.String())),
  form_id: Type.Optional(Nullable(Type.String())),
  global_element_id: Type.Optional(Nullable(Type.String())),
  knowledge_unit_id: Type.Optional(Nullable(Type.String())),
  /** The KT revision id the record belongs to. */
  knowledge_unit_topic_id: Type.Optional(Nullable(Type.String())),
  linked_document: Type.Optional(Nullable(LinkedDocument)),
  group_id: Type.Optional(Nullable(Type.String())),
});
export type RecordContext = Static<typeof RecordContext>;

/** Field values keyed by opaque form keys. Value types are not fixed by the interface. */
export type RecordData = Record<string, unknown>;

/** A record as the records service returns it. */
export const ServiceRecord = Type.Object({
  _id: ObjectId,
  name: Type.String(),
  form: Dictionary(Type.Unknown()),
  version: Type.String(),
  data: Dictionary(Type.Unknown()),
  read_only: Type.Boolean(),
  metadata: TenantMetadata,
  context: RecordContext,
  audit_info: AuditInfo,
});
export type ServiceRecord = Static<typeof ServiceRecord>;

/**
 * RXS: one page of `GET /records/changes`, the changes of a revision's listing since a cursor.
 * Applying `records` (put each in place of the record with its `_id`) and then `removed` (drop
 * those ids) to the listing as it was at `since` gives the listing as it is at `cursor`.
 */
export const RecordChangesPage = Type.Object({
  /** The revision whose listing this follows. */
  revision_id: Type.String(),
  /**
   * The revision the topic's records moved to when it was re-approved since, else null: the feed of
   * this revision then reports them removed, and a client follows the topic by starting a feed of
   * that revision (without `since`).
   */
  superseded_by: Nullable(Type.String()),
  /** Pass as `since` to continue; opaque, bound to the tenant and the revision. */
  cursor: Type.String(),
  /** True when more changes wait beyond this page: ask again with `cursor` at once. */
  more: Type.Boolean(),
  /** Whether this page holds the whole listing (no `since`): what is not in it is not listed. */
  complete: Type.Boolean(),
  /** Records that joined or changed in the listing, whole, in the order of their last change. */
  records: Type.Array(ServiceRecord),
  /** Ids of records that left the listing (deleted, or moved by a re-approval), in that order too. */
  removed: Type.Array(ObjectId),
});
export type RecordChangesPage = Static<typeof RecordChangesPage>;

/** `POST /records/` body, as the reference `RecordCreate`. */
export const RecordCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 500 }),
    form: Dictionary(Type.Unknown()),
    data: Type.Optional(Nullable(Dictionary(Type.Unknown()))),
    context: RecordContext,
    auto_number: Type.Optional(Nullable(Type.Boolean())),
    read_only: Type.Optional(Nullable(Type.Boolean())),
    /** RXS: why the record is created, kept in its history. */
    change_reason: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  },
  { additionalProperties: false },
);
export type RecordCreate = Static<typeof RecordCreate>;

/** `PATCH /records/{id}` body: name and data. `version` guards against lost updates. */
export const RecordUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    data: Type.Optional(Dictionary(Type.Unknown())),
    /** When given, the update applies only if the record still has this version (else 409). */
    version: Type.Optional(Type.String()),
    /** RXS: why the record changes, kept in its history. */
    change_reason: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  },
  { additionalProperties: false },
);
export type RecordUpdate = Static<typeof RecordUpdate>;

/** Query of `GET /records/`. */
export interface RecordListQuery {
  context__knowledge_unit_topic_id?: string;
  /** Comma separated KT revision ids. */
  context__knowledge_unit_topic_id__in?: string;
  /** Comma separated record ids. */
  id__in?: string;
  /** `context.global_element_id`, exactly: the record's identity in the source it was imported from. */
  context__global_element_id?: string;
  audit_info__start_date?: string;
  audit_info__end_date?: string;
  audit_info__include_updated?: boolean;
  limit?: number;
  after?: string;
  /** RXS: the records as they were at this moment (ISO 8601 date-time). */
  as_of?: string;
  /** RXS: the ETag also covers the listed revisions themselves. */
  with_revision?: boolean;
}

/** Bumps a record version "1.0" -> "2.0"; unknown shapes restart at "1.0" after their value. */
export function nextRecordVersion(version: string): string {
  const major = Number.parseInt(version, 10);
  return Number.isFinite(major) && major >= 0 ? `${major + 1}.0` : '1.0';
}
