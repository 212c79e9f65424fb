import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PieceWriter } from './pieces.js';

const MiB = 1024 * 1024;

/**
 * A stream that completes each write on a later turn and only then takes the chunk's bytes, as a
 * file stream does: a writer that reuses a buffer before its write completed shows here.
 */
function collector() {
  const chunks: Buffer[] = [];
  const out = new Writable({
    highWaterMark: 4 * MiB,
    write(chunk: Buffer, _encoding, done) {
      setImmediate(() => {
        chunks.push(Buffer.from(chunk));
        done();
      });
    },
  });
  return { out, bytes: () => Buffer.concat(chunks) };
}

describe('PieceWriter', () => {
  it('writes text and bytes, small and larger than a piece, in order, and knows where the next byte goes', async () => {
    const step = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 40 }).map((text) => ({ text })),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ bytes })),
      // Ranges of a previous output, from a buffer reused after: smaller than a piece (filling
      // pieces up to their end), as large or larger.
      fc.integer({ min: 1, max: 700_000 }).map((size) => ({ size })),
      fc.integer({ min: MiB - 1, max: 3 * MiB }).map((size) => ({ size })),
      fc.constant({ flush: true }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
        const { out, bytes } = collector();
        const pieces = new PieceWriter(out);
        const expected: Buffer[] = [];
        let offset = 0;
        const reused = Buffer.alloc(3 * MiB);
        for (const [i, s] of steps.entries()) {
          expect(pieces.offset).toBe(offset);
          if ('text' in s) {
            pieces.push(s.text);
            expected.push(Buffer.from(s.text));
          } else if ('bytes' in s) {
            pieces.pushBytes(s.bytes);
            expected.push(Buffer.from(s.bytes));
          } else if ('size' in s) {
            reused.fill(i % 251, 0, s.size);
            pieces.pushBytes(reused.subarray(0, s.size));
            expected.push(Buffer.from(reused.subarray(0, s.size)));
            reused.fill(0xee); // the caller reads into it again: the writer must hold its own copy
          } else {
            await pieces.flush();
          }
          offset = expected.reduce((total, b) => total + b.length, 0);
          if (pieces.full) await pieces.flush();
        }
        expect(pieces.offset).toBe(offset);
        await pieces.flush();
        await new Promise<void>((resolve) => out.end(resolve));
        expect(bytes().equals(Buffer.concat(expected))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});
