/**
 * Slows password guessing without letting an attacker lock anyone out (OWASP Authentication Cheat
 * Sheet): failures count per (e-mail, client address) pair, so guesses from one client never slow
 * the right password from another; after a few failures each further attempt from that client must
 * wait, twice as long after every failure, up to a cap. A global budget per client address (many
 * addresses guessed from one client) slows password spraying. A success clears the pair's count.
 * Counts live in memory per process: with several replicas an attacker gets a few more tries, never
 * unlimited ones.
 */
export interface ThrottleOptions {
  /** Failures allowed before waiting starts. */
  freeFailures: number;
  /** Wait after the first failure beyond the free ones; doubles with each further failure. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A count is forgotten this long after its last failure. */
  forgetAfterMs: number;
  /** Entries kept at most (oldest dropped first), so a flood of addresses cannot exhaust memory. */
  maxEntries: number;
}

export const DEFAULT_THROTTLE: ThrottleOptions = {
  freeFailures: 5,
  baseDelayMs: 2_000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxEntries: 50_000,
};

/** Failures one client may make across all addresses before it must wait (an office shares one). */
export const CLIENT_FREE_FAILURES = 50;

/** The throttle keys of one sign-in attempt: the (e-mail, client) pair and the client's budget. */
export function signInThrottleKeys(
  email: string,
  client: string,
): { pair: string; keys: { key: string; freeFailures?: number }[] } {
  const pair = `pair:${email.trim().toLowerCase()} ${client}`;
  return { pair, keys: [{ key: pair }, { key: `client:${client}`, freeFailures: CLIENT_FREE_FAILURES }] };
}

interface Entry {
  failures: number;
  lastFailure: number;
}

export class SignInThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly options: ThrottleOptions = DEFAULT_THROTTLE,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until any of these keys may try again; 0 when all may try now. */
  waitFor(keys: { key: string; freeFailures?: number }[]): number {
    let wait = 0;
    for (const { key, freeFailures } of keys) {
      const entry = this.live(key);
      if (!entry) continue;
      const over = entry.failures - (freeFailures ?? this.options.freeFailures);
      if (over < 0) continue;
      const delay = Math.min(this.options.baseDelayMs * 2 ** Math.min(over, 30), this.options.maxDelayMs);
      wait = Math.max(wait, entry.lastFailure + delay - this.now());
    }
    return Math.max(0, wait);
  }

  fail(keys: string[]): void {
    for (const key of keys) {
      const entry = this.live(key) ?? { failures: 0, lastFailure: 0 };
      entry.failures += 1;
      entry.lastFailure = this.now();
      this.entries.delete(key); // re-insert: the Map's order is then oldest failure first
      this.entries.set(key, entry);
    }
    while (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  succeed(key: string): void {
    this.entries.delete(key);
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.lastFailure > this.options.forgetAfterMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
