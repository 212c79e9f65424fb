import type { FastifyRequest } from 'fastify';
import type { Services } from '../services/index.js';
import type { Principal } from '../auth/principal.js';
import { unauthorized } from '../http/errors.js';
import type { Sessions, Session } from './sessions.js';
import type { SignInThrottle } from './throttle.js';
import type { WebQueries } from './queries.js';
import type { ExportSlots } from '../http/export-slots.js';

/** What the web API's route modules share. */
export interface WebContext {
  services: Services;
  sessions: Sessions;
  throttle: SignInThrottle;
  queries: WebQueries;
  /**
   * Exports running at once (RXS_WEB_EXPORTS): the downloads and the traceability page's reports,
   * which run the same export procedure over whole topics.
   */
  exportSlots: ExportSlots;
  /** The largest file the import takes, in bytes (RXS_WEB_IMPORT_MB). */
  importMaxBytes: number;
  /** Whether this request's cookies get the Secure flag. */
  secureCookies(request: FastifyRequest): boolean;
}

/** The session and principal of a route that the guard admitted (every non-public route). */
export function signedIn(request: FastifyRequest): { session: Session; principal: Principal } {
  if (!request.webSession || !request.principal) throw unauthorized('You are not signed in.');
  return { session: request.webSession, principal: request.principal };
}
