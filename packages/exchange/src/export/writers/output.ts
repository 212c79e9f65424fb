import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** The error of a stream that failed, or was closed before it took everything. */
const failed = (out: Writable): Error | undefined =>
  out.errored ?? (out.destroyed ? new Error('The output was closed before it took everything.') : undefined);

/** Writes a chunk, waiting for the stream to drain when its buffer is full (flat memory). */
export async function writeChunk(out: Writable, chunk: string | Uint8Array): Promise<void> {
  if (failed(out) || !out.write(chunk)) await whenDrained(out);
}

/** Waits until a full stream has room again; rejects once it fails or closes (a reader that quit). */
export function whenDrained(out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = () => {
      out.off('drain', settle).off('error', settle).off('close', settle);
      return failed(out) ? reject(failed(out)) : resolve();
    };
    if (failed(out) || !out.writableNeedDrain) settle();
    else out.on('drain', settle).on('error', settle).on('close', settle);
  });
}

/** Writes a chunk and waits until a file stream is done with it, so the caller may reuse its memory. */
export function writeAndWait(out: Writable, chunk: Uint8Array): Promise<void> {
  if (out.errored) return Promise.reject(out.errored);
  return new Promise((resolve, reject) => out.write(chunk, (error) => (error ? reject(error) : resolve())));
}

/** Ends the stream and resolves once all of it is flushed, so the caller may rename the file. */
export const endOutput = (out: Writable): Promise<void> =>
  finished(out.writableEnded ? out : out.end(), { readable: false });

/** The end of a writer's `close`: produce the output if complete, then clean up and end `out`; the first failure wins. */
export async function closeOutput(
  out: Writable,
  complete: boolean,
  produce: () => Promise<void>,
  cleanup = async () => {},
): Promise<void> {
  const failures: unknown[] = [];
  for (const step of [complete ? produce : undefined, cleanup, () => endOutput(out)])
    await step?.().catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}
