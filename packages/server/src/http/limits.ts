/**
 * Time, rate and concurrency bounds of the HTTP server. Every limit has a default, an
 * environment variable and an `rxs serve` flag; 0 switches a limit off. docs/reliability.md lists them.
 */
export interface ServerLimits {
  /** Whole request (headers and body) must arrive within this; 408 beyond. */
  requestTimeoutMs: number;
  /** Request headers must arrive within this; 408 beyond. */
  headersTimeoutMs: number;
  /** A connection with no traffic either way is closed after this. */
  idleTimeoutMs: number;
  /** A response (and the database snapshot a listing holds) is aborted when not sent within this. */
  responseTimeoutMs: number;
  /** Requests per API key per window, the sustained rate its token bucket refills at (429 beyond). */
  rateLimit: number;
  /** Requests one API key may send at once: its token bucket's size (0, like a rate of 0, switches the bucket off). */
  rateBurst: number;
  /** Requests per tenant (all its keys together) per window, the refill of the tenant's bucket. */
  tenantRateLimit: number;
  /** The tenant's token bucket's size. */
  tenantRateBurst: number;
  /** Failed authentications per client address per window (429 beyond, before authenticating). */
  anonymousRateLimit: number;
  /** The window the rates above are counted over. */
  rateWindowMs: number;
  /** Full listings (`GET /records/` without `limit`) streaming at once per API key (429 beyond). */
  concurrentListings: number;
  /** Requests of one tenant handled at once (full listings apart); the rest wait in its queue. */
  tenantInFlight: number;
  /** Requests of one tenant waiting for one of its slots (429 beyond). */
  tenantQueue: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  requestTimeoutMs: 60_000,
  headersTimeoutMs: 20_000,
  idleTimeoutMs: 120_000,
  responseTimeoutMs: 300_000,
  // 500/s per key, bursts of 2 000: about three times the fastest measured `rxs import` (one POST per
  // row, 78-178 rows/s), while a key sending as fast as the server answers (about 11 000 point
  // lookups/s) meets 429 within a fraction of a second. docs/reliability.md gives the reasoning.
  rateLimit: 30_000,
  rateBurst: 2_000,
  // Four keys at their full rate; about a fifth of what the server answers for cheap reads.
  tenantRateLimit: 120_000,
  tenantRateBurst: 8_000,
  anonymousRateLimit: 600,
  rateWindowMs: 60_000,
  concurrentListings: 16,
  tenantInFlight: 8,
  tenantQueue: 256,
};

/** The environment variable of each limit. */
export const LIMIT_ENV: Record<keyof ServerLimits, string> = {
  requestTimeoutMs: 'RXS_REQUEST_TIMEOUT_MS',
  headersTimeoutMs: 'RXS_HEADERS_TIMEOUT_MS',
  idleTimeoutMs: 'RXS_IDLE_TIMEOUT_MS',
  responseTimeoutMs: 'RXS_RESPONSE_TIMEOUT_MS',
  rateLimit: 'RXS_RATE_LIMIT',
  rateBurst: 'RXS_RATE_BURST',
  tenantRateLimit: 'RXS_TENANT_RATE_LIMIT',
  tenantRateBurst: 'RXS_TENANT_RATE_BURST',
  anonymousRateLimit: 'RXS_ANONYMOUS_RATE_LIMIT',
  rateWindowMs: 'RXS_RATE_WINDOW_MS',
  concurrentListings: 'RXS_CONCURRENT_LISTINGS',
  tenantInFlight: 'RXS_TENANT_IN_FLIGHT',
  tenantQueue: 'RXS_TENANT_QUEUE',
};

/** A limit's value from text: a whole number ≥ 0, else an error that names where it came from. */
export function parseLimit(name: string, text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value)) {
    throw new Error(`${name} must be a whole number ≥ 0 (0 switches the limit off), got "${text}".`);
  }
  return value;
}

/** Limits set in the environment; the rest are left to the defaults. */
export function limitsFromEnv(env: NodeJS.ProcessEnv): Partial<ServerLimits> {
  const limits: Partial<ServerLimits> = {};
  for (const [key, name] of Object.entries(LIMIT_ENV) as [keyof ServerLimits, string][]) {
    const text = env[name];
    if (text !== undefined && text !== '') limits[key] = parseLimit(name, text);
  }
  return limits;
}

export function resolveLimits(given: Partial<ServerLimits> | undefined): ServerLimits {
  return { ...DEFAULT_LIMITS, ...given };
}
