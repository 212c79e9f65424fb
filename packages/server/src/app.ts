import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { authenticateApiKey } from './auth/authenticate.js';
import type { ServerConfig, ServiceName } from './config.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/error-handler.js';
import { HttpError } from './http/errors.js';
import { resolveLimits } from './http/limits.js';
import { RateLimits } from './http/rate-limit.js';
import { registerResponseTimeout, requestTimeoutOptions } from './http/timeouts.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { registerValidators } from './http/validation.js';
import { createServices, type Services } from './services/index.js';
import { recordsRoutes } from './services/records/routes.js';
import { recordOutlineRoutes } from './services/records/outline-routes.js';
import { RecordListings } from './services/records/listing.js';
import { techdocRoutes } from './services/techdoc/routes.js';
import { accountRoutes } from './services/techdoc/account-routes.js';
import { baselinesRoutes } from './services/history/baselines-routes.js';
import { tracerRoutes } from './services/tracer/routes.js';
import type { Storage } from './storage/database.js';
import type { ListingCache } from './services/records/listing-cache.js';
import { prettyLogs, prettyStream, type LogFormat } from './logging/pretty.js';
import { webApp } from './webapp/index.js';

export interface AppOptions {
  config: Pick<ServerConfig, 'bodyLimit' | 'services' | 'logLevel' | 'limits' | 'maxRecordKeys'> &
    Partial<Pick<ServerConfig, 'logFormat'>>;
  storage: Storage;
  /** Finished listings kept on disk; without it every listing is built from the database. */
  listingCache?: ListingCache;
  /** Pino options or false; tests pass false. */
  logger?: FastifyServerOptions['logger'];
}

/** Query parameters that may carry a secret; their values never reach a log. */
const SECRET_QUERY = /([?&](?:api[_-]?key|key|token|access_token|password)=)[^&#]*/gi;

/** A URL as it may be logged: secrets in its query string replaced. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[Redacted]');
}

/**
 * Pino options: keys, cookies and secrets in URLs are redacted from every request log line. JSON
 * lines, or readable lines on a terminal (`format`, logging/pretty.ts).
 */
export function loggerOptions(level: string, format: LogFormat = 'json') {
  return {
    level,
    ...(prettyLogs(format, process.stdout) && { stream: prettyStream(process.stdout) }),
    redact: {
      paths: [
        'req.url',
        'req.headers["x-api-key"]',
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
      ],
      censor: (value: unknown, path: string[]) =>
        path[path.length - 1] === 'url' && typeof value === 'string' ? redactUrl(value) : '[Redacted]',
    },
  };
}

/** Builds the Fastify app from the plugins; nothing else. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, storage } = options;
  const services = createServices(storage, { maxRecordKeys: config.maxRecordKeys });
  const limits = resolveLimits(config.limits);
  const timeouts = requestTimeoutOptions(limits);
  const app = Fastify({
    requestTimeout: timeouts.requestTimeout,
    connectionTimeout: timeouts.connectionTimeout,
    logger: options.logger ?? loggerOptions(config.logLevel, config.logFormat),
    bodyLimit: config.bodyLimit,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Long id lists in query strings (up to 1000 ids) must reach validation, not die as a 431.
    // Node would refuse a request without Host with an empty 400; the hook below answers it with a detail.
    http: { maxHeaderSize: 64 * 1024, requireHostHeader: false, ...timeouts.http },
    return503OnClosing: true,
    frameworkErrors,
    clientErrorHandler,
  });
  // No database stores NUL in text (PostgreSQL refuses it outright): such URLs never reach a query.
  app.addHook('onRequest', async (request) => {
    if (request.raw.httpVersion === '1.1' && !request.headers.host) {
      throw new HttpError(400, 'HTTP/1.1 requests must carry a Host header.');
    }
    if (/%00/.test(request.url)) {
      throw new HttpError(422, [
        { loc: ['query'], msg: 'The URL may not contain NUL (%00) characters.', type: 'string_nul' },
      ]);
    }
  });
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
    // No response may be sniffed into another type (an uploaded-looking JSON read as HTML, say).
    void reply.header('x-content-type-options', 'nosniff');
  });

  registerValidators(app);
  registerJsonBodyParser(app);
  registerErrorHandling(app, { bodyLimit: config.bodyLimit });
  registerResponseTimeout(app, limits);

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'RXS: Records Export Service',
        version: '0.1.0',
        description: `techdoc (knowledge topics), records and tracer. Every request carries X-API-Key. Request bodies are limited to ${config.bodyLimit} bytes (413 beyond).`,
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      tags: [
        { name: 'techdoc', description: 'Knowledge topics and their revisions' },
        { name: 'records', description: 'Records of knowledge topics' },
        { name: 'tracer', description: 'Traces between records and other nodes' },
        {
          name: 'baselines',
          description: 'Named moments over knowledge topics, for exports that never change',
        },
      ],
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // Its own inline scripts by hash; nothing from elsewhere, and no site may frame it.
    staticCSP: true,
    transformStaticCSP: (csp) =>
      csp
        .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
        .replace(/ https:| validator\.swagger\.io| upgrade-insecure-requests;/g, ''),
    uiConfig: { validatorUrl: null },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await storage.db.selectFrom('tenants').select('id').limit(1).execute();
      return { status: 'ok', services: config.services };
    } catch (error) {
      return reply.code(503).send({ status: 'unavailable', detail: 'The database does not answer.' });
    }
  });

  const serviceRoutes: Record<ServiceName, () => ReturnType<typeof techdocRoutes>> = {
    techdoc: () => async (scope) => {
      await scope.register(techdocRoutes(services.techdoc, services.readAsOf));
      await scope.register(baselinesRoutes(services.baselines));
      await scope.register(accountRoutes(services.accounts));
    },
    records: () => async (scope) => {
      await scope.register(
        recordsRoutes(
          services.records,
          new RecordListings(storage, services.records, services.techdoc, options.listingCache),
          services.history,
          services.readAsOf,
          services.recordChanges,
        ),
      );
      await scope.register(recordOutlineRoutes(services.outlines));
    },
    tracer: () => tracerRoutes(services.tracer, services.readAsOf, services.traceChanges),
  };
  // One set of limits for the services and the web app: a tenant's keys and signed-in users share
  // its rate and its slots.
  const rateLimits = new RateLimits(limits);
  await app.register(async (scope) => {
    // Every service request is authenticated before its body is even read, counted against its
    // key's and tenant's limits (and failures against the address), then waits for one of its
    // tenant's slots before its body is read.
    scope.addHook('onRequest', async (request, reply) => {
      try {
        request.principal = await authenticateApiKey(storage, request);
      } catch (error) {
        rateLimits.authenticationFailed(request, error);
      }
      await rateLimits.authenticated(request, reply);
    });
    for (const name of config.services) await scope.register(serviceRoutes[name]());
  });

  app.decorate('services', services);
  await app.register(webApp, { services, config, rateLimits });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}
