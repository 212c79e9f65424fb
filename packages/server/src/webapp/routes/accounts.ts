import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { roleAllows, type Role } from '@rxs/contract';
import { roleRank, type ApiKeyInfo, type User } from '../../auth/accounts.js';
import { MAX_AUDIT_PAGE } from '../../auth/audit.js';
import { clientAddressResolver, type ClientAddressOf } from '../../auth/client-address.js';
import type { Principal } from '../../auth/principal.js';
import { conflict, forbidden, unprocessable, validationItem } from '../../http/errors.js';
import {
  KeyCreateBody,
  KeyListQuery,
  UserCreateBody,
  UserPasswordBody,
  UserRoleBody,
  type ApiKeyView,
  type AuditEventView,
  type NewApiKeyView,
  type UserView,
} from '@rxs/web-api';
import { signedIn, type WebContext } from '../context.js';
import { actorOf, assertStrongPassword, canCreateOwnKeys } from './session.js';

const KeyParams = Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{16}$' }) });
const UserParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const managesKeys = (principal: Principal) => roleAllows(principal.role, 'keys:manage');

/**
 * Who may act on which key: owners and admins (`keys:manage`) on the keys of users whose role is not
 * above their own (an admin never mints, regenerates or revokes an owner's key); other users on their
 * own keys, where creating and regenerating needs a role that writes (not viewer).
 */
function assertKeyAccess(
  principal: Principal,
  keyUser: { id: string; role: Role | undefined },
  action: 'create' | 'revoke',
): void {
  const keyUserId = keyUser.id;
  if (managesKeys(principal)) {
    if (keyUser.role && roleRank(keyUser.role) > roleRank(principal.role)) {
      throw forbidden(
        `Your role "${principal.role}" may not manage the API keys of a user with the role "${keyUser.role}". Ask an owner of your tenant.`,
      );
    }
    return;
  }
  if (keyUserId !== principal.userId) {
    throw forbidden(
      'Your role may only manage your own API keys. Ask an owner or admin of your tenant for keys of other users.',
    );
  }
  if (action === 'create' && !canCreateOwnKeys(principal.role)) {
    throw forbidden(
      `Your role "${principal.role}" may not create API keys. Ask an owner or admin of your tenant to issue a key for you.`,
    );
  }
}

function assertFutureExpiry(expiresAt: string | null | undefined): void {
  if (!expiresAt) return;
  const when = Date.parse(expiresAt);
  if (Number.isNaN(when)) {
    throw unprocessable([
      validationItem(['body', 'expires_at'], 'Not a date or date-time', 'datetime_parsing'),
    ]);
  }
  if (when <= Date.now()) {
    throw unprocessable([
      validationItem(['body', 'expires_at'], 'The expiry must be in the future.', 'value_error'),
    ]);
  }
}

const keyView = (key: ApiKeyInfo): ApiKeyView => ({
  id: key.id,
  name: key.name,
  user_id: key.user_id,
  user_email: key.user_email,
  created_at: key.created_at,
  expires_at: key.expires_at,
  revoked_at: key.revoked_at,
  last_used_at: key.last_used_at,
});

const userView = ({ id, email, name, role, created_at }: User): UserView => ({
  id,
  email,
  name,
  role,
  created_at,
});

/** Settings: API keys of the signed-in user (of everyone, for owners and admins) and users and roles. */
export function accountRoutes(
  context: WebContext,
  clientAddress: ClientAddressOf = clientAddressResolver(),
): FastifyPluginAsync {
  const { accounts } = context.services;
  const actor = (request: FastifyRequest) => actorOf(request, clientAddress);
  const keyUser = async (principal: Principal, userId: string) => ({
    id: userId,
    role: await accounts.roleOf(principal.tenantId, userId),
  });
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/keys',
      {
        schema: { querystring: KeyListQuery },
      },
      async (request): Promise<ApiKeyView[]> => {
        const { principal } = signedIn(request);
        const onlyMine = request.query.mine || !managesKeys(principal);
        const keys = await accounts.listApiKeys(principal.tenantId, {
          userId: onlyMine ? principal.userId : undefined,
          includeRevoked: request.query.include_revoked,
        });
        // Newest first: the key just made is at the top.
        return keys.map(keyView).reverse();
      },
    );

    app.post(
      '/keys',
      {
        schema: { body: KeyCreateBody },
      },
      async (request, reply): Promise<NewApiKeyView> => {
        const { principal } = signedIn(request);
        const userId = request.body.user_id ?? principal.userId;
        assertKeyAccess(principal, await keyUser(principal, userId), 'create');
        if (!request.body.name.trim()) {
          throw unprocessable([validationItem(['body', 'name'], 'Give the key a name.', 'missing')]);
        }
        assertFutureExpiry(request.body.expires_at);
        const key = await accounts.createApiKey(
          principal.tenantId,
          { userId, name: request.body.name, expiresAt: request.body.expires_at ?? null },
          actor(request),
        );
        reply.code(201);
        return { ...keyView(key), key: key.key };
      },
    );

    app.post(
      '/keys/:id/regenerate',
      { schema: { params: KeyParams } },
      async (request, reply): Promise<NewApiKeyView> => {
        const { principal } = signedIn(request);
        const old = await accounts.getApiKey(principal.tenantId, request.params.id);
        assertKeyAccess(principal, await keyUser(principal, old.user_id), 'create');
        if (old.revoked_at) throw conflict('This key was revoked; create a new key instead.');
        const key = await accounts.regenerateApiKey(principal.tenantId, old.id, actor(request));
        reply.code(201);
        return { ...keyView(key), key: key.key };
      },
    );

    app.delete('/keys/:id', { schema: { params: KeyParams } }, async (request): Promise<ApiKeyView> => {
      const { principal } = signedIn(request);
      const key = await accounts.getApiKey(principal.tenantId, request.params.id);
      assertKeyAccess(principal, await keyUser(principal, key.user_id), 'revoke');
      return keyView(await accounts.revokeApiKey(principal.tenantId, key.id, actor(request)));
    });

    app.get('/users', { config: { permission: 'users:manage' } }, async (request): Promise<UserView[]> => {
      const { principal } = signedIn(request);
      return (await accounts.listUsers(principal.tenantId)).map(userView);
    });

    app.post(
      '/users',
      {
        config: { permission: 'users:manage' },
        schema: { body: UserCreateBody },
      },
      async (request, reply): Promise<UserView> => {
        const { principal } = signedIn(request);
        assertMayGrant(principal, request.body.role);
        assertStrongPassword(request.body.password, 'password');
        const user = await accounts.createUser(principal.tenantId, request.body, actor(request));
        reply.code(201);
        return userView(user);
      },
    );

    app.patch(
      '/users/:id',
      {
        config: { permission: 'users:manage' },
        schema: {
          params: UserParams,
          body: UserRoleBody,
        },
      },
      async (request): Promise<UserView> => {
        const { principal } = signedIn(request);
        const target = await accounts.getUser(principal.tenantId, request.params.id);
        if (target.id === principal.userId) {
          throw forbidden('You cannot change your own role. Ask another owner or admin.');
        }
        assertMayGrant(principal, target.role);
        assertMayGrant(principal, request.body.role);
        const user = await accounts.setRole(principal.tenantId, target.id, request.body.role, actor(request));
        return userView(user);
      },
    );

    app.post(
      '/users/:id/password',
      {
        config: { permission: 'users:manage' },
        schema: {
          params: UserParams,
          body: UserPasswordBody,
        },
      },
      async (request, reply) => {
        const { principal } = signedIn(request);
        const target = await accounts.getUser(principal.tenantId, request.params.id);
        assertMayGrant(principal, target.role);
        assertStrongPassword(request.body.password, 'password');
        await accounts.setPassword(principal.tenantId, target.id, request.body.password, actor(request));
        await context.sessions.destroyOthers(target.id);
        return reply.code(204).send();
      },
    );

    app.delete(
      '/users/:id',
      { config: { permission: 'users:manage' }, schema: { params: UserParams } },
      async (request, reply) => {
        const { principal } = signedIn(request);
        const target = await accounts.getUser(principal.tenantId, request.params.id);
        if (target.id === principal.userId) {
          throw forbidden('You cannot delete your own account while signed in with it.');
        }
        assertMayGrant(principal, target.role);
        await accounts.deleteUser(principal.tenantId, target.id, actor(request));
        return reply.code(204).send();
      },
    );

    // The security audit log: read-only (no route changes it), this tenant's events only.
    app.get(
      '/audit',
      {
        config: { permission: 'users:manage' },
        schema: {
          querystring: Type.Object({
            limit: Type.Integer({ minimum: 1, maximum: MAX_AUDIT_PAGE, default: 100 }),
            before: Type.Optional(Type.String({ pattern: '^[0-9a-f]{24}$' })),
          }),
        },
      },
      async (request): Promise<AuditEventView[]> => {
        const { principal } = signedIn(request);
        return accounts.audit.list(principal.tenantId, request.query);
      },
    );
  };
}

/** Only an owner makes or unmakes owners, so an admin cannot raise themselves above their role. */
function assertMayGrant(principal: Principal, role: Role): void {
  if (role === 'owner' && principal.role !== 'owner') {
    throw forbidden('Only an owner may grant, change or remove the owner role.');
  }
}
