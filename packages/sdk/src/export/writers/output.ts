import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** The error of a stream that failed or was destroyed, if it did. */
function failed(out: Writable): Error | undefined {
  return (
    out.errored ?? (out.destroyed ? new Error('The output was closed before it took everything.') : undefined)
  );
}

/**
 * Waits for `drain`; rejects if the stream fails or closes first (a reader that quit): waiting for
 * a `drain` that never comes left a writer hanging, and its temporary files behind.
 */
function drained(out: Writable): Promise<void> {
  const failure = failed(out);
  if (failure) return Promise.reject(failure);
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      out.off('drain', onDrain);
      out.off('error', onError);
      out.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle();
    const onError = (error: Error) => settle(error);
    const onClose = () =>
      settle(failed(out) ?? new Error('The output was closed before it took everything.'));
    out.on('drain', onDrain);
    out.on('error', onError);
    out.on('close', onClose);
  });
}

/** Writes a chunk, waiting for the stream to drain when its buffer is full (flat memory). */
export async function writeChunk(out: Writable, chunk: string | Uint8Array): Promise<void> {
  const failure = failed(out);
  if (failure) throw failure;
  if (!out.write(chunk)) await drained(out);
}

/**
 * Writes a chunk and waits until the stream is done with it (its write callback), so the caller
 * may reuse the chunk's memory. Only for streams that do not keep chunks after that (files).
 */
export function writeAndWait(out: Writable, chunk: Uint8Array): Promise<void> {
  if (out.errored) return Promise.reject(out.errored);
  return new Promise((resolve, reject) => {
    out.write(chunk, (error) => (error ? reject(error) : resolve()));
  });
}

/** Waits until a stream that is filled by someone else (a pipe) has room again. */
export async function whenDrained(out: Writable): Promise<void> {
  const failure = failed(out);
  if (failure) throw failure;
  if (out.writableNeedDrain) await drained(out);
}

/** Ends the stream and resolves once all of it is flushed, so the caller may rename the file. */
export async function endOutput(out: Writable): Promise<void> {
  if (out.errored) throw out.errored;
  if (out.writableFinished) return;
  const done = finished(out, { readable: false });
  if (!out.writableEnded) out.end();
  await done;
}

/**
 * The end of every writer's `close`: produce the output if the export completed, then always
 * clean up and end `out`. The first failure is the one reported.
 */
export async function closeOutput(
  out: Writable,
  complete: boolean,
  produce: () => Promise<void>,
  cleanup: () => Promise<void> = async () => {},
): Promise<void> {
  let failure: unknown;
  const attempt = async (step: () => Promise<void>) => {
    try {
      await step();
    } catch (error) {
      failure ??= error;
    }
  };
  if (complete) await attempt(produce);
  await attempt(cleanup);
  await attempt(() => endOutput(out));
  if (failure !== undefined) throw failure;
}
