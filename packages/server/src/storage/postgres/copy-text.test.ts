import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { copyRowsAsLines, inlineParameters } from './copy-text.js';

/** A value as PostgreSQL's COPY TO writes it in text format (src/backend/commands/copyto.c). */
function copyEscaped(value: string): string {
  const escapes: Record<string, string> = {
    '\\': '\\\\',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\b': '\\b',
    '\f': '\\f',
    '\v': '\\v',
  };
  return value.replace(/[\\\n\r\t\b\f\v]/g, (c) => escapes[c]!);
}

async function* pieces(bytes: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let from = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    yield bytes.subarray(from, cut);
    from = cut;
  }
  yield bytes.subarray(from);
}

async function decoded(bytes: Buffer, cuts: number[], chunkBytes: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const chunk of copyRowsAsLines(pieces(bytes, cuts), chunkBytes)) out.push(Buffer.from(chunk));
  return out;
}

describe('copyRowsAsLines: COPY text rows as listing lines', () => {
  it('gives back every value, however the bytes are cut (inside escapes, UTF-8 sequences, row ends)', async () => {
    // JSON lines as PostgreSQL sends them: backslashes doubled; the other escapes only stand for
    // whitespace between tokens, which becomes a space.
    const value = fc.string({ unit: 'binary', maxLength: 60 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(value, { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.integer({ min: 1, max: 64 }),
        async (values, cuts, chunkBytes) => {
          const bytes = Buffer.from(values.map((v) => `${copyEscaped(v)}\n`).join(''));
          const chunks = await decoded(bytes, cuts, chunkBytes);
          const expected = values.map((v) => `,\n${v.replace(/[\n\r\t]/g, ' ')}`).join('');
          expect(Buffer.concat(chunks).toString()).toBe(expected);
          // Every chunk but the last holds at least chunkBytes: few, large writes to the socket.
          chunks.slice(0, -1).forEach((chunk) => expect(chunk.length).toBeGreaterThanOrEqual(chunkBytes));
          expect(chunks.every((chunk) => chunk.length > 0)).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('keeps a JSON line with escaped quotes and backslashes byte for byte', async () => {
    const line = JSON.stringify({ a: 'say "hi" \\ back\\slash \n \u0001 é 😀', b: [1, 2.5] });
    const chunks = await decoded(
      Buffer.from(`${copyEscaped(line)}\n${copyEscaped(line)}\n`),
      [7, 8, 9],
      4096,
    );
    expect(Buffer.concat(chunks).toString()).toBe(`,\n${line},\n${line}`);
    expect(JSON.parse(`[${Buffer.concat(chunks).toString().slice(1)}]`)).toHaveLength(2);
  });

  it('refuses a NULL row and output cut inside an escape', async () => {
    await expect(decoded(Buffer.from('a\n\\N\n'), [], 16)).rejects.toThrow(/NULL/);
    await expect(decoded(Buffer.from('a\\'), [], 16)).rejects.toThrow(/escape/);
  });
});

describe('inlineParameters: a query for COPY, which takes no parameters', () => {
  const literal = (value: string) => pg.Client.prototype.escapeLiteral(value);

  it('writes each $n as a literal, outside quoted strings and names only', () => {
    const text = `SELECT concat('a $1 b', "col$2", $1) FROM t WHERE x = $2 AND y IN ($10, $3) LIMIT $11`;
    const parameters = ["it's", 'back\\slash', null, 4, 5, 6, 7, 8, 9, true, 25];
    expect(inlineParameters(text, parameters, literal)).toBe(
      `SELECT concat('a $1 b', "col$2", 'it''s') FROM t WHERE x =  E'back\\\\slash' AND y IN (TRUE, NULL) LIMIT 25`,
    );
  });

  it('refuses what it cannot write: a missing parameter, an object, a number that is not finite', () => {
    expect(() => inlineParameters('SELECT $2', ['a'], literal)).toThrow(/no parameter \$2/);
    expect(() => inlineParameters('SELECT $1', [{}], literal)).toThrow(/cannot be written/);
    expect(() => inlineParameters('SELECT $1', [Number.NaN], literal)).toThrow(/cannot be written/);
  });
});
