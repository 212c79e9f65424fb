/**
 * PostgreSQL's COPY text format both ways: the query written for COPY, which takes no parameters
 * (inlineParameters), and its rows read back (copyRowsAsLines).
 *
 * `COPY (SELECT <one text column>) TO STDOUT` sends each row as its value and `\n`, a backslash
 * written `\\`, and newline, carriage return, tab, backspace, form feed and vertical tab as `\n` `\r`
 * `\t` `\b` `\f` `\v` (a NULL would be `\N`). A listing reads its lines this way as bytes, straight
 * from the wire, without a string per row (docs/benchmarks.md, 1b).
 */

/** The listing's separator before each line (json-array-stream.ts). */
const SEPARATOR = Buffer.from(',\n');
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
const SPACE = 0x20;

/**
 * What an escape stands for. A newline, carriage return or tab can only be whitespace between JSON
 * tokens (inside a JSON string it is escaped): a space keeps the value's meaning and its line whole.
 */
const UNESCAPED: Record<number, number> = {
  0x6e: SPACE, // \n
  0x72: SPACE, // \r
  0x74: SPACE, // \t
  0x62: 0x08, // \b
  0x66: 0x0c, // \f
  0x76: 0x0b, // \v
};
const NULL_MARK = 0x4e; // \N

/**
 * COPY's rows of one text column (in chunks cut anywhere) as `,\n<value>` lines, in chunks of at
 * least `chunkBytes` (but the last): the listing's chunk format. A NULL value fails.
 */
export async function* copyRowsAsLines(
  chunks: AsyncIterable<Buffer>,
  chunkBytes: number,
): AsyncGenerator<Buffer> {
  // Room for a chunk and the input that completes it; a larger input grows it (copying what it holds).
  const capacity = 2 * chunkBytes;
  let out = Buffer.allocUnsafe(capacity);
  let o = 0;
  let rowStart = true;
  let escaped = false;
  for await (const chunk of chunks) {
    const n = chunk.length;
    // Each input byte gives at most two output bytes (a row's end becomes the next `,\n`).
    const needed = o + 2 * n + SEPARATOR.length;
    if (needed > out.length) {
      const larger = Buffer.allocUnsafe(needed + chunkBytes);
      out.copy(larger, 0, 0, o);
      out = larger;
    }
    let i = 0;
    if (escaped && n > 0) {
      o = unescapeByte(chunk[0]!, out, o);
      escaped = false;
      i = 1;
    }
    while (i < n) {
      if (rowStart) {
        o += SEPARATOR.copy(out, o);
        rowStart = false;
      }
      let end = chunk.indexOf(NEWLINE, i);
      if (end === -1) end = n;
      for (let slash = chunk.indexOf(BACKSLASH, i); slash !== -1 && slash < end;) {
        o += chunk.copy(out, o, i, slash);
        if (slash + 1 === n) {
          escaped = true;
          i = n;
          break;
        }
        o = unescapeByte(chunk[slash + 1]!, out, o);
        i = slash + 2;
        slash = chunk.indexOf(BACKSLASH, i);
      }
      if (i >= n) break;
      o += chunk.copy(out, o, i, end);
      if (end < n) rowStart = true;
      i = end + 1;
    }
    if (o >= chunkBytes) {
      yield out.subarray(0, o);
      out = Buffer.allocUnsafe(capacity);
      o = 0;
    }
  }
  if (escaped) throw new Error('COPY output ended inside an escape.');
  if (o > 0) yield out.subarray(0, o);
}

function unescapeByte(code: number, out: Buffer, o: number): number {
  if (code === NULL_MARK) throw new Error('A listing line was NULL in COPY output.');
  out[o] = UNESCAPED[code] ?? code;
  return o + 1;
}

/**
 * `text` with each `$n` outside quoted strings and names replaced by parameter n as a literal: COPY
 * takes no parameters. Strings go through the driver's `escapeLiteral`; anything but a string, a
 * finite number, a boolean or null is refused.
 */
export function inlineParameters(
  text: string,
  parameters: readonly unknown[],
  literal: (value: string) => string,
): string {
  return text.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\$(\d+)/g, (match, n: string | undefined) => {
    if (n === undefined) return match;
    const index = Number(n) - 1;
    if (index >= parameters.length) throw new Error(`COPY: the query has no parameter $${n}.`);
    const value = parameters[index];
    if (typeof value === 'string') return literal(value);
    if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint')
      return String(value);
    if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
    if (value === null) return 'NULL';
    throw new Error(`COPY: parameter $${n} (${typeof value}) cannot be written into the query.`);
  });
}
