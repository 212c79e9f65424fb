import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { PERMISSIONS, RELATION_TYPES, ROLES, roleAllows, type Role } from '@rxs/contract';
import { EXPORT_FORMATS, type ExportFormat } from '@rxs/exchange/export';
import type { AuditActor } from '../../auth/audit.js';
import { clientAddressResolver, type ClientAddressOf } from '../../auth/client-address.js';
import { verifyPassword } from '../../auth/passwords.js';
import { HttpError, unauthorized, unprocessable, validationItem } from '../../http/errors.js';
import {
  PasswordChangeBody,
  SignInBody,
  type ApiMeta,
  type SessionInfo,
  type SignInTenantChoice,
} from '@rxs/web-api';
import { signedIn, type WebContext } from '../context.js';
import { clearSessionCookie, setSessionCookie } from '../guard.js';
import type { Session } from '../sessions.js';
import { signInThrottleKeys, type SignInThrottle } from '../throttle.js';

export const MIN_PASSWORD_LENGTH = 10;

const FORMAT_LABELS: Record<ExportFormat, { label: string; extension: string }> = {
  csv: { label: 'CSV', extension: 'csv' },
  xlsx: { label: 'Excel (XLSX)', extension: 'xlsx' },
  reqif: { label: 'ReqIF', extension: 'reqif' },
  reqifz: { label: 'ReqIF archive (.reqifz)', extension: 'reqifz' },
  needs: { label: 'Sphinx-Needs JSON', extension: 'json' },
  json: { label: 'JSON', extension: 'json' },
  jsonl: { label: 'JSON Lines', extension: 'jsonl' },
};

/** Most asked-for first. */
const FORMAT_ORDER: ExportFormat[] = ['csv', 'xlsx', 'reqif', 'reqifz', 'needs', 'json', 'jsonl'];

/** Viewers only read; their keys are issued by an owner or admin. */
export function canCreateOwnKeys(role: Role): boolean {
  return role !== 'viewer';
}

export async function sessionInfo(context: WebContext, session: Session): Promise<SessionInfo> {
  const tenant = await context.services.accounts.getTenant(session.tenantId);
  return {
    user: {
      id: session.userId,
      email: session.email,
      name: session.name,
      role: session.role,
      tenantId: session.tenantId,
      tenantName: tenant.name,
    },
    permissions: PERMISSIONS.filter((p) => roleAllows(session.role, p)),
    canCreateOwnKeys: canCreateOwnKeys(session.role),
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
  };
}

export function assertStrongPassword(password: string, field: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw unprocessable([
      validationItem(
        ['body', field],
        `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`,
        'string_too_short',
      ),
    ]);
  }
}

/** The signed-in user acting from this request's client, for the audit log. */
export function actorOf(request: FastifyRequest, clientAddress: ClientAddressOf): AuditActor {
  const { session } = signedIn(request);
  return { userId: session.userId, label: session.email, address: clientAddress(request) };
}

/** Sign-in, sign-out, the current session, the signed-in user's password, and fixed vocabularies. */
export function sessionRoutes(
  context: WebContext,
  clientAddress: ClientAddressOf = clientAddressResolver(),
): FastifyPluginAsync {
  const { services, sessions, throttle } = context;
  const { accounts } = services;
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.post(
      '/session',
      {
        config: { public: true },
        schema: { body: SignInBody },
      },
      async (request, reply): Promise<SessionInfo | SignInTenantChoice> => {
        const email = request.body.email.trim().toLowerCase();
        const client = clientAddress(request);
        const { pair, keys } = signInThrottleKeys(email, client);
        refuseWhileThrottled(throttle, keys, reply, 'failed sign-ins from your address');
        // Users are per tenant: the password decides which of the address's users this is.
        const candidates = await accounts.signInCandidates(email, request.body.tenant_id);
        const matching = [];
        // verifyPassword costs the same for a missing user, so the answer time reveals nothing.
        if (candidates.length === 0) await verifyPassword(request.body.password, null);
        for (const candidate of candidates) {
          if (await verifyPassword(request.body.password, candidate.password_hash)) matching.push(candidate);
        }
        if (matching.length === 0) {
          throttle.fail(keys.map((k) => k.key));
          for (const candidate of candidates) {
            await accounts.audit.record(
              candidate.tenant_id,
              { userId: null, label: email, address: client },
              {
                action: 'sign-in-failed',
                target: { type: 'user', id: candidate.id, label: email },
                detail: 'wrong password',
              },
            );
          }
          throw unauthorized('The e-mail address or the password is wrong.');
        }
        throttle.succeed(pair);
        if (matching.length > 1) {
          // Only someone who knows the password learns the tenants' names.
          return reply.code(409).send({
            detail: 'This address belongs to several tenants. Choose the tenant to sign in to.',
            tenants: matching.map((m) => ({ id: m.tenant_id, name: m.tenant_name })),
          } satisfies SignInTenantChoice);
        }
        const user = matching[0]!;
        const { token, session } = await sessions.create(user);
        await accounts.audit.record(
          user.tenant_id,
          { userId: user.id, label: user.email, address: client },
          { action: 'sign-in', target: { type: 'user', id: user.id, label: user.email } },
        );
        setSessionCookie(reply, token, context.secureCookies(request));
        return sessionInfo(context, session);
      },
    );

    app.get('/session', async (request): Promise<SessionInfo> => {
      return sessionInfo(context, signedIn(request).session);
    });

    // Whether this browser is signed in, asked by the web app as it starts: no session is an answer
    // here (204), not a failure, so the sign-in page logs no failed request.
    app.get(
      '/session/probe',
      { config: { public: true } },
      async (request, reply): Promise<SessionInfo | undefined> => {
        if (!request.webSession) return reply.code(204).send();
        return sessionInfo(context, request.webSession);
      },
    );

    app.delete('/session', async (request, reply) => {
      await sessions.destroy(signedIn(request).session.id);
      clearSessionCookie(reply, context.secureCookies(request));
      return reply.code(204).send();
    });

    app.post(
      '/account/password',
      {
        schema: { body: PasswordChangeBody },
      },
      async (request, reply) => {
        const { session, principal } = signedIn(request);
        if (
          !(await confirmOwnPassword(context, request, reply, request.body.current_password, clientAddress))
        ) {
          throw unprocessable([
            validationItem(['body', 'current_password'], 'The current password is wrong.', 'value_error'),
          ]);
        }
        assertStrongPassword(request.body.new_password, 'new_password');
        await accounts.setPassword(
          principal.tenantId,
          principal.userId,
          request.body.new_password,
          actorOf(request, clientAddress),
        );
        // Anyone signed in elsewhere with the old password is signed out.
        await sessions.destroyOthers(principal.userId, session.id);
        return reply.code(204).send();
      },
    );

    app.get('/meta', { config: { public: true } }, async (): Promise<ApiMeta> => {
      return {
        relationTypes: [...RELATION_TYPES],
        exportFormats: FORMAT_ORDER.filter((f) => EXPORT_FORMATS.includes(f)).map((format) => ({
          format,
          ...FORMAT_LABELS[format],
        })),
        roles: [...ROLES],
        minPasswordLength: MIN_PASSWORD_LENGTH,
        importMaxBytes: context.importMaxBytes,
      };
    });
  };
}

/**
 * Whether `password` is the signed-in user's own. A stolen session must not become a way to guess
 * the password, so wrong ones count against the sign-in throttle, and while it makes the user wait
 * the answer is a 429 before anything is hashed.
 */
export async function confirmOwnPassword(
  context: WebContext,
  request: FastifyRequest,
  reply: FastifyReply,
  password: string,
  clientAddress: ClientAddressOf,
): Promise<boolean> {
  const { session, principal } = signedIn(request);
  const { keys } = signInThrottleKeys(session.email, clientAddress(request));
  refuseWhileThrottled(context.throttle, keys, reply, 'wrong passwords');
  const hash = await context.services.accounts.passwordHashOf(principal.tenantId, principal.userId);
  if (await verifyPassword(password, hash)) return true;
  context.throttle.fail(keys.map((k) => k.key));
  return false;
}

/** 429 with Retry-After while any of the keys must wait; before any password is hashed. */
function refuseWhileThrottled(
  throttle: SignInThrottle,
  keys: { key: string; freeFailures?: number }[],
  reply: FastifyReply,
  what: string,
): void {
  const wait = throttle.waitFor(keys);
  if (wait === 0) return;
  const seconds = Math.ceil(wait / 1000);
  void reply.header('retry-after', String(seconds));
  throw new HttpError(429, `Too many ${what}. Try again in ${seconds} seconds.`);
}
