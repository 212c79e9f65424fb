import { Type, type Static, type TSchema } from '@sinclair/typebox';

import { OBJECT_ID_PATTERN } from './plain.js';
export { isObjectId, OBJECT_ID_PATTERN } from './plain.js';

export const ObjectId = Type.String({
  pattern: OBJECT_ID_PATTERN,
  minLength: 24,
  maxLength: 24,
  examples: ['69b989b54252b7481003b10a'],
});
export type ObjectId = Static<typeof ObjectId>;

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * An object with any string keys. TypeBox's default key pattern `^(.*)$` does not match line breaks,
 * and the response serializer drops keys it does not match; `[\s\S]` matches every key.
 */
export const Dictionary = <T extends TSchema>(value: T) =>
  Type.Record(Type.String({ pattern: '^[\\s\\S]*$' }), value);

export const TenantMetadata = Type.Object({ tenant_id: Type.String() });
export type TenantMetadata = Static<typeof TenantMetadata>;

export const LastActionType = Type.Union([Type.Literal('created'), Type.Literal('updated')]);
export type LastActionType = Static<typeof LastActionType>;

export const AuditInfo = Type.Object({
  user_id_created: Type.String(),
  timestamp_created: Type.String({ format: 'date-time' }),
  user_id_last_updated: Nullable(Type.String()),
  timestamp_last_updated: Nullable(Type.String({ format: 'date-time' })),
  last_action: LastActionType,
});
export type AuditInfo = Static<typeof AuditInfo>;
