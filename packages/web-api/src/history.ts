import { Type, type Static } from '@sinclair/typebox';
import { ChangeReason, FormSchema, Nullable, ServiceRecord } from '@rxs/contract';
import { ChangeChannelSchema, RecordVersionActionSchema } from './common.js';
import { DisplayValues } from './records.js';

/** `GET /api/records/{id}/history`: at most `limit` versions, older than version `before`. */
export const HistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  before: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type HistoryQuery = Static<typeof HistoryQuery>;

/** `POST /api/records/{id}/restore`: brings a deleted record back. */
export const RestoreBody = Type.Object(
  { change_reason: Type.Optional(ChangeReason) },
  { additionalProperties: false },
);
export type RestoreBody = Static<typeof RestoreBody>;

/** One value that differs between two versions of a record, by semantic name, as display text. */
export const FieldDifference = Type.Object({
  field: Type.String(),
  change: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('modified')]),
  /** Absent when added. */
  before: Type.Optional(Type.String()),
  /** Absent when removed. */
  after: Type.Optional(Type.String()),
});
export type FieldDifference = Static<typeof FieldDifference>;

/** What changed from one state of a record to another: its name and its values. */
export const RecordChanges = Type.Object({
  name: Nullable(Type.Object({ before: Type.String(), after: Type.String() })),
  fields: Type.Array(FieldDifference),
});
export type RecordChanges = Static<typeof RecordChanges>;

/** One version of a record in its history: who changed it, when, why, and what changed. */
export const RecordVersionView = Type.Object({
  n: Type.Integer(),
  action: RecordVersionActionSchema,
  at: Type.String(),
  /** The user's e-mail, else their id. */
  by: Type.String(),
  keyId: Nullable(Type.String()),
  via: ChangeChannelSchema,
  reason: Nullable(Type.String()),
  name: Type.String(),
  version: Type.String(),
  revisionId: Nullable(Type.String()),
  /** Against the version before; for the first version, every value is added. */
  changes: RecordChanges,
});
export type RecordVersionView = Static<typeof RecordVersionView>;

/** A record's topic: the revision it is under, and the topic's name. */
const RecordTopic = Type.Object({ historyId: Type.String(), revisionId: Type.String(), name: Type.String() });

/** `GET /api/records/{id}/history`: newest first; a deleted record's history stays readable. */
export const RecordHistoryView = Type.Object({
  recordId: Type.String(),
  /** The name of the newest version. */
  name: Type.String(),
  deleted: Type.Boolean(),
  topic: Nullable(RecordTopic),
  versions: Type.Array(RecordVersionView),
  /** Pass as `before` for older versions. */
  next: Nullable(Type.Integer()),
});
export type RecordHistoryView = Static<typeof RecordHistoryView>;

/** `GET /api/records/{id}/versions/{n}`: one version with the form it was filled in with. */
export const RecordVersionDetail = Type.Object({
  version: RecordVersionView,
  record: ServiceRecord,
  topic: Nullable(Type.Object({ ...RecordTopic.properties, schema: FormSchema })),
  values: DisplayValues,
});
export type RecordVersionDetail = Static<typeof RecordVersionDetail>;
