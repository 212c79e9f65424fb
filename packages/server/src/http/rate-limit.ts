import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';
import { LIMIT_ENV, type ServerLimits } from './limits.js';

/** How often full buckets are forgotten, so memory does not grow with callers seen. */
const SWEEP_EVERY_MS = 60_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets, one per caller (an API key, a tenant, a client address): each holds up to
 * `capacity` requests and refills at `limit` per `windowMs`, so a caller may send a burst of
 * `capacity` at once and `limit` per window after that. With the IETF draft's `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the bucket is full again) to send.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private nextSweep = 0;

  constructor(
    readonly limit: number,
    readonly capacity: number,
    readonly windowMs: number,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.perMs = limit / windowMs;
  }

  /** The caller's bucket, refilled up to now (a caller not seen, or forgotten, has a full one). */
  private bucketOf(caller: string): Bucket {
    const now = this.now();
    if (now >= this.nextSweep) {
      for (const [key, bucket] of this.buckets)
        if (bucket.tokens + (now - bucket.at) * this.perMs >= this.capacity) this.buckets.delete(key);
      this.nextSweep = now + SWEEP_EVERY_MS;
    }
    let bucket = this.buckets.get(caller);
    if (!bucket) {
      bucket = { tokens: this.capacity, at: now };
      this.buckets.set(caller, bucket);
    } else {
      bucket.tokens = Math.min(this.capacity, bucket.tokens + (now - bucket.at) * this.perMs);
      bucket.at = now;
    }
    return bucket;
  }

  /**
   * Whether the caller has a request left now, when to retry when not, and the headers to send:
   * what is left once this request is charged.
   */
  check(caller: string): {
    over: boolean;
    remaining: number;
    retryAfterSeconds: number;
    headers: Record<string, string>;
  } {
    const bucket = this.bucketOf(caller);
    const over = bucket.tokens < 1;
    const left = over ? bucket.tokens : bucket.tokens - 1;
    const remaining = Math.floor(left);
    // Retry-After and RateLimit-Reset take whole seconds; a retry before the token is back would fail.
    const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000));
    const resetSeconds = Math.ceil((this.capacity - left) / this.perMs / 1000);
    return {
      over,
      remaining,
      retryAfterSeconds,
      headers: {
        'ratelimit-limit': String(this.capacity),
        'ratelimit-remaining': String(remaining),
        'ratelimit-reset': String(resetSeconds),
      },
    };
  }

  /** Charges one request to the caller (after `check` found one left). */
  take(caller: string): void {
    this.bucketOf(caller).tokens -= 1;
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

/** A tenant's requests being handled, and those waiting for a slot, first come first served. */
interface TenantSlots {
  running: number;
  waiting: Waiter[];
}

interface Waiter {
  admit(): void;
  reply: FastifyReply;
}

/** The connection of a request that has closed (its 'close' already came, and will not again). */
const gone = () => new HttpError(408, 'The connection closed before the request was handled.');

const bucketsOf = (limit: number, capacity: number, windowMs: number) =>
  limit > 0 && capacity > 0 ? new TokenBuckets(limit, capacity, windowMs) : undefined;

/**
 * The per-caller limits of the service routes (OWASP API4): a request rate per API key and per
 * tenant, a rate of failed authentications per client address, a number of full listings streaming
 * at once per key, and a number of requests per tenant handled at once. A key belongs to one
 * tenant, and no tenant's budget or slots are shared with another: one tenant's flood makes its
 * own requests wait or fail, never another tenant's.
 */
export class RateLimits {
  private readonly perKey: TokenBuckets | undefined;
  private readonly perTenant: TokenBuckets | undefined;
  private readonly perAddress: TokenBuckets | undefined;
  private readonly listings = new Map<string, number>();
  private readonly tenants = new Map<string, TenantSlots>();

  constructor(private readonly limits: ServerLimits) {
    this.perKey = bucketsOf(limits.rateLimit, limits.rateBurst, limits.rateWindowMs);
    this.perTenant = bucketsOf(limits.tenantRateLimit, limits.tenantRateBurst, limits.rateWindowMs);
    this.perAddress = bucketsOf(limits.anonymousRateLimit, limits.anonymousRateLimit, limits.rateWindowMs);
  }

  /**
   * A failed authentication counts against the client address; past the address's budget the answer
   * is 429 instead of 401. Valid keys are never refused for their address: many users may share one
   * (a proxy, a NAT), and an attacker's failures must not lock them out.
   */
  authenticationFailed(request: FastifyRequest, error: unknown): never {
    if (this.perAddress && error instanceof HttpError && error.statusCode === 401) {
      const { over, retryAfterSeconds, headers } = this.perAddress.check(request.ip);
      if (over) {
        throw new TooManyRequests(
          `Too many requests with a missing or invalid API key from ${request.ip}. Wait ${retryAfterSeconds} s, then retry with a valid key.`,
          retryAfterSeconds,
          headers,
        );
      }
      this.perAddress.take(request.ip);
    }
    throw error;
  }

  /**
   * After authentication: the key's and the tenant's request rates, then either (for a full
   * listing) the key's concurrent listings or the tenant's slots. Resolves once the request may be
   * handled; `undefined` when it may at once.
   */
  authenticated(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    const principal = request.principal;
    if (!principal) return undefined;
    // Web sessions have no key: they count by user, which is as much theirs alone.
    const caller = `${principal.tenantId}:${principal.keyId ?? `user:${principal.userId}`}`;
    this.charge(caller, principal.tenantId, reply);
    // A slot is given back on the response's 'close': one that already came would never give it back.
    if (reply.raw.closed || reply.raw.destroyed) throw gone();
    if (isFullListing(request)) {
      // A listing streams for as long as its client reads, mostly waiting on the network: in the
      // tenant's slots, a few slow readers would hold back all of the tenant's cheap requests.
      // The per-key cap bounds them instead.
      if (this.limits.concurrentListings > 0) this.holdListing(caller, reply);
      return undefined;
    }
    return this.limits.tenantInFlight > 0 ? this.admit(principal.tenantId, reply) : undefined;
  }

  /** Charges the key's and the tenant's buckets, or refuses with 429 without charging either. */
  private charge(caller: string, tenant: string, reply: FastifyReply): void {
    const key = this.perKey?.check(caller);
    if (key?.over) {
      throw new TooManyRequests(
        `Too many requests for this ${caller.includes(':user:') ? 'user' : 'API key'}: it may send ${this.perKey!.capacity} at once and ${this.perKey!.limit} per ${this.limits.rateWindowMs / 1000} s after that. Wait ${key.retryAfterSeconds} s (Retry-After) before sending more, or ask the operator to raise ${LIMIT_ENV.rateLimit} or ${LIMIT_ENV.rateBurst}.`,
        key.retryAfterSeconds,
        key.headers,
      );
    }
    const tenantRate = this.perTenant?.check(tenant);
    if (tenantRate?.over) {
      throw new TooManyRequests(
        `Too many requests for this tenant (all its API keys and users together): it may send ${this.perTenant!.capacity} at once and ${this.perTenant!.limit} per ${this.limits.rateWindowMs / 1000} s after that. Wait ${tenantRate.retryAfterSeconds} s (Retry-After) before sending more, or ask the operator to raise ${LIMIT_ENV.tenantRateLimit} or ${LIMIT_ENV.tenantRateBurst}.`,
        tenantRate.retryAfterSeconds,
        tenantRate.headers,
      );
    }
    this.perKey?.take(caller);
    this.perTenant?.take(tenant);
    // The headers appear once half the key's budget is spent: then they help a client slow down,
    // and until then answers stay identical from one request to the next.
    if (key && key.remaining <= this.perKey!.capacity / 2) void reply.headers(key.headers);
  }

  private holdListing(caller: string, reply: FastifyReply): void {
    const running = this.listings.get(caller) ?? 0;
    if (running >= this.limits.concurrentListings) {
      throw new TooManyRequests(
        `This API key already has ${running} full listings streaming, the most at once (${LIMIT_ENV.concurrentListings}). Wait for one to finish, or page with limit and after.`,
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

  /**
   * One of the tenant's slots for the request, held until its response ends or its connection
   * closes. When all are taken, the request waits its turn (429 once the queue is full); one whose
   * connection closes while waiting leaves the queue. The body is read only once admitted, so
   * parsing it counts against the tenant too.
   */
  private admit(tenant: string, reply: FastifyReply): Promise<void> | undefined {
    const slots = this.slotsOf(tenant);
    if (slots.running < this.limits.tenantInFlight && slots.waiting.length === 0) {
      this.hold(tenant, slots, reply);
      return undefined;
    }
    if (slots.waiting.length >= this.limits.tenantQueue) {
      throw new TooManyRequests(
        `This tenant has ${slots.running} requests being handled and ${slots.waiting.length} waiting, the most at once (${LIMIT_ENV.tenantInFlight}, ${LIMIT_ENV.tenantQueue}). Wait 1 s (Retry-After) and send fewer requests at once.`,
        1,
      );
    }
    return new Promise<void>((resolve, reject) => {
      const onClose = () => {
        slots.waiting.splice(slots.waiting.indexOf(waiter), 1);
        this.forgetIfIdle(tenant, slots);
        reject(gone());
      };
      const waiter: Waiter = {
        reply,
        admit: () => {
          reply.raw.off('close', onClose);
          resolve();
        },
      };
      slots.waiting.push(waiter);
      reply.raw.once('close', onClose);
    });
  }

  private slotsOf(tenant: string): TenantSlots {
    let slots = this.tenants.get(tenant);
    if (!slots) {
      slots = { running: 0, waiting: [] };
      this.tenants.set(tenant, slots);
    }
    return slots;
  }

  private hold(tenant: string, slots: TenantSlots, reply: FastifyReply): void {
    slots.running++;
    reply.raw.once('close', () => {
      slots.running--;
      if (slots.waiting.length > 0) setImmediate(() => this.admitWaiting(tenant, slots));
      else this.forgetIfIdle(tenant, slots);
    });
  }

  /**
   * Admits waiting requests into free slots. Called from setImmediate, not from the releasing
   * request's 'close': admitting there would run the next request of the same tenant before the
   * event loop reads other connections, and a tenant with a full queue would hold the loop
   * request after request while every other tenant's requests sit unread in the socket buffers.
   */
  private admitWaiting(tenant: string, slots: TenantSlots): void {
    while (slots.running < this.limits.tenantInFlight && slots.waiting.length > 0) {
      const waiter = slots.waiting.shift()!;
      this.hold(tenant, slots, waiter.reply);
      waiter.admit();
    }
    this.forgetIfIdle(tenant, slots);
  }

  /** Drops a tenant's slots once nothing runs or waits, so memory does not grow with tenants seen. */
  private forgetIfIdle(tenant: string, slots: TenantSlots): void {
    if (slots.running === 0 && slots.waiting.length === 0 && this.tenants.get(tenant) === slots)
      this.tenants.delete(tenant);
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
