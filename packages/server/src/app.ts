import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { authenticateApiKey } from './auth/authenticate.js';
import { Accounts } from './auth/accounts.js';
import type { ServerConfig, ServiceName } from './config.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/error-handler.js';
import { HttpError } from './http/errors.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { registerValidators } from './http/validation.js';
import { recordsRoutes } from './services/records/routes.js';
import { RecordsService } from './services/records/service.js';
import { techdocRoutes } from './services/techdoc/routes.js';
import { TechdocService } from './services/techdoc/service.js';
import { tracerRoutes } from './services/tracer/routes.js';
import { TracerService } from './services/tracer/service.js';
import type { Storage } from './storage/database.js';
import { webApp } from './webapp/index.js';

/** The service layer, independent of HTTP: the CLI, the web app and tests use it directly too. */
export interface Services {
  storage: Storage;
  accounts: Accounts;
  techdoc: TechdocService;
  records: RecordsService;
  tracer: TracerService;
}

export function createServices(storage: Storage): Services {
  const techdoc = new TechdocService(storage);
  return {
    storage,
    accounts: new Accounts(storage),
    techdoc,
    records: new RecordsService(storage, techdoc),
    tracer: new TracerService(storage),
  };
}

export interface AppOptions {
  config: Pick<ServerConfig, 'bodyLimit' | 'services' | 'logLevel'>;
  storage: Storage;
  /** Pino options or false; tests pass false. */
  logger?: FastifyServerOptions['logger'];
}

/** Builds the Fastify app from the plugins; nothing else. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, storage } = options;
  const services = createServices(storage);
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      redact: ['req.headers["x-api-key"]', 'req.headers.cookie'],
    },
    bodyLimit: config.bodyLimit,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Long id lists in query strings (up to 1000 ids) must reach validation, not die as a 431.
    // Node would refuse a request without Host with an empty 400; the hook below answers it with a detail.
    http: { maxHeaderSize: 64 * 1024, requireHostHeader: false },
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
  });

  registerValidators(app);
  registerJsonBodyParser(app);
  registerErrorHandling(app, { bodyLimit: config.bodyLimit });

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
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
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
    techdoc: () => techdocRoutes(services.techdoc),
    records: () => recordsRoutes(services.records),
    tracer: () => tracerRoutes(services.tracer),
  };
  await app.register(async (scope) => {
    // Every service request is authenticated before its body is even read.
    scope.addHook('onRequest', async (request) => {
      request.principal = await authenticateApiKey(storage, request);
    });
    for (const name of config.services) await scope.register(serviceRoutes[name]());
  });

  app.decorate('services', services);
  await app.register(webApp, { services, config });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}
