import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRecordLines, recordText } from './record-lines.js';

/** Strings with what breaks naive line handling: escapes, brackets, commas, quotes, non-ASCII. */
const awkward = fc.string({
  unit: fc.constantFrom('a', '\n', '\r', ']', '[', ',', '"', '\\', '{', '}', 'é', '😀', '\u2028', ' '),
  maxLength: 12,
});
const hexId = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 24, maxLength: 24 });
const record = fc.record({
  _id: hexId,
  name: awkward,
  data: fc.dictionary(
    awkward,
    fc.oneof(awkward, fc.double({ noNaN: true }), fc.boolean(), fc.constant(null)),
  ),
});
const page = fc.record({
  cursor: awkward,
  more: fc.boolean(),
  records: fc.array(record, { maxLength: 8 }),
  removed: fc.array(hexId, { maxLength: 3 }),
});

/** A page as RXS writes it: the head, `records` one a line, then `removed` after the array. */
function rxsLayout(value: { records: unknown[]; removed?: unknown } & Record<string, unknown>, crlf = false) {
  const { records, removed, ...head } = value;
  const open = JSON.stringify({ ...head, records: 0 }).slice(0, -2); // up to `"records":`
  const eol = crlf ? '\r\n' : '\n';
  const lines = records.map((r) => JSON.stringify(r)).join(`,${eol}`);
  return `${open}[${eol}${lines}${records.length > 0 ? eol : ''}]${eol},"removed":${JSON.stringify(removed ?? [])}}`;
}

describe('parseRecordLines', () => {
  it('gives what JSON.parse gives, and each record its own text, for pages laid out one record a line', () => {
    fc.assert(
      fc.property(page, fc.boolean(), (value, crlf) => {
        const text = rxsLayout(value, crlf);
        const parsed = parseRecordLines(text) as { records: object[] };
        expect(parsed).toEqual(JSON.parse(text));
        parsed.records.forEach((r, i) => expect(recordText(r)).toBe(JSON.stringify(value.records[i])));
      }),
      { numRuns: 300 },
    );
  });

  it('other layouts, nested "records" keys and broken text: what JSON.parse gives or throws, no texts', () => {
    const layouts = [
      (v: unknown) => JSON.stringify(v),
      (v: unknown) => JSON.stringify(v, null, 2),
      // A nested object's "records" array laid out by line: not the page's records.
      (v: { records: unknown[] }) => `{"meta":${rxsLayout({ records: v.records })},"records":[]}`,
    ];
    fc.assert(
      fc.property(page, fc.nat(layouts.length - 1), (value, pick) => {
        const text = layouts[pick]!(value);
        const parsed = parseRecordLines(text) as { records: object[] };
        expect(parsed).toEqual(JSON.parse(text));
        for (const r of parsed.records) expect(recordText(r)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
    // Broken: a comma missing between two record lines, one too many, a cut answer.
    const good = rxsLayout({ cursor: 'c', records: [{ _id: 'a' }, { _id: 'b' }], removed: [] });
    for (const broken of [
      good.replace('},\n{', '}\n{'),
      good.replace('}\n]', '},\n]'),
      good.slice(0, good.length - 5),
    ]) {
      expect(() => JSON.parse(broken)).toThrow();
      expect(() => parseRecordLines(broken)).toThrow(SyntaxError);
    }
  });
});
