import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** Writes a chunk, waiting for the stream to drain when its buffer is full (flat memory). */
export async function writeChunk(out: Writable, chunk: string | Uint8Array): Promise<void> {
  if (out.errored) throw out.errored;
  if (!out.write(chunk)) await once(out, 'drain');
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
  if (out.errored) throw out.errored;
  if (out.writableNeedDrain) await once(out, 'drain');
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
