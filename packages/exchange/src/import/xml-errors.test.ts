import { describe, expect, it } from 'vitest';
import { firstBareAmpersand, saxesErrorParts } from './xml-errors.js';

async function* chunksOf(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

const END = { line: 1e9, column: 1 };

describe('firstBareAmpersand', () => {
  const text = [
    '<?xml version="1.0"?>',
    '<r a="x &amp; y &#38; &#x26;">',
    '<!-- R&D, & alone -->',
    '<![CDATA[ a & b ]]><?pi & ?>',
    '<t>caf&eacute; &#x1F600; 😀 R&D</t>',
    '</r>',
  ].join('\r\n');

  it('finds the first "&" that starts no reference, outside comments, CDATA and instructions, whatever the chunks', async () => {
    for (const size of [1, 3, 7, 64, 1 << 16])
      expect(await firstBareAmpersand(chunksOf(text, size), END), `chunks of ${size}`).toEqual({
        line: 5,
        column: 29,
      });
  });

  it('looks no further than the error it explains, and finds nothing in well-formed text', async () => {
    expect(await firstBareAmpersand(chunksOf(text, 5), { line: 5, column: 29 })).toBeUndefined();
    expect(await firstBareAmpersand(chunksOf(text.replace('R&D<', 'R&amp;D<'), 5), END)).toBeUndefined();
    expect(await firstBareAmpersand(chunksOf('<a b="R&D"/>', 4), END)).toEqual({ line: 1, column: 8 });
  });
});

describe('saxesErrorParts', () => {
  it("takes saxes's line:column prefix apart", () => {
    expect(saxesErrorParts(new Error('136:21: disallowed character in entity name.'))).toEqual({
      at: { line: 136, column: 21 },
      what: 'disallowed character in entity name.',
    });
    expect(saxesErrorParts(new Error('something else'))).toEqual({ what: 'something else' });
  });
});
