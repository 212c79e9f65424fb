import { setTimeout as sleep } from 'node:timers/promises';

export interface WatchRun {
  /** 1 for the first run. */
  run: number;
  /** Aborted when the loop is asked to stop; a long run may use it to stop early. */
  signal: AbortSignal;
}

export interface WatchLoopOptions {
  /** Pause between the end of one run and the start of the next. */
  intervalMs: number;
  /** The pause varies by up to this share of the interval either way (0 to 1; default 0.1). */
  jitterRatio?: number;
  runOnce: (run: WatchRun) => Promise<void>;
  /** Stops the loop: during a pause at once, during a run once that run has finished. */
  signal?: AbortSignal;
  /**
   * Told of each failed run; the loop goes on. Default: a line on stderr. If it throws, the loop
   * stops and `runWatchLoop` rejects with that error.
   */
  onError?: (error: unknown, run: number) => void | Promise<void>;
  /** Source of randomness for the jitter (tests); default Math.random. */
  random?: () => number;
}

export interface WatchLoopResult {
  runs: number;
  failures: number;
}

/**
 * Polling for `--watch`: runs `runOnce`, pauses `intervalMs` ± jitter, and again, until `signal`
 * aborts. Runs never overlap (the pause starts when a run ends), and a failed run is reported and
 * followed by the next one. Resolves with the counts once stopped.
 */
export async function runWatchLoop(options: WatchLoopOptions): Promise<WatchLoopResult> {
  const { intervalMs, runOnce } = options;
  const jitter = options.jitterRatio ?? 0.1;
  if (!Number.isFinite(intervalMs) || intervalMs < 0)
    throw new RangeError(`The watch interval must be a number of milliseconds >= 0, not ${intervalMs}.`);
  if (!Number.isFinite(jitter) || jitter < 0 || jitter > 1)
    throw new RangeError(`The jitter ratio must be between 0 and 1, not ${jitter}.`);
  const random = options.random ?? Math.random;
  const signal = options.signal ?? new AbortController().signal;
  const onError =
    options.onError ??
    ((error: unknown, run: number) => {
      process.stderr.write(`Run ${run} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    });

  let runs = 0;
  let failures = 0;
  while (!signal.aborted) {
    runs++;
    try {
      await runOnce({ run: runs, signal });
    } catch (error) {
      // A run cut short by the stop request did not fail.
      if (!(signal.aborted && isAbortError(error))) {
        failures++;
        await onError(error, runs);
      }
    }
    if (signal.aborted) break;
    try {
      await sleep(watchPause(intervalMs, jitter, random), undefined, { signal });
    } catch (error) {
      if (!isAbortError(error)) throw error;
    }
  }
  return { runs, failures };
}

/** The pause before the next run: `intervalMs` ± up to `jitterRatio` of it, never negative. */
export function watchPause(
  intervalMs: number,
  jitterRatio: number,
  random: () => number = Math.random,
): number {
  return Math.max(0, Math.round(intervalMs * (1 + jitterRatio * (2 * random() - 1))));
}

/**
 * Whether `error` is the platform's abort: a signal's default reason (a DOMException) or Node's
 * AbortError (timers, streams). Not our errors and not one class, so no `instanceof` covers both;
 * their `name` is what the DOM standard and Node both fix as the mark of an abort.
 */
function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}
