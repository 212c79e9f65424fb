/** Checks a count option (page size, batch size, retries with min 0): a whole number of at least `min`. */
export function checkWholeNumber(value: number, name: string, min = 1, note = ''): number {
  if (!Number.isInteger(value) || value < min) {
    throw new TypeError(`${name} must be a whole number of at least ${min} (got ${value})${note}`);
  }
  return value;
}

/** Checks a concurrency limit: a whole number of at least 1. Unbounded parallelism is never allowed. */
export function checkConcurrency(value: number, name: string): number {
  return checkWholeNumber(value, name, 1, '; requests are never unbounded');
}

/**
 * Runs `task` over `items` with at most `limit` tasks in flight, keeping the results in input order.
 * On the first failure no further task starts, the running ones are told to stop through the signal
 * they receive, and once they have settled the first error is thrown.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number, signal: AbortSignal) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  checkConcurrency(limit, 'concurrency');
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });

  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let firstError: unknown;
  const worker = async () => {
    while (!failed && !controller.signal.aborted && next < items.length) {
      const index = next++;
      try {
        results[index] = await task(items[index] as T, index, controller.signal);
      } catch (error) {
        if (!failed) {
          failed = true;
          firstError = error;
          controller.abort(error);
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (failed) throw firstError;
  if (signal?.aborted) throw signal.reason;
  return results;
}
