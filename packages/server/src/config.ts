import { join } from 'node:path';

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
  /** Public base URL when behind a proxy (used in printed URLs only). */
  publicUrl?: string;
  /** PostgreSQL connections per process and the statement time limit. */
  dbPoolSize?: number;
  dbStatementTimeoutMs?: number;
}

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
    publicUrl: env.RXS_PUBLIC_URL,
    dbPoolSize: env.RXS_DB_POOL_SIZE ? Number(env.RXS_DB_POOL_SIZE) : undefined,
    dbStatementTimeoutMs: env.RXS_DB_STATEMENT_TIMEOUT_MS
      ? Number(env.RXS_DB_STATEMENT_TIMEOUT_MS)
      : undefined,
  };
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
