import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';
import type { ServerLimits } from './limits.js';

/** How often windows that have ended are forgotten, so memory does not grow with callers seen. */
const SWEEP_EVERY_MS = 60_000;

interface Window {
  used: number;
  resetsAt: number;
}

/**
 * Fixed-window counters, one per caller (an API key, or a client address), with the IETF draft's
 * `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds) headers to send.
 */
export class RateCounter {
  private readonly windows = new Map<string, Window>();
  private nextSweep = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The caller's window now (started afresh when the last one ended). */
  private windowOf(caller: string): Window {
    const now = this.now();
    if (now >= this.nextSweep) {
      for (const [key, window] of this.windows) if (window.resetsAt <= now) this.windows.delete(key);
      this.nextSweep = now + SWEEP_EVERY_MS;
    }
    let window = this.windows.get(caller);
    if (!window || window.resetsAt <= now) {
      window = { used: 0, resetsAt: now + this.windowMs };
      this.windows.set(caller, window);
    }
    return window;
  }

  /** Seconds until the caller's window resets (at least 1, as Retry-After wants whole seconds). */
  private resetSeconds(window: Window): number {
    return Math.max(1, Math.ceil((window.resetsAt - this.now()) / 1000));
  }

  /** Charges one request; returns the headers to send, and whether it is over the limit. */
  take(caller: string): {
    headers: Record<string, string>;
    over: boolean;
    remaining: number;
    resetSeconds: number;
  } {
    const window = this.windowOf(caller);
    const over = window.used >= this.limit;
    if (!over) window.used++;
    const resetSeconds = this.resetSeconds(window);
    const remaining = Math.max(0, this.limit - window.used);
    return {
      over,
      remaining,
      resetSeconds,
      headers: {
        'ratelimit-limit': String(this.limit),
        'ratelimit-remaining': String(remaining),
        'ratelimit-reset': String(resetSeconds),
      },
    };
  }
}

/** 429 with Retry-After and a `detail` that says what to do. */
export class TooManyRequests extends HttpError {
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(429, detail);
  }
}

/**
 * The per-caller limits of the service routes (OWASP API4): a request rate per API key, a rate of
 * failed authentications per client address, and a number of full listings streaming at once per key. Tenants never share a
 * budget: keys are counted apart, and a key belongs to one tenant.
 */
export class RateLimits {
  private readonly perKey: RateCounter | undefined;
  private readonly perAddress: RateCounter | undefined;
  private readonly listings = new Map<string, number>();

  constructor(private readonly limits: ServerLimits) {
    if (limits.rateLimit > 0) this.perKey = new RateCounter(limits.rateLimit, limits.rateWindowMs);
    if (limits.anonymousRateLimit > 0)
      this.perAddress = new RateCounter(limits.anonymousRateLimit, limits.rateWindowMs);
  }

  /**
   * A failed authentication counts against the client address; past the address's budget the answer
   * is 429 instead of 401. Valid keys are never refused for their address: many users may share one
   * (a proxy, a NAT), and an attacker's failures must not lock them out.
   */
  authenticationFailed(request: FastifyRequest, error: unknown): never {
    if (this.perAddress && error instanceof HttpError && error.statusCode === 401) {
      const { over, resetSeconds, headers } = this.perAddress.take(request.ip);
      if (over) {
        throw new TooManyRequests(
          `Too many requests with a missing or invalid API key from ${request.ip}. Wait ${resetSeconds} s, then retry with a valid key.`,
          resetSeconds,
          headers,
        );
      }
    }
    throw error;
  }

  /** After authentication: the key's request rate, then (for a full listing) its concurrent listings. */
  authenticated(request: FastifyRequest, reply: FastifyReply): void {
    const principal = request.principal;
    if (!principal) return;
    // Web sessions have no key: they count by user, which is as much theirs alone.
    const caller = `${principal.tenantId}:${principal.keyId ?? `user:${principal.userId}`}`;
    if (this.perKey) {
      const { headers, over, resetSeconds, remaining } = this.perKey.take(caller);
      // The headers appear once half the budget is spent: then they help a client slow down, and
      // until then answers stay identical from one request to the next.
      if (remaining <= this.perKey.limit / 2) void reply.headers(headers);
      if (over) {
        throw new TooManyRequests(
          `Too many requests for this API key: the limit is ${this.perKey.limit} per ${this.limits.rateWindowMs / 1000} s. Wait ${resetSeconds} s (Retry-After) before sending more, or ask the operator to raise RXS_RATE_LIMIT.`,
          resetSeconds,
          headers,
        );
      }
    }
    if (this.limits.concurrentListings > 0 && isFullListing(request)) this.holdListing(caller, reply);
  }

  private holdListing(caller: string, reply: FastifyReply): void {
    const running = this.listings.get(caller) ?? 0;
    if (running >= this.limits.concurrentListings) {
      throw new TooManyRequests(
        `This API key already has ${running} full listings streaming, the most at once (RXS_CONCURRENT_LISTINGS). Wait for one to finish, or page with limit and after.`,
        1,
      );
    }
    this.listings.set(caller, running + 1);
    // 'close' comes once, when the response ends or the connection is cut.
    reply.raw.once('close', () => {
      const left = (this.listings.get(caller) ?? 1) - 1;
      if (left > 0) this.listings.set(caller, left);
      else this.listings.delete(caller);
    });
  }
}

/** Routes whose answer can be a whole listing, streamed from one database snapshot. */
const LISTING_ROUTES = new Set(['/records/', '/records/changes', '/traces/changes']);

/**
 * A request that streams a whole listing: `GET /records/` without `limit`, or a changes feed started
 * from the beginning (neither `since` nor `from`), whose first page is the whole listing.
 */
function isFullListing(request: FastifyRequest): boolean {
  if (request.method !== 'GET' || !LISTING_ROUTES.has(request.routeOptions.url ?? '')) return false;
  const query = (request.query ?? {}) as Record<string, unknown>;
  return request.routeOptions.url === '/records/'
    ? query.limit === undefined
    : query.since === undefined && query.from === undefined;
}
