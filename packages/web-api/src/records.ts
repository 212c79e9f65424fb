import { Type, type Static } from '@sinclair/typebox';
import { ChangeReason, Dictionary, FormSchema, Nullable, ObjectId, ServiceRecord } from '@rxs/contract';
import { NameSourceSchema } from './common.js';

/** `GET /api/revisions/{id}/records`: one page of the revision's records, sorted and filtered. */
export const RecordTableQuery = Type.Object({
  offset: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  /** `id`, `readable-id`, `name`, `created`, `updated` or `field:<column name>`. */
  sort: Type.String({ maxLength: 300, default: 'id' }),
  dir: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' }),
  q: Type.Optional(Type.String({ maxLength: 200 })),
  filters: Type.Optional(Type.String({ maxLength: 4000, description: 'JSON object: semantic name -> text' })),
});
export type RecordTableQuery = Static<typeof RecordTableQuery>;

/** `GET /api/records/search`: records by name (or id), of one topic (history id) when `topic` is given. */
export const RecordSearchQuery = Type.Object({
  q: Type.String({ maxLength: 200 }),
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 20 }),
  topic: Type.Optional(ObjectId),
});
export type RecordSearchQuery = Static<typeof RecordSearchQuery>;

/** `DELETE /api/records/{id}`: the reason is kept on the `deleted` version of the record's history. */
export const RecordDeleteQuery = Type.Object({ change_reason: Type.Optional(ChangeReason) });
export type RecordDeleteQuery = Static<typeof RecordDeleteQuery>;

/** One column of the records table: a form key and its semantic name, as the exporter maps it. */
export const FieldColumn = Type.Object({
  key: Type.String(),
  name: Type.String(),
  source: NameSourceSchema,
  type: Type.Optional(Type.String()),
  label: Type.Optional(Type.String()),
});
export type FieldColumn = Static<typeof FieldColumn>;

export const RecordRow = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** The readable id an export derives (`REQ_001`), or null when the record has none of its own. */
  readableId: Nullable(Type.String()),
  version: Type.String(),
  createdAt: Type.String(),
  updatedAt: Nullable(Type.String()),
  /** Display text by column name. */
  values: Dictionary(Type.String()),
  /** Problems of the record against its revision's form (0: it validates; else it cannot be saved as is). */
  problems: Type.Integer(),
});
export type RecordRow = Static<typeof RecordRow>;

/** `GET /api/revisions/{id}/records`: one page of the sorted, filtered table. */
export const RecordTable = Type.Object({
  revisionId: Type.String(),
  columns: Type.Array(FieldColumn),
  /** Semantic names of the columns no record of the revision has a value in. */
  emptyColumns: Type.Array(Type.String()),
  /** Matches after filtering. */
  total: Type.Integer(),
  /** Records of the revision before filtering. */
  unfilteredTotal: Type.Integer(),
  offset: Type.Integer(),
  limit: Type.Integer(),
  rows: Type.Array(RecordRow),
});
export type RecordTable = Static<typeof RecordTable>;

/** A record's values by semantic name, in column order, as display text. */
export const DisplayValues = Type.Array(
  Type.Object({ name: Type.String(), key: Type.String(), text: Type.String() }),
);
export type DisplayValues = Static<typeof DisplayValues>;

/** `GET /api/records/{id}`. */
export const RecordDetail = Type.Object({
  record: ServiceRecord,
  topic: Nullable(
    Type.Object({
      historyId: Type.String(),
      revisionId: Type.String(),
      name: Type.String(),
      schema: FormSchema,
      /** Differs from revisionId when the topic was re-approved and the record did not move (never, normally). */
      currentRevisionId: Nullable(Type.String()),
    }),
  ),
  values: DisplayValues,
  createdBy: Nullable(Type.String()),
  updatedBy: Nullable(Type.String()),
});
export type RecordDetail = Static<typeof RecordDetail>;

/** A record found by `GET /api/records/search`, with its topic. */
export const RecordHit = Type.Object({
  id: Type.String(),
  name: Type.String(),
  revisionId: Nullable(Type.String()),
  historyId: Nullable(Type.String()),
  topicName: Nullable(Type.String()),
});
export type RecordHit = Static<typeof RecordHit>;

/** A hit of `GET /api/records/search`: with its readable id and title, to tell it from its namesakes. */
export const RecordSearchHit = Type.Object({
  ...RecordHit.properties,
  readableId: Nullable(Type.String()),
  title: Nullable(Type.String()),
});
export type RecordSearchHit = Static<typeof RecordSearchHit>;
