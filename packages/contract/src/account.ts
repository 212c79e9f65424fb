import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.js';
import { PERMISSIONS, ROLES } from './auth.js';

/**
 * `GET /account` (RXS): who the calling API key acts for — its user, role and permissions, and
 * the tenant by name — so a script or the CLI can say which tenant it reaches before it writes,
 * and a document can name the tenant whose records it holds.
 */
export const Account = Type.Object({
  tenant: Type.Object({ id: Type.String(), name: Type.String() }),
  user: Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() }),
  role: Type.Union(ROLES.map((r) => Type.Literal(r))),
  /** What the role allows, in the contract's order. */
  permissions: Type.Array(Type.Union(PERMISSIONS.map((p) => Type.Literal(p)))),
  /** The key the call came with. */
  key: Type.Object({
    id: Type.String(),
    name: Type.String(),
    expires_at: Nullable(Type.String({ description: 'ISO 8601; null: no expiry' })),
  }),
});
export type Account = Static<typeof Account>;
