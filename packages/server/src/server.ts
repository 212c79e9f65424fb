import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { join } from 'node:path';
import { databaseUrlOf, DEFAULT_LISTING_CACHE_MB, type ServerConfig } from './config.js';
import { applyHeapGrowingPercent, DEFAULT_HEAP_GROWING_PERCENT } from './heap-growth.js';
import { ListingCache } from './services/records/listing-cache.js';
import type { Storage } from './storage/database.js';
import { openStorage } from './storage/open.js';

export interface RunningServer {
  app: FastifyInstance;
  storage: Storage;
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

/** Opens the database (migrating it), builds the app and listens. */
export async function startServer(
  config: ServerConfig,
  options: { logger?: boolean } = {},
): Promise<RunningServer> {
  applyHeapGrowingPercent(config.heapGrowingPercent ?? DEFAULT_HEAP_GROWING_PERCENT);
  const storage = await openStorage({
    url: databaseUrlOf(config),
    postgres: { poolSize: config.dbPoolSize, statementTimeoutMs: config.dbStatementTimeoutMs },
  });
  const cacheMb = config.listingCacheMb ?? DEFAULT_LISTING_CACHE_MB;
  const cacheDir = config.listingCacheDir ?? join(config.dataDir, 'listing-cache');
  let listingCache: ListingCache | undefined;
  let cacheProblem: string | undefined;
  try {
    if (cacheMb > 0)
      listingCache = await ListingCache.open({ dir: cacheDir, maxBytes: cacheMb * 1024 * 1024 });
  } catch (error) {
    // A cache it cannot keep (a read-only disk, say) must not keep the service from starting.
    cacheProblem = `The listing cache cannot be kept in ${cacheDir} (${(error as Error).message}): every listing is built from the database. Set RXS_LISTING_CACHE_DIR to a writable directory, or RXS_LISTING_CACHE_MB=0 to go without.`;
  }
  const app = await buildApp({
    config,
    storage,
    listingCache,
    logger: options.logger === false ? false : undefined,
  });
  if (cacheProblem) app.log.warn(cacheProblem);
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let closing: Promise<void> | undefined;
  return {
    app,
    storage,
    url: config.publicUrl ?? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    close() {
      // Fastify stops accepting connections and lets requests in flight finish before closing. It
      // closes the idle keep-alive connections once, when the close begins: a connection whose
      // answer ends later (a long web export) would stay open until its idle timeout, so each is
      // closed as soon as it is idle.
      closing ??= (async () => {
        const sweep = setInterval(() => app.server.closeIdleConnections(), 200);
        try {
          await app.close();
        } finally {
          clearInterval(sweep);
        }
        await storage.close();
        await listingCache?.close();
      })();
      return closing;
    },
  };
}

/** SIGTERM/SIGINT: finish requests in flight, close the database, exit. */
export function closeOnSignals(server: RunningServer, log: (message: string) => void): void {
  const stop = (signal: string) => {
    log(`${signal} received: finishing requests in flight, then stopping.`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log(`Shutdown failed: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
