import { Type, type Static } from '@sinclair/typebox';
import { Nullable, RelationTypeSchema } from '@rxs/contract';

/** `GET /api/records/{id}/links`: one direct link of a record, either way, and the record (or node) at its other end. */
export const LinkView = Type.Object({
  traceId: Type.String(),
  /** outgoing: this record is the trace's source. */
  direction: Type.Union([Type.Literal('outgoing'), Type.Literal('incoming')]),
  relationType: RelationTypeSchema,
  /** A record at either end changed since the link was made or last reviewed. */
  suspect: Type.Boolean(),
  node: Type.Object({
    id: Type.String(),
    type: Type.String(),
    name: Nullable(Type.String()),
    /** The history id of the record's topic: with the page's own topic, it finds the link's role. */
    historyId: Nullable(Type.String()),
    topicName: Nullable(Type.String()),
    /** The record's readable id and title, as its topic's table shows them (null when it has none). */
    readableId: Nullable(Type.String()),
    title: Nullable(Type.String()),
    deleted: Type.Boolean(),
  }),
});
export type LinkView = Static<typeof LinkView>;
