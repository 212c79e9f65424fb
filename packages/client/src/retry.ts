import { NetworkError, ResponseFormatError, RxsApiError, type ServiceName } from './errors.js';

export interface RetryPolicy {
  /** Retries after the first attempt (0 = none). */
  retries: number;
  /** Backoff base: the first retry waits up to this long. */
  baseMs: number;
  /** Backoff cap: no wait (without Retry-After) is longer. */
  capMs: number;
  /** A longer `Retry-After` is not waited for: the error is thrown instead. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 4,
  baseMs: 200,
  capMs: 10_000,
  maxRetryAfterMs: 60_000,
};

/** Statuses worth another attempt: overload and transient server or gateway failures. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Reported before each retry, e.g. for a CLI progress line or a log. Holds no credentials. */
export interface RetryEvent {
  service: ServiceName;
  method: string;
  url: string;
  /** 1 for the first retry. */
  attempt: number;
  retries: number;
  delayMs: number;
  status: number | undefined;
  /** Why: the error's first line. */
  reason: string;
}

/** Full jitter: a random wait between 0 and min(cap, base * 2^retryIndex). */
export function backoffDelay(
  retryIndex: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** retryIndex);
  return Math.floor(random() * ceiling);
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date. Undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Whether an error is transient: no answer, a retryable status, or a body cut short. */
export function isTransient(error: unknown): error is RxsApiError {
  if (error instanceof NetworkError) return true;
  if (error instanceof ResponseFormatError) return error.truncated;
  return error instanceof RxsApiError && error.status !== undefined && RETRYABLE_STATUSES.has(error.status);
}

/**
 * How long to wait before retry number `retryIndex + 1`, or undefined to give up: the call is not
 * idempotent (and the answer not a 429, which no server acted on), the error is not transient, retries are used up, or the server asked for a longer
 * wait than the policy allows.
 */
export function retryDelay(
  error: unknown,
  retryIndex: number,
  idempotent: boolean,
  policy: RetryPolicy,
  random?: () => number,
): number | undefined {
  if (retryIndex >= policy.retries || !isTransient(error)) return undefined;
  // A 429 says the server refused the request before acting on it, so even a write may be sent again.
  if (!idempotent && error.status !== 429) return undefined;
  const asked = error.retryAfterMs;
  if (asked !== undefined) return asked <= policy.maxRetryAfterMs ? asked : undefined;
  return backoffDelay(retryIndex, policy, random);
}

/** Waits, unless the signal aborts first (then rejects with its reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
