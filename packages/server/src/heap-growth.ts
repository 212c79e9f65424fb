import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the heap grow past what is live before it collects in full, in percent: 20 lets
 * a heap with 40 MB live reach about 48 MB. A request that reads megabyte records (an export of a
 * topic of large records, an import matched against them) turns each record into garbage strings
 * at once; V8's own rule lets that garbage grow to several times the live heap before a full
 * collection, which on a shared server is memory every tenant pays for. A small factor collects
 * more often and keeps the server within its memory budget (docs/reliability.md).
 */
export const DEFAULT_HEAP_GROWING_PERCENT = 20;

/** RXS_HEAP_GROWING_PERCENT: a whole number of percent, 0 for V8's own rule. */
export function parseHeapGrowingPercent(value: string): number {
  const percent = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(percent) || percent > 1000)
    throw new Error(
      `RXS_HEAP_GROWING_PERCENT must be a whole number of percent from 0 (V8's own rule) to 1000, got "${value}".`,
    );
  return percent;
}

/**
 * Sets the heap growing factor of this process, unless Node was started with its own
 * `--heap-growing-percent` (that one wins). V8 reads the flag at each full collection, so setting
 * it after start-up takes effect from the next one.
 */
export function applyHeapGrowingPercent(
  percent: number,
  execArgv: readonly string[] = process.execArgv,
): 'set' | 'left to V8' | 'set by the command line' {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return 'set by the command line';
  if (percent === 0) return 'left to V8';
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  return 'set';
}
