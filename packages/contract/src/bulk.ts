import { Type, type Static } from '@sinclair/typebox';
import { ObjectId } from './common.js';
import { MAX_BULK_RECORDS } from './plain.js';
import { RecordCreate, RecordUpdate } from './record.js';

/** Items one `POST /records/bulk` may hold. */
export { MAX_BULK_RECORDS };

/** An `Idempotency-Key` as the header takes it: 1 to 255 visible ASCII characters. */
const IdempotencyKeyText = Type.String({
  pattern: '^[\\x21-\\x7e]{1,255}$',
  description:
    "RXS: this item's own Idempotency-Key: the item is the single write it stands for (POST /records/, or PATCH /records/{_id}) under that key, so a write made before with the key, alone or in another batch, is answered from it (`replayed`) and not made again; a key used for another request is refused; a key whose record was deleted since is refused as `deleted_since`",
});

/** A create of `POST /records/bulk`: the body of `POST /records/`, and optionally its own idempotency key. */
export const BulkRecordCreate = Type.Object(
  { ...RecordCreate.properties, idempotency_key: Type.Optional(IdempotencyKeyText) },
  { additionalProperties: false, description: 'A create: what POST /records/ takes' },
);
export type BulkRecordCreate = Static<typeof BulkRecordCreate>;

/** An update of `POST /records/bulk`: the record's `_id` and the body of `PATCH /records/{id}`. */
export const BulkRecordUpdate = Type.Object(
  { _id: ObjectId, ...RecordUpdate.properties, idempotency_key: Type.Optional(IdempotencyKeyText) },
  {
    additionalProperties: false,
    description: 'An update: the record `_id` and what PATCH /records/{id} takes',
  },
);
export type BulkRecordUpdate = Static<typeof BulkRecordUpdate>;

/** One item: an update when it has an `_id`, else a create. */
export const BulkRecordItem = Type.Union([BulkRecordCreate, BulkRecordUpdate]);
export type BulkRecordItem = Static<typeof BulkRecordItem>;

/** `POST /records/bulk` body. */
export const BulkWrite = Type.Object(
  { records: Type.Array(BulkRecordItem, { maxItems: MAX_BULK_RECORDS }) },
  { additionalProperties: false },
);
export type BulkWrite = Static<typeof BulkWrite>;

/** What became of one item, in the order of the request. */
export const BulkWriteResult = Type.Object({
  _id: ObjectId,
  /** The record's version after the write. */
  version: Type.String(),
  /** True for a create, false for an update. */
  created: Type.Boolean(),
  /** True when the item's own `idempotency_key` answered it: nothing was written for it. */
  replayed: Type.Boolean(),
});
export type BulkWriteResult = Static<typeof BulkWriteResult>;

/** `POST /records/bulk` answer (200). */
export const BulkWriteAnswer = Type.Object({ records: Type.Array(BulkWriteResult) });
export type BulkWriteAnswer = Static<typeof BulkWriteAnswer>;

/** Whether an item is an update (it names its record). */
export function isBulkUpdate(item: BulkRecordItem): item is BulkRecordUpdate {
  return typeof (item as { _id?: unknown })._id === 'string';
}
