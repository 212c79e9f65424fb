import { Type, type Static } from '@sinclair/typebox';
import { AsOf, Nullable } from '@rxs/contract';

/** Records one document answer holds at most; a larger topic is cut there (see `omitted`). */
export const MAX_DOCUMENT_RECORDS = 2000;
/** About the bytes of JSON one document answer holds at most (at least one record is always shown). */
export const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

/** `GET /api/topics/{historyId}/document`. */
export const DocumentQuery = Type.Object({
  /** The topic as it was at this moment (a baseline's), else as it is now. */
  as_of: Type.Optional(AsOf),
});
export type DocumentQuery = Static<typeof DocumentQuery>;

/** A value of a record as text, under its form label; empty values are left out. */
export const DocumentField = Type.Object({ label: Type.String(), text: Type.String() });
export type DocumentField = Static<typeof DocumentField>;

/** A link of a record, named from the record's side: a trace-model role name, else the relation type. */
export const DocumentLink = Type.Object({
  name: Type.String(),
  /** The record at the other end; its readable id and title are null when it has none (or is gone). */
  recordId: Type.String(),
  historyId: Nullable(Type.String()),
  readableId: Nullable(Type.String()),
  title: Nullable(Type.String()),
  /** A record at either end changed since the link was made or last reviewed. */
  suspect: Type.Boolean(),
});
export type DocumentLink = Static<typeof DocumentLink>;

export const DocumentRecord = Type.Object({
  id: Type.String(),
  /** Heading level from the outline, 1 the top (1 for every record without an outline). */
  level: Type.Integer({ minimum: 1 }),
  /** "1", "1.1", "2", … from the levels in document order. */
  number: Type.String(),
  readableId: Nullable(Type.String()),
  title: Type.String(),
  fields: Type.Array(DocumentField),
  links: Type.Array(DocumentLink),
});
export type DocumentRecord = Static<typeof DocumentRecord>;

export const TopicDocument = Type.Object({
  historyId: Type.String(),
  name: Type.String(),
  revisionId: Type.String(),
  version: Nullable(Type.String()),
  /** The moment read (ISO 8601 UTC), or null for now. */
  asOf: Nullable(Type.String()),
  /** Whether the order comes from the topic's outline (else readable-id order). */
  outlined: Type.Boolean(),
  /** The topic's records at the moment. */
  total: Type.Integer({ minimum: 0 }),
  records: Type.Array(DocumentRecord),
  /** Records after the last one shown, left out by the bounds; the export holds them all. */
  omitted: Type.Integer({ minimum: 0 }),
});
export type TopicDocument = Static<typeof TopicDocument>;
