import { describe, expect, it } from 'vitest';
import {
  JsonArrayError,
  LineSplitter,
  parseJsonArray,
  parseJsonArrayBatches,
  type JsonArrayMode,
} from './json-array-stream.js';
import { layouts, testRecord, trickyRecords } from './test-server.js';

const encoder = new TextEncoder();

/** The bytes of `text` in chunks of `size` bytes (splitting multi-byte characters too). */
async function* bytes(text: string | Uint8Array, size = 1 << 16): AsyncGenerator<Uint8Array> {
  const all = typeof text === 'string' ? encoder.encode(text) : text;
  for (let start = 0; start < all.length; start += size) yield all.slice(start, start + size);
}

async function parse(text: string | Uint8Array, size?: number, maxLineLength?: number) {
  const modes: JsonArrayMode[] = [];
  const items: unknown[] = [];
  for await (const item of parseJsonArray(bytes(text, size), {
    onMode: (m) => modes.push(m),
    maxLineLength,
  })) {
    items.push(item);
  }
  return { items, modes };
}

async function failure(text: string | Uint8Array, size?: number) {
  const items: unknown[] = [];
  try {
    for await (const item of parseJsonArray(bytes(text, size))) items.push(item);
  } catch (error) {
    return { error: error as JsonArrayError, items };
  }
  throw new Error('expected the parse to fail');
}

describe('parseJsonArray: both paths yield the same elements', () => {
  const bodies: Record<string, string> = {
    ...Object.fromEntries(Object.entries(layouts).map(([name, layout]) => [name, layout(trickyRecords)])),
    crlf: layouts.lines(trickyRecords).replace(/\n/g, '\r\n'),
    commaFirst: `[\n${trickyRecords.map((r) => JSON.stringify(r)).join('\n,')}\n]`,
    closeOnLastLine: `[\n${trickyRecords.map((r) => JSON.stringify(r)).join(',\n')}]`,
    restOnOneLine: `[\n${JSON.stringify(trickyRecords).slice(1)}`,
    bomAndSpaces: `\uFEFF  [  \n${trickyRecords.map((r) => JSON.stringify(r)).join(',\n\n')}\n  ]  \n\n`,
  };

  for (const [name, body] of Object.entries(bodies)) {
    for (const size of [1, 3, 7, 64, 1 << 16]) {
      it(`${name} in chunks of ${size} bytes`, async () => {
        expect((await parse(body, size)).items).toEqual(trickyRecords);
      });
    }
  }

  it('decides the layout from the first bytes', async () => {
    expect((await parse(bodies.lines!)).modes).toEqual(['lines']);
    expect((await parse(bodies.oneLine!)).modes).toEqual(['general']);
    // Pretty-printed starts like ours, and hands over at its first line that is not a whole element.
    expect((await parse(bodies.pretty!)).modes).toEqual(['lines', 'general']);
  });

  it('hands an over-long line to the general parser instead of buffering it', async () => {
    const result = await parse(bodies.restOnOneLine!, 16, 100);
    expect(result.items).toEqual(trickyRecords);
    expect(result.modes).toEqual(['lines', 'general']);
  });

  it('reads empty arrays in every layout', async () => {
    for (const body of ['[\n]\n', '[]', '[ ]', '[\n\n]']) expect((await parse(body)).items).toEqual([]);
  });

  it('keeps a "__proto__" key as data, as JSON.parse does, in every layout', async () => {
    const text = '{"data":{"__proto__":"kept","inner":{"__proto__":{"polluted":true}}},"name":"x"}';
    const expected = JSON.parse(text);
    for (const body of [`[\n${text}\n]\n`, `[${text}, ${text}]`]) {
      const { items } = await parse(body, 7);
      for (const item of items) {
        expect(item).toEqual(expected);
        const data = (item as { data: Record<string, unknown> }).data;
        expect(Object.keys(data)).toEqual(['__proto__', 'inner']);
        expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
        expect((data.inner as { polluted?: boolean }).polluted).toBeUndefined();
      }
    }
  });

  it('keeps elements of any JSON type', async () => {
    expect((await parse('[\n1,\n"two",\nnull,\n[3]\n]\n')).items).toEqual([1, 'two', null, [3]]);
  });
});

describe('parseJsonArray: a cut or malformed body is an error, never a short list', () => {
  const lines = layouts.lines(trickyRecords);

  it.each([
    ['cut after a complete line', lines.slice(0, lines.indexOf('\n', lines.indexOf('\n') + 1) + 1)],
    ['cut inside a line', lines.slice(0, lines.length - 40)],
    ['cut before the closing ]', lines.slice(0, lines.lastIndexOf(']'))],
    ['cut one-line array', layouts.oneLine(trickyRecords).slice(0, -30)],
    ['cut pretty array', layouts.pretty(trickyRecords).slice(0, -3)],
    ['only the opening', '[\n'],
    ['empty body', ''],
  ])('%s: truncated', async (_name, body) => {
    for (const size of [1, 5, 1 << 16]) {
      const { error } = await failure(body, size);
      expect(error).toBeInstanceOf(JsonArrayError);
      expect(error.truncated).toBe(true);
    }
  });

  it('yields the complete elements before the cut, then fails', async () => {
    const body = `[\n${JSON.stringify(trickyRecords[0])},\n${JSON.stringify(trickyRecords[1])},\n{"_id":"0`;
    const { error, items } = await failure(body);
    expect(items).toEqual(trickyRecords.slice(0, 2));
    expect(error.truncated).toBe(true);
  });

  it.each([
    ['a broken element', `[\n{"a":1},\n{"a":,}\n]\n`],
    ['a broken element on one line', `[{"a":1},{"a" 2}]`],
    ['a comma before ]', `[\n{"a":1},\n]\n`],
    ['data after ]', `[\n{"a":1}\n]\n{"more":true}\n`],
    ['data after ] on one line', `[{"a":1}] trailing`],
    ['an object, not an array', `{"detail":"Not an array"}`],
    ['plain text', `<html>Bad gateway</html>`],
    ['two arrays', `[\n]\n[\n]\n`],
  ])('%s: malformed', async (_name, body) => {
    const { error } = await failure(body);
    expect(error).toBeInstanceOf(JsonArrayError);
    expect(error.truncated).toBe(false);
  });

  it('refuses invalid UTF-8, and a body cut inside a character', async () => {
    const invalid = new Uint8Array([...encoder.encode('[\n"a'), 0xff, ...encoder.encode('"\n]\n')]);
    expect((await failure(invalid)).error.truncated).toBe(false);
    const cut = encoder.encode('[\n"é');
    expect((await failure(cut.slice(0, cut.length - 1))).error.truncated).toBe(true);
  });

  it('lets errors of the byte source through unchanged', async () => {
    const broken = new Error('socket hang up');
    async function* source() {
      yield encoder.encode('[\n{"a":1},\n');
      throw broken;
    }
    for (const body of [source(), source()]) {
      await expect(
        (async () => {
          for await (const _ of parseJsonArray(body)) void _;
        })(),
      ).rejects.toBe(broken);
    }
  });
});

describe('parseJsonArray streams', () => {
  /** An endless body in our layout, counting the chunks it was asked for. */
  function endless(layout: 'lines' | 'oneLine') {
    const counter = { chunks: 0, stopped: false };
    async function* source() {
      try {
        yield encoder.encode(layout === 'lines' ? '[\n' : '[');
        for (let i = 0; ; i++) {
          counter.chunks++;
          yield encoder.encode(
            `${i ? ',' : ''}${layout === 'lines' ? '\n' : ''}${JSON.stringify(testRecord(i))}`,
          );
        }
      } finally {
        counter.stopped = true;
      }
    }
    return { counter, source: source() };
  }

  for (const layout of ['lines', 'oneLine'] as const) {
    it(`${layout}: yields before the body ends, reads little ahead, and stops the source on break`, async () => {
      const { counter, source } = endless(layout);
      let taken = 0;
      let maxAhead = 0;
      let wrong = 0;
      for await (const item of parseJsonArray(source)) {
        if ((item as { _id: string })._id !== testRecord(taken)._id) wrong++;
        maxAhead = Math.max(maxAhead, counter.chunks - taken);
        if (++taken === 1500) break;
      }
      expect(wrong).toBe(0);
      // Never more than a few chunks ahead of what was handed out: the buffers are bounded.
      expect(maxAhead).toBeLessThan(layout === 'lines' ? 3 : 600);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(counter.stopped).toBe(true);
    });
  }
});

describe('parseJsonArrayBatches: lines across chunk boundaries', () => {
  const body = layouts.lines(trickyRecords);
  const all = encoder.encode(body);

  async function batches(size: number) {
    const out: unknown[][] = [];
    for await (const batch of parseJsonArrayBatches(bytes(all, size))) out.push(batch);
    return out;
  }

  it('yields every element once, in order, whatever the chunk size (1 byte up to the whole body)', async () => {
    for (const size of [1, 2, 3, 7, 13, 64, 100, 1000, all.length]) {
      const out = await batches(size);
      expect(out.every((batch) => batch.length > 0)).toBe(true);
      expect(out.flat()).toEqual(trickyRecords);
    }
  });

  it('splits at every position of the body: two chunks give the same elements', async () => {
    for (let cut = 1; cut < all.length; cut += Math.max(1, Math.floor(all.length / 300))) {
      async function* two() {
        yield all.slice(0, cut);
        yield all.slice(cut);
      }
      const items: unknown[] = [];
      for await (const batch of parseJsonArrayBatches(two())) items.push(...batch);
      expect(items).toEqual(trickyRecords);
    }
  });

  it('hands out the elements parsed before an error in the same chunk, then throws', async () => {
    const text = `[\n{"a":1},\n{"a":2}\n]\n{"late":true}\n`;
    const seen: unknown[][] = [];
    let error: unknown;
    try {
      for await (const batch of parseJsonArrayBatches(bytes(text))) seen.push(batch);
    } catch (caught) {
      error = caught;
    }
    expect(seen).toEqual([[{ a: 1 }, { a: 2 }]]);
    expect(error).toBeInstanceOf(JsonArrayError);
    expect((error as JsonArrayError).message).toMatch(/after the closing \]/);
  });

  it('hands out the elements before a line that is not one element, then continues with the general parser', async () => {
    const text = `[\n{"a":1},\n{"b":\n2},\n{"c":3}\n]\n`;
    const modes: JsonArrayMode[] = [];
    const seen: unknown[][] = [];
    for await (const batch of parseJsonArrayBatches(bytes(text), { onMode: (m) => modes.push(m) }))
      seen.push(batch);
    expect(seen[0]).toEqual([{ a: 1 }]);
    expect(seen.flat()).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
    expect(modes).toEqual(['lines', 'general']);
  });
});

describe('LineSplitter', () => {
  it('keeps a line cut between two texts, and resumes the search where it stopped', () => {
    const lines = new LineSplitter();
    const into: unknown[] = [];
    let text = '{"a":1},\n{"b":';
    expect(lines.parse(text, false, into)).toBeUndefined();
    expect(into).toEqual([{ a: 1 }]);
    text = text.slice(lines.consumed) + '2},\n  {"c":"x\\ny"}  \n';
    expect(text.startsWith('{"b":2}')).toBe(true);
    expect(lines.parse(text, false, into)).toBeUndefined();
    text = text.slice(lines.consumed) + ']';
    expect(lines.parse(text, true, into)).toBeUndefined();
    expect(into).toEqual([{ a: 1 }, { b: 2 }, { c: 'x\ny' }]);
    expect(lines.state).toBe('closed');
  });

  it('trims what String.prototype.trim trims around a line', () => {
    const into: unknown[] = [];
    const lines = new LineSplitter();
    expect(lines.parse('\u00a0\ufeff {"a":1}\u3000\r\n\t]\u2028\n', true, into)).toBeUndefined();
    expect(into).toEqual([{ a: 1 }]);
    expect(lines.state).toBe('closed');
  });
});
