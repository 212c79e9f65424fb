import { LOG_FORMATS, type LogFormat } from './logging/pretty.js';
import { join } from 'node:path';
import { limitsFromEnv, type ServerLimits } from './http/limits.js';
import { parseHeapGrowingPercent } from './heap-growth.js';

// The limits travel with the configuration (the CLI reads them from here, like the rest).
export { DEFAULT_LIMITS, LIMIT_ENV, parseLimit, type ServerLimits } from './http/limits.js';

export const SERVICES = ['techdoc', 'records', 'tracer'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface ServerConfig {
  host: string;
  port: number;
  /** Folder for the embedded database and demo.json. */
  dataDir: string;
  /** `sqlite:PATH` or a file path; defaults to `<dataDir>/rxs.db`. */
  databaseUrl?: string;
  /** Services this process serves; all three by default. */
  services: ServiceName[];
  /** Largest request body in bytes; larger bodies are 413. */
  bodyLimit: number;
  logLevel: string;
  /** JSON lines, readable lines, or by whether the output is a terminal (default). */
  logFormat?: LogFormat;
  /** Public base URL when behind a proxy (used in printed URLs only). */
  publicUrl?: string;
  /** PostgreSQL connections per process and the statement time limit. */
  dbPoolSize?: number;
  dbStatementTimeoutMs?: number;
  /** Time, rate and concurrency limits (http/limits.ts); unset ones take their defaults. */
  limits?: Partial<ServerLimits>;
  /** Longest lifetime of an API key in days (at most MAX_KEY_LIFETIME_DAYS); undefined: that maximum. */
  maxKeyLifetimeDays?: number;
  /** Proxies (addresses or CIDR ranges) whose X-Forwarded-For names the client; none by default. */
  trustedProxies?: string[];
  /** Keys one record's data may have, nested ones included (422 beyond); 2,000 by default. */
  maxRecordKeys?: number;
  /** Megabytes of finished listings kept on disk (services/records/listing-cache.ts); 0 turns it off. */
  listingCacheMb?: number;
  /** Where they are kept; defaults to `<dataDir>/listing-cache`. */
  listingCacheDir?: string;
  /** Heap growth past the live heap before a full collection, in percent (heap-growth.ts); 0: V8's rule. */
  heapGrowingPercent?: number;
}

/** Megabytes of finished listings kept on disk unless RXS_LISTING_CACHE_MB says otherwise. */
export const DEFAULT_LISTING_CACHE_MB = 1024;

export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;

/** Defaults, overridden by RXS_* environment variables; command-line flags override both. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const dataDir = env.RXS_DATA_DIR ?? './rxs-data';
  return {
    host: env.RXS_HOST ?? '127.0.0.1',
    port: env.RXS_PORT ? Number(env.RXS_PORT) : 8080,
    dataDir,
    databaseUrl: env.RXS_DATABASE_URL,
    services: env.RXS_SERVICES ? parseServices(env.RXS_SERVICES) : [...SERVICES],
    bodyLimit: env.RXS_BODY_LIMIT ? Number(env.RXS_BODY_LIMIT) : DEFAULT_BODY_LIMIT,
    logLevel: env.RXS_LOG_LEVEL ?? 'info',
    logFormat: env.RXS_LOG_FORMAT ? parseLogFormat(env.RXS_LOG_FORMAT) : 'auto',
    publicUrl: env.RXS_PUBLIC_URL,
    dbPoolSize: env.RXS_DB_POOL_SIZE ? Number(env.RXS_DB_POOL_SIZE) : undefined,
    dbStatementTimeoutMs: env.RXS_DB_STATEMENT_TIMEOUT_MS
      ? Number(env.RXS_DB_STATEMENT_TIMEOUT_MS)
      : undefined,
    limits: limitsFromEnv(env),
    maxKeyLifetimeDays: maxKeyLifetimeDaysFromEnv(env),
    trustedProxies: trustedProxiesFromEnv(env),
    maxRecordKeys: env.RXS_MAX_RECORD_KEYS ? Number(env.RXS_MAX_RECORD_KEYS) : undefined,
    listingCacheMb: env.RXS_LISTING_CACHE_MB ? parseListingCacheMb(env.RXS_LISTING_CACHE_MB) : undefined,
    listingCacheDir: env.RXS_LISTING_CACHE_DIR,
    heapGrowingPercent: env.RXS_HEAP_GROWING_PERCENT
      ? parseHeapGrowingPercent(env.RXS_HEAP_GROWING_PERCENT)
      : undefined,
  };
}

/** No key outlives this many days (10 years), whatever an installation or a request says. */
export const MAX_KEY_LIFETIME_DAYS = 3650;

/** RXS_MAX_KEY_LIFETIME_DAYS: a whole number of days, 1..MAX_KEY_LIFETIME_DAYS. */
export function maxKeyLifetimeDaysFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return env.RXS_MAX_KEY_LIFETIME_DAYS ? parseMaxKeyLifetimeDays(env.RXS_MAX_KEY_LIFETIME_DAYS) : undefined;
}

export function parseMaxKeyLifetimeDays(value: string): number {
  const days = Number(value);
  if (!Number.isInteger(days) || days < 1 || days > MAX_KEY_LIFETIME_DAYS) {
    throw new Error(
      `The maximum key lifetime must be a whole number of days from 1 to ${MAX_KEY_LIFETIME_DAYS}, got "${value}".`,
    );
  }
  return days;
}

/** RXS_TRUSTED_PROXIES: a comma list of addresses or CIDR ranges, e.g. `127.0.0.1,10.0.0.0/8`. */
export function trustedProxiesFromEnv(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  return env.RXS_TRUSTED_PROXIES ? parseTrustedProxies(env.RXS_TRUSTED_PROXIES) : undefined;
}

export function parseTrustedProxies(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function databaseUrlOf(config: Pick<ServerConfig, 'dataDir' | 'databaseUrl'>): string {
  return config.databaseUrl ?? join(config.dataDir, 'rxs.db');
}

export function parseServices(value: string): ServiceName[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(SERVICES as readonly string[]).includes(name)) {
      throw new Error(`Unknown service "${name}"; choose from ${SERVICES.join(', ')}.`);
    }
  }
  return names as ServiceName[];
}

/** RXS_LISTING_CACHE_MB: a whole number of megabytes, 0 to keep no listings. */
export function parseListingCacheMb(value: string): number {
  const mb = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(mb)) {
    throw new Error(
      `RXS_LISTING_CACHE_MB must be a whole number of megabytes (0 keeps no finished listings), got "${value}".`,
    );
  }
  return mb;
}

/** RXS_LOG_FORMAT / --log-format: json, pretty or auto. */
export function parseLogFormat(value: string): LogFormat {
  if ((LOG_FORMATS as readonly string[]).includes(value)) return value as LogFormat;
  throw new Error(`The log format must be json, pretty or auto (pretty on a terminal), got "${value}".`);
}
