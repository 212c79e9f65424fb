import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { KeptFileStream } from './kept-file-stream.js';

const dir = mkdtempSync(join(tmpdir(), 'rxs-kept-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A consumer like a socket: it takes chunks, holds each until its (delayed) write completes, and
 * checks at that moment that the bytes it was handed have not been overwritten meanwhile.
 */
function slowSink(delays: number[]) {
  const received: Buffer[] = [];
  const overwritten: number[] = [];
  const buffers = new Set<ArrayBufferLike>();
  let n = 0;
  const sink = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, done) {
      const index = n++;
      const copy = Buffer.from(chunk);
      buffers.add(chunk.buffer);
      // Completes after some turns of the event loop, as a socket write does when the kernel is busy.
      let turns = delays[index % Math.max(1, delays.length)] ?? 0;
      const complete = () => {
        if (turns-- > 0) return setImmediate(complete);
        if (!chunk.equals(copy)) overwritten.push(index);
        received.push(copy);
        done();
      };
      complete();
    },
  });
  return { sink, received, overwritten, buffers };
}

async function streamed(bytes: Buffer, bufferBytes: number, delays: number[]) {
  const file = join(dir, `kept-${randomBytes(4).toString('hex')}.json`);
  writeFileSync(file, bytes);
  const handle = await open(file, 'r');
  const consumer = slowSink(delays);
  const stream = new KeptFileStream(handle, bytes.length, bufferBytes, () => consumer.sink.writableLength);
  await pipeline(stream, consumer.sink);
  return consumer;
}

describe('KeptFileStream: a kept listing read into reused buffers', () => {
  it('hands every byte over in order and never overwrites a chunk its consumer still holds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40_000 }),
        fc.integer({ min: 16, max: 4096 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 6 }),
        async (size, bufferBytes, delays) => {
          const bytes = randomBytes(size);
          const { received, overwritten } = await streamed(bytes, bufferBytes, delays);
          expect(overwritten).toEqual([]);
          expect(Buffer.concat(received).equals(bytes)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads a large file through a few buffers, not one per read', async () => {
    const bytes = randomBytes(4 * 1024 * 1024);
    const { received, buffers } = await streamed(bytes, 64 * 1024, [0]);
    expect(Buffer.concat(received).equals(bytes)).toBe(true);
    expect(received.length).toBe(64);
    expect(buffers.size).toBeLessThanOrEqual(3);
  });

  it('says so when the file is shorter than it was when opened', async () => {
    const file = join(dir, 'short.json');
    writeFileSync(file, 'abc');
    const handle = await open(file, 'r');
    const stream = new KeptFileStream(handle, 10, 4, () => 0);
    await expect(pipeline(stream, slowSink([]).sink)).rejects.toThrow(/ended at byte 3 of 10/);
  });
});
