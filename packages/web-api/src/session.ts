import { Type, type Static } from '@sinclair/typebox';
import { RelationTypeSchema } from '@rxs/contract';
import { ExportFormatSchema, PermissionSchema, RoleSchema } from './common.js';

/** A password as sent: any length up to a bound (the strength rule is the server's, with its own message). */
export const Password = Type.String({ minLength: 1, maxLength: 1024 });

/** `POST /api/session`. */
export const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Password,
    /** Only needed when the address belongs to several tenants (see `SignInTenantChoice`). */
    tenant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

/**
 * 409 from `POST /api/session` when the address and password match users of several tenants: sign in
 * again with one of these as `tenant_id`.
 */
export const SignInTenantChoice = Type.Object({
  detail: Type.String(),
  tenants: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
});
export type SignInTenantChoice = Static<typeof SignInTenantChoice>;

/** `POST /api/account/password`: the signed-in user's own password. */
export const PasswordChangeBody = Type.Object(
  { current_password: Password, new_password: Password },
  { additionalProperties: false },
);
export type PasswordChangeBody = Static<typeof PasswordChangeBody>;

export const SessionUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  tenantId: Type.String(),
  tenantName: Type.String(),
});
export type SessionUser = Static<typeof SessionUser>;

/** `GET /api/session` and `POST /api/session`. */
export const SessionInfo = Type.Object({
  user: SessionUser,
  permissions: Type.Array(PermissionSchema),
  /** May this user create and regenerate API keys for themselves (viewers may not). */
  canCreateOwnKeys: Type.Boolean(),
  /** Send as `X-CSRF-Token` with every state-changing request. */
  csrfToken: Type.String(),
  expiresAt: Type.String(),
});
export type SessionInfo = Static<typeof SessionInfo>;

/** `GET /api/meta`: fixed vocabularies the forms offer. */
export const ApiMeta = Type.Object({
  relationTypes: Type.Array(RelationTypeSchema),
  exportFormats: Type.Array(
    Type.Object({ format: ExportFormatSchema, label: Type.String(), extension: Type.String() }),
  ),
  roles: Type.Array(RoleSchema),
  /** Shortest password the server accepts for new passwords. */
  minPasswordLength: Type.Integer(),
  /** The largest file the import takes, in bytes: the page refuses a larger one before sending it. */
  importMaxBytes: Type.Integer(),
});
export type ApiMeta = Static<typeof ApiMeta>;
