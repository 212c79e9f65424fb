import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.js';
import { MAX_OUTLINE_ENTRIES, MAX_OUTLINE_LEVEL } from './outline-rules.js';
import { OBJECT_ID_PATTERN } from './plain.js';

export {
  keptOutline,
  MAX_OUTLINE_ENTRIES,
  MAX_OUTLINE_LEVEL,
  outlineProblems,
  type OutlineEntryShape,
} from './outline-rules.js';

/**
 * RXS: a topic's document outline (`GET`/`PUT /records/outline/{knowledge_topic_history_id}`), our
 * extension of the records service: the contract lists records by `_id` and gives a record no place
 * in a document, so the order and the hierarchy of a topic's records (a ReqIF SPECIFICATION's
 * SPEC-HIERARCHY, a document's chapters) live here, one outline per topic. The topic is named by its
 * history id, so the outline stays through re-approvals, as the records do. The rules of the entries
 * are in outline-rules.ts.
 */

const historyId = (description: string) =>
  Type.String({ pattern: OBJECT_ID_PATTERN, minLength: 24, maxLength: 24, description });

export const OutlineEntry = Type.Object(
  {
    record_id: Type.String({
      pattern: OBJECT_ID_PATTERN,
      minLength: 24,
      maxLength: 24,
      description: "A record of the topic (its `_id`), under any of the topic's revisions",
    }),
    level: Type.Integer({
      minimum: 1,
      maximum: MAX_OUTLINE_LEVEL,
      description: `Its level in the document: 1 is the top; at most one below the entry before it (at most ${MAX_OUTLINE_LEVEL})`,
    }),
  },
  { additionalProperties: false },
);
export type OutlineEntry = Static<typeof OutlineEntry>;

const entries = Type.Array(OutlineEntry, {
  maxItems: MAX_OUTLINE_ENTRIES,
  description:
    'The records in document order, each at its level; the first at level 1. Records of the topic not named here come after these, by `_id`.',
});

/** `GET /records/outline/{knowledge_topic_history_id}`: no entries and nulls before the first `PUT`. */
export const RecordOutline = Type.Object({
  knowledge_topic_history_id: historyId(
    "The topic's history id (`knowledge_topic_history_id`), not a revision id",
  ),
  entries,
  updated_at: Nullable(Type.String({ description: 'When the outline was last put (ISO 8601 UTC)' })),
  updated_by: Nullable(Type.String({ description: 'Who put it last (user id)' })),
});
export type RecordOutline = Static<typeof RecordOutline>;

/** `PUT /records/outline/{knowledge_topic_history_id}`: the whole outline, replacing the one there is. */
export const RecordOutlinePut = Type.Object(
  {
    entries,
    knowledge_topic_history_id: Type.Optional(
      historyId('As read; when sent, it must be the topic of the path'),
    ),
    updated_at: Type.Optional(Nullable(Type.String({ maxLength: 40, description: 'Ignored when sent' }))),
    updated_by: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'Ignored when sent' }))),
  },
  { additionalProperties: false },
);
export type RecordOutlinePut = Static<typeof RecordOutlinePut>;
