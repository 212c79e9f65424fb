import cookie from '@fastify/cookie';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Services } from '../services/index.js';
import { SERVICES, type ServerConfig } from '../config.js';
import type { WebContext } from './context.js';
import { permissionGuard, secureCookiePolicy, sessionGuard } from './guard.js';
import { WebQueries } from './queries.js';
import { accountRoutes } from './routes/accounts.js';
import { baselineRoutes } from './routes/baselines.js';
import { documentRoutes } from './routes/document.js';
import { exportRoutes } from './routes/export.js';
import { importLimitFromEnv, importRoutes } from './routes/import.js';
import { traceabilityRoutes } from './routes/traceability.js';
import { historyRoutes } from './routes/history.js';
import { recordRoutes } from './routes/records.js';
import { sessionRoutes } from './routes/session.js';
import { topicRoutes } from './routes/topics.js';
import { traceRoutes } from './routes/traces.js';
import { traceModelRoutes } from './routes/trace-model.js';
import { Sessions, type SessionLifetime } from './sessions.js';
import { DEFAULT_WEB_DIR, registerWebAppFiles } from './static.js';
import { SignInThrottle, type ThrottleOptions } from './throttle.js';
import type { RateLimits } from '../http/rate-limit.js';

export interface WebAppOptions {
  services: Services;
  config: Pick<ServerConfig, 'services'>;
  /** The built browser app (packages/web/dist); RXS_WEB_DIR overrides the default. */
  webDir?: string;
  /** Force the cookies' Secure flag on or off; by default see `secureCookiePolicy`. */
  secureCookies?: boolean;
  throttle?: ThrottleOptions;
  sessionLifetime?: SessionLifetime;
  /** The service routes' rates and tenant slots, which signed-in users' requests share. */
  rateLimits?: RateLimits;
}

/**
 * The web app: its JSON API under `/api/...` (signed in by a session cookie, CSRF-checked, calling
 * the same services as the HTTP API with the session's principal) and the built browser app at `/`.
 * Served only by a process that serves all three services, since the app uses all three.
 */
export const webApp: FastifyPluginAsync<WebAppOptions> = async (app, options) => {
  if (!SERVICES.every((name) => options.config.services.includes(name))) return;
  const { services } = options;
  const policy = secureCookiePolicy();
  const context: WebContext = {
    services,
    sessions: new Sessions(services.storage, options.sessionLifetime),
    throttle: new SignInThrottle(options.throttle),
    queries: new WebQueries(services.storage),
    // One pool for every expensive read, the service API's large histories and as-of listings too.
    exportSlots: services.history.expensiveReads.slots,
    importMaxBytes: importLimitFromEnv(),
    secureCookies: (request: FastifyRequest) => options.secureCookies ?? policy(request),
  };

  await app.register(cookie);
  await app.register(
    async (api) => {
      // The browser's own API stays out of /openapi.json, which documents the three services.
      api.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      api.addHook('onRequest', sessionGuard(context.sessions));
      // A signed-in user's requests count against the user's and the tenant's rates and wait for
      // the tenant's slots like its API keys' (sign-in itself is throttled on its own).
      api.addHook('onRequest', async (request, reply) => {
        if (request.webSession) await options.rateLimits?.authenticated(request, reply);
      });
      api.addHook('preValidation', permissionGuard);
      api.addHook('onSend', async (_request, reply) => {
        void reply.header('cache-control', reply.getHeader('cache-control') ?? 'no-store');
      });
      await api.register(sessionRoutes(context));
      await api.register(accountRoutes(context));
      await api.register(topicRoutes(context));
      await api.register(recordRoutes(context));
      await api.register(historyRoutes(context));
      await api.register(baselineRoutes(context));
      await api.register(traceRoutes(context));
      await api.register(exportRoutes(context));
      await api.register(importRoutes(context));
      await api.register(traceabilityRoutes(context));
      await api.register(documentRoutes(context));
      await api.register(traceModelRoutes(context));
    },
    { prefix: '/api' },
  );
  await registerWebAppFiles(app, options.webDir ?? process.env.RXS_WEB_DIR ?? DEFAULT_WEB_DIR);
};
