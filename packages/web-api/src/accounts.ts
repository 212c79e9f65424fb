import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '@rxs/contract';
import { RoleSchema } from './common.js';
import { Password } from './session.js';

/** `GET /api/keys`: revoked keys too, and only the signed-in user's (owners and admins see everyone's). */
export const KeyListQuery = Type.Object({
  include_revoked: Type.Boolean({ default: false }),
  mine: Type.Boolean({ default: false }),
});
export type KeyListQuery = Static<typeof KeyListQuery>;

/** `POST /api/keys`: a new key for the signed-in user, or for `user_id` (owners and admins). */
export const KeyCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    expires_at: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type KeyCreateBody = Static<typeof KeyCreateBody>;

/** An API key as listed (the `ApiKeyInfo` of the server's Accounts, without what stays on the server). */
export const ApiKeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  user_id: Type.String(),
  user_email: Type.String(),
  created_at: Type.String(),
  expires_at: Nullable(Type.String()),
  revoked_at: Nullable(Type.String()),
  last_used_at: Nullable(Type.String()),
});
export type ApiKeyView = Static<typeof ApiKeyView>;

/** A key just created or regenerated: `key` is shown once and never again. */
export const NewApiKeyView = Type.Object({ ...ApiKeyView.properties, key: Type.String() });
export type NewApiKeyView = Static<typeof NewApiKeyView>;

/** `POST /api/users`. */
export const UserCreateBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    role: RoleSchema,
    password: Password,
  },
  { additionalProperties: false },
);
export type UserCreateBody = Static<typeof UserCreateBody>;

/** `PATCH /api/users/{id}`. */
export const UserRoleBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });
export type UserRoleBody = Static<typeof UserRoleBody>;

/** `POST /api/users/{id}/password`: a new password set by an owner or admin. */
export const UserPasswordBody = Type.Object({ password: Password }, { additionalProperties: false });
export type UserPasswordBody = Static<typeof UserPasswordBody>;

export const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  created_at: Type.String(),
});
export type UserView = Static<typeof UserView>;

/** One event of the security audit log (`GET /api/audit`, owners and admins). */
export const AuditEventView = Type.Object({
  id: Type.String(),
  at: Type.String(),
  action: Type.String(),
  actor: Type.String(),
  actor_user_id: Nullable(Type.String()),
  client_address: Nullable(Type.String()),
  target_type: Nullable(Type.Union([Type.Literal('user'), Type.Literal('key')])),
  target_id: Nullable(Type.String()),
  target: Nullable(Type.String()),
  detail: Nullable(Type.String()),
});
export type AuditEventView = Static<typeof AuditEventView>;
