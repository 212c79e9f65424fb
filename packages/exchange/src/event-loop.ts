import { setImmediate as nextTurn } from 'node:timers/promises';

/** Work between two turns of the event loop: another request waits at most about this long. */
export const SLICE_MS = 10;

/**
 * A loop whose awaits resolve at once (rows of a synchronous database, a parser's buffered rows)
 * never lets the event loop serve anything else until it ends: every other request of a server
 * waits for the whole read. Call the function this returns once per item; every `sliceMs` of work
 * (the loop's and its consumer's) it returns a promise that gives the event loop a turn.
 */
export function eventLoopSlices(sliceMs = SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return nextTurn().then(() => {
      since = performance.now();
    });
  };
}
