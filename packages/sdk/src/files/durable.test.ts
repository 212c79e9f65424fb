import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { durableWriteStream } from './durable.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-durable-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;

describe('durableWriteStream', () => {
  it('writes every byte in order, single writes and corked ones (writev) alike, while flushing to disk in the background', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.uint8Array({ maxLength: 3000 }), fc.boolean()), { maxLength: 60 }),
        fc.integer({ min: 1, max: 20_000 }),
        async (chunks, every) => {
          const path = join(root, `f-${++files}`);
          let started = 0;
          const stream = durableWriteStream(
            path,
            { flags: 'wx' },
            { bytes: every, started: () => started++ },
          );
          for (const [bytes, corked] of chunks) {
            // Corked writes reach the file as one writev.
            if (corked) stream.cork();
            stream.write(Buffer.from(bytes));
            stream.write(Buffer.from(bytes.subarray(0, 7)));
            if (corked) process.nextTick(() => stream.uncork());
            if (stream.writableLength > 16_384) await new Promise((resolve) => stream.once('drain', resolve));
          }
          stream.end();
          await finished(stream);
          const expected = Buffer.concat(chunks.flatMap(([bytes]) => [bytes, bytes.subarray(0, 7)]));
          expect(readFileSync(path).equals(expected)).toBe(true);
          // A flush started at least once for each `every` bytes written, one at a time.
          if (expected.length >= 2 * every) expect(started).toBeGreaterThan(0);
          expect(stream.closed).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses to overwrite with flags wx, as createWriteStream does', async () => {
    const path = join(root, 'exists');
    const first = durableWriteStream(path, { flags: 'wx' });
    first.end('one');
    await finished(first);
    const second = durableWriteStream(path, { flags: 'wx' });
    await expect(finished(second)).rejects.toThrow(/EEXIST/);
    expect(readFileSync(path, 'utf8')).toBe('one');
  });
});
