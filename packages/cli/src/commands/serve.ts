import { join } from 'node:path';
import { Command, Option } from 'commander';
import {
  configFromEnv,
  DEFAULT_LIMITS,
  DEFAULT_LISTING_CACHE_MB,
  LIMIT_ENV,
  parseListingCacheMb,
  parseLimit,
  parseServices,
  SERVICES,
  type ServerConfig,
  type ServerLimits,
} from '@rxs/server/config';
import { UserError } from '../errors.js';
import { addStorageOptions } from './storage-options.js';

interface ServeOptions {
  host: string;
  port: string;
  dataDir: string;
  database?: string;
  only?: string;
  demo?: boolean;
  logLevel: string;
  logFormat: 'json' | 'pretty' | 'auto';
  bodyLimit: string;
  requestTimeout?: string;
  headersTimeout?: string;
  idleTimeout?: string;
  responseTimeout?: string;
  rateLimit?: string;
  rateBurst?: string;
  tenantRateLimit?: string;
  tenantRateBurst?: string;
  anonymousRateLimit?: string;
  rateWindow?: string;
  concurrentListings?: string;
  tenantInFlight?: string;
  tenantQueue?: string;
  listingCacheMb?: string;
}

/** The flag of each limit of `ServerLimits`, with its help text; the environment variable and default follow. */
const LIMIT_FLAGS: [keyof ServerLimits, keyof ServeOptions, string, string][] = [
  [
    'requestTimeoutMs',
    'requestTimeout',
    '--request-timeout <ms>',
    'time for a whole request to arrive, 408 beyond',
  ],
  [
    'headersTimeoutMs',
    'headersTimeout',
    '--headers-timeout <ms>',
    'time for the request headers to arrive, 408 beyond',
  ],
  ['idleTimeoutMs', 'idleTimeout', '--idle-timeout <ms>', 'a silent connection is closed after this'],
  [
    'responseTimeoutMs',
    'responseTimeout',
    '--response-timeout <ms>',
    'a response not sent within this is cut',
  ],
  [
    'rateLimit',
    'rateLimit',
    '--rate-limit <n>',
    'requests per API key per window once its burst is spent, 429 beyond',
  ],
  ['rateBurst', 'rateBurst', '--rate-burst <n>', 'requests one API key may send at once'],
  [
    'tenantRateLimit',
    'tenantRateLimit',
    '--tenant-rate-limit <n>',
    'requests per tenant (all its keys) per window once its burst is spent, 429 beyond',
  ],
  ['tenantRateBurst', 'tenantRateBurst', '--tenant-rate-burst <n>', 'requests one tenant may send at once'],
  [
    'anonymousRateLimit',
    'anonymousRateLimit',
    '--anonymous-rate-limit <n>',
    'failed authentications per client address per window, 429 beyond',
  ],
  ['rateWindowMs', 'rateWindow', '--rate-window <ms>', "the rate limits' window"],
  [
    'concurrentListings',
    'concurrentListings',
    '--concurrent-listings <n>',
    'full listings streaming at once per API key, 429 beyond',
  ],
  [
    'tenantInFlight',
    'tenantInFlight',
    '--tenant-in-flight <n>',
    "requests of one tenant handled at once (full listings apart); the rest wait in the tenant's queue",
  ],
  [
    'tenantQueue',
    'tenantQueue',
    '--tenant-queue <n>',
    'requests of one tenant waiting for a slot, 429 beyond',
  ],
];

export function serveCommand(): Command {
  const env = configFromEnv();
  const command = new Command('serve')
    .description('Start techdoc, records and tracer on one origin (embedded SQLite by default)')
    .option('--host <host>', 'address to listen on (env RXS_HOST)', env.host)
    .option('--port <port>', 'port to listen on, 0 for any free port (env RXS_PORT)', String(env.port))
    .addOption(
      new Option('--only <service>', 'serve one service alone (env RXS_SERVICES)').choices([...SERVICES]),
    )
    .option('--demo', 'seed a demo tenant once (from the reference samples) and print its ids and API keys')
    .option(
      '--log-level <level>',
      'pino log level: fatal, error, warn, info, debug (env RXS_LOG_LEVEL)',
      env.logLevel,
    )
    .addOption(
      new Option(
        '--log-format <format>',
        'log lines as JSON, readable (pretty), or readable on a terminal and JSON otherwise (env RXS_LOG_FORMAT)',
      )
        .choices(['json', 'pretty', 'auto'])
        .default(env.logFormat ?? 'auto'),
    )
    .option(
      '--body-limit <bytes>',
      'largest request body in bytes; larger is 413 (env RXS_BODY_LIMIT)',
      String(env.bodyLimit),
    )
    .option(
      '--listing-cache-mb <mb>',
      `megabytes of finished listings kept on disk under <data-dir>/listing-cache, 0 for none (env RXS_LISTING_CACHE_MB, default ${DEFAULT_LISTING_CACHE_MB})`,
    )
    .addHelpText(
      'after',
      `
Limits (0 switches one off): ${LIMIT_FLAGS.map(([, , flag]) => flag.split(' ')[0]).join(', ')}.`,
    )
    .addHelpText(
      'after',
      `
Examples:
  rxs serve --demo                       demo tenant on ./rxs-data/rxs.db, http://127.0.0.1:8080
  rxs serve --port 9000 --data-dir /var/lib/rxs
  rxs serve --only records --port 8082   the records service alone`,
    );
  for (const [key, , flag, help] of LIMIT_FLAGS) {
    command.option(flag, `${help} (env ${LIMIT_ENV[key]}, default ${DEFAULT_LIMITS[key]})`);
  }
  addStorageOptions(command);
  return command.action(async (options: ServeOptions) => {
    const port = Number(options.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UserError(`--port must be 0..65535, got "${options.port}".`);
    const config: ServerConfig = {
      ...env,
      host: options.host,
      port,
      dataDir: options.dataDir,
      databaseUrl: options.database,
      services: options.only ? parseServices(options.only) : env.services,
      logLevel: options.logLevel,
      logFormat: options.logFormat,
      bodyLimit: Number(options.bodyLimit),
      limits: { ...env.limits, ...limitsFromFlags(options) },
      listingCacheMb: listingCacheMbOf(options.listingCacheMb) ?? env.listingCacheMb,
    };
    const { closeOnSignals, DEMO_KEY_FILE, seedDemo, startServer } = await import('@rxs/server');
    let server;
    try {
      server = await startServer(config);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new UserError(
          `Port ${port} on ${options.host} is in use. Stop the other process or pass --port.`,
        );
      throw error;
    }
    closeOnSignals(server, (message) => process.stderr.write(`rxs: ${message}\n`));
    const lines = [
      `RXS is running at ${server.url} (services: ${config.services.join(', ')})`,
      `  techdoc  ${server.url}   records  ${server.url}   tracer  ${server.url}`,
      `  API reference ${server.url}/docs   OpenAPI ${server.url}/openapi.json   database ${server.storage.location}`,
    ];
    if (options.demo) {
      let demo;
      try {
        demo = await seedDemo(server.app.services, {
          dataDir: config.dataDir,
          baseUrl: server.url,
          vModel: true,
        });
      } catch (error) {
        // A server without its demo is not what was asked for: stop it, so the command fails.
        await server.close().catch(() => undefined);
        throw new UserError(
          `Seeding the demo in ${config.dataDir} failed: ${(error as Error).message.replace(/\.?$/, '.')} Run the command again: a seed cut short is discarded and redone.`,
        );
      }
      const requirements = demo.tenant.topics.systemRequirements!;
      const keyFile = join(config.dataDir, DEMO_KEY_FILE);
      lines.push(
        '',
        `Demo tenant "${demo.tenant.name}" (all ids and keys: ${config.dataDir}/demo.json)`,
        `  System Requirements: current revision ${requirements.currentRevisionId}, old revision ${requirements.oldRevisionIds[0]}, history ${requirements.historyId}`,
        `  Verification Tests:  current revision ${demo.tenant.topics.verificationTests!.currentRevisionId}`,
        `  API key (owner): ${demo.tenant.users.owner.apiKey}`,
        `  Web sign-in: ${demo.tenant.users.owner.email} / ${demo.tenant.users.owner.password}`,
        '',
        'Try:',
        `  curl -H "X-API-Key: $(cat ${keyFile})" "${server.url}/records/?context__knowledge_unit_topic_id=${requirements.currentRevisionId}"`,
        `  npx rxs export --url ${server.url} --api-key-file ${keyFile} --kt ${requirements.currentRevisionId} --traces --format csv --out requirements.csv`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  });
}

/** --listing-cache-mb, checked like its environment variable. */
function listingCacheMbOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseListingCacheMb(text);
  } catch (error) {
    throw new UserError((error as Error).message.replace('RXS_LISTING_CACHE_MB', '--listing-cache-mb'));
  }
}

/** Limits given as flags (they win over the environment's). */
function limitsFromFlags(options: ServeOptions): Partial<ServerLimits> {
  const limits: Partial<ServerLimits> = {};
  for (const [key, option, flag] of LIMIT_FLAGS) {
    const text = options[option];
    if (typeof text !== 'string') continue;
    try {
      limits[key] = parseLimit(flag.split(' ')[0]!, text);
    } catch (error) {
      throw new UserError((error as Error).message);
    }
  }
  return limits;
}
