import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Work between two turns of the event loop: a request waits at most about this long for another. */
export const SLICE_MS = 10;

/**
 * A loop whose awaits all resolve at once (an in-process listing read from SQLite, which answers
 * synchronously) never lets the event loop serve another request until it ends: a web report of
 * 30,000 records held every other request for over a second. Call the function this returns once
 * per item; every `sliceMs` of work it returns a promise that gives the event loop a turn.
 */
export function eventLoopSlices(sliceMs = SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return yieldToEventLoop().then(() => {
      since = performance.now();
    });
  };
}
