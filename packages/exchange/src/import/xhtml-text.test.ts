import { SaxesParser } from 'saxes';
import { describe, expect, it } from 'vitest';
import { embeddedObjectWarning, XhtmlText } from './xhtml-text.js';

/** The text and warnings of an XHTML fragment, fed to XhtmlText as the ReqIF reader feeds it. */
function read(xhtml: string): { text: string; warnings: string[] } {
  const text = new XhtmlText();
  const local = (name: string) => name.slice(name.indexOf(':') + 1);
  const parser = new SaxesParser({ xmlns: false });
  parser.on('opentag', (tag) => text.open(local(tag.name), tag.attributes as Record<string, string>));
  parser.on('text', (chunk) => text.text(chunk));
  parser.on('closetag', (tag) => text.close(local(tag.name)));
  parser.write(`<root xmlns:xhtml="http://www.w3.org/1999/xhtml">${xhtml}</root>`).close();
  const { text: result, embedded } = text.result();
  return { text: result, warnings: embedded.map(embeddedObjectWarning) };
}

describe('XhtmlText', () => {
  it('two line breaks leave an empty line; spaces collapse outside <pre> and stay inside it', () => {
    expect(
      read('<xhtml:p>a  \n  b<xhtml:br/><xhtml:br/>c</xhtml:p><xhtml:pre>x  y\n  z</xhtml:pre>').text,
    ).toBe('a b\n\nc\nx  y\n  z');
  });

  it('an object without fallback content is its alt text; one without either leaves no text', () => {
    expect(
      read('<xhtml:p>Fig: <xhtml:object data="f.png" type="image/png" alt="the valve"/></xhtml:p>'),
    ).toEqual({
      text: 'Fig: the valve',
      warnings: ['embedded object f.png (image/png) is not imported: attach it to the record by hand.'],
    });
    expect(read('<xhtml:div><xhtml:object data="x.bin"/></xhtml:div>')).toEqual({
      text: '',
      warnings: ['embedded object x.bin is not imported: attach it to the record by hand.'],
    });
  });

  it('an object nested in another (a preview of an OLE file) names both files', () => {
    const { text, warnings } = read(
      '<xhtml:object data="w.ole" type="application/oleobject"><xhtml:object data="w.png" type="image/png">Wiring</xhtml:object></xhtml:object>',
    );
    expect(text).toBe('Wiring');
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toContain('w.png (image/png)');
  });
});
