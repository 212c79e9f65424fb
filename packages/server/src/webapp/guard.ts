import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Permission } from '@rxs/contract';
import { requirePermission } from '../auth/principal.js';
import { forbidden, unauthorized } from '../http/errors.js';
import { csrfTokenMatches, type Session, type Sessions } from './sessions.js';

export const SESSION_COOKIE = 'rxs_session';
export const CSRF_HEADER = 'x-csrf-token';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in browser session, on the web app's `/api/...` routes. */
    webSession?: Session;
  }
  interface FastifyContextConfig {
    /** A web API route that needs no session (sign-in, the fixed vocabularies). */
    public?: boolean;
    /** The permission a web API route needs; checked before the body is validated. */
    permission?: Permission | Permission[];
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether cookies get the Secure flag. Forced by RXS_SECURE_COOKIES (1/0), implied by an https
 * RXS_PUBLIC_URL (a TLS-terminating proxy in front), else whenever the request itself is https.
 * On plain-http localhost the flag stays off, or browsers would drop the cookie.
 */
export function secureCookiePolicy(
  env: NodeJS.ProcessEnv = process.env,
): (request: FastifyRequest) => boolean {
  const forced = env.RXS_SECURE_COOKIES?.trim().toLowerCase();
  if (forced === '1' || forced === 'true') return () => true;
  if (forced === '0' || forced === 'false') return () => false;
  if (env.RXS_PUBLIC_URL?.startsWith('https://')) return () => true;
  return (request) => request.protocol === 'https';
}

export function setSessionCookie(reply: FastifyReply, token: string, secure: boolean): void {
  // A browser-session cookie: closing the browser signs out; the server ends idle sessions too.
  void reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure, path: '/' });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  void reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure, path: '/' });
}

/**
 * Refuses state-changing requests that another site made the browser send. SameSite=Strict
 * already keeps the cookie off them; checking Origin and Sec-Fetch-Site also covers sign-in,
 * which has no session yet.
 */
function assertSameOrigin(request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') {
    throw forbidden('Cross-site requests to the web API are refused.');
  }
  const origin = request.headers.origin;
  if (origin && origin !== 'null' && origin !== `${request.protocol}://${request.host}`) {
    throw forbidden(`Requests from ${origin} to the web API are refused: use the web app's own address.`);
  }
  if (origin === 'null') throw forbidden('Requests from an opaque origin to the web API are refused.');
}

/**
 * The `onRequest` hook of `/api/...`: resolves the session cookie to a principal and, on every
 * state-changing request, requires the session's CSRF token in `X-CSRF-Token`.
 */
export function sessionGuard(sessions: Sessions) {
  return async (request: FastifyRequest): Promise<void> => {
    const unsafe = !SAFE_METHODS.has(request.method);
    if (unsafe) assertSameOrigin(request);
    const session = await sessions.resolve(request.cookies[SESSION_COOKIE]);
    if (session) {
      request.webSession = session;
      request.principal = { tenantId: session.tenantId, userId: session.userId, role: session.role };
    }
    if (request.routeOptions.config.public) return;
    if (!session) throw unauthorized('You are not signed in, or your session has ended. Sign in again.');
    if (unsafe) {
      const header = request.headers[CSRF_HEADER];
      const token = Array.isArray(header) ? header[0] : header;
      if (!csrfTokenMatches(token, session.csrfToken)) {
        throw forbidden(
          'The CSRF token is missing or does not match your session. Reload the page and try again.',
        );
      }
    }
  };
}

/**
 * The `preValidation` hook of `/api/...`: a role that may not do something learns that (403)
 * before anything about its request body (422).
 */
export async function permissionGuard(request: FastifyRequest): Promise<void> {
  const needed = request.routeOptions.config.permission;
  if (!needed || !request.principal) return;
  for (const permission of Array.isArray(needed) ? needed : [needed]) {
    requirePermission(request.principal, permission);
  }
}
