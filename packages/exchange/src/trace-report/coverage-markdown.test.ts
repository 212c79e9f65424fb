import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import type { LinkType } from '../export/model.js';
import { coverageMarkdown, coverageOf, markdownText, ruleName } from './coverage.js';
import type { CoverageTopic } from './coverage-types.js';

/** Texts of the data that are Markdown or HTML syntax, each to be read back as itself. */
const HOSTILE = [
  '<img src=x onerror=alert(1)><script>alert(2)</script>',
  'REQ|1',
  'two\nlines\r\nand\rthree',
  '[x](javascript:alert(1))',
  '![pic](https://evil.example/p.png)',
  '`tick` and ``two``',
  '**star** *em* _under_ ~~gone~~',
  'back\\slash\\|pipe\\',
  '&lt;not-a-tag&gt; &amp; &#60;b&#62;',
  'www.evil.example https://evil.example/x x@evil.example',
  '<https://evil.example>',
  '# hash #',
  '$x^2$ @someone',
  'REQ_001',
  '---',
];

const topics: CoverageTopic[] = [
  { revisionId: 'r0', historyId: 'h0', name: '<img src=x onerror=alert(1)><script>alert(2)</script>' },
  { revisionId: 'r1', historyId: 'h1', name: 'Tests | with [a](javascript:alert(1))\nline break' },
];
const linkType: LinkType = {
  name: 'verifies *bold* `code` <b>|',
  incoming: 'verified by',
  sourceTopicHistoryId: 'h0',
  targetTopicHistoryId: 'h1',
};

/** Every hostile id as a source record (the first five linked, one suspect) and as a target. */
function hostileReport() {
  const sources = new Map(HOSTILE.map((id, i) => [`s${i}`, id]));
  const targets = new Map(HOSTILE.map((id, i) => [`t${i}`, id]));
  const links = HOSTILE.slice(0, 5).map((_, i) => ({
    source: `s${i}`,
    target: `t${i + 3}`,
    linkType: linkType.name,
    suspect: i === 0,
  }));
  return coverageOf(
    topics,
    new Map([
      ['r0', sources],
      ['r1', targets],
    ]),
    links,
    [linkType],
  );
}

/** How a reader shows a text: one line, spaces at its ends dropped. */
const shown = (text: string) => text.replace(/\r\n|\r|\n/g, ' ').trim();
const decode = (html: string) =>
  html.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!,
  );

/** The text inside each element `tag` of the rendered HTML, decoded; fails on any other markup inside. */
function texts(html: string, tag: string): string[] {
  return [...html.matchAll(new RegExp(`<${tag}(?: [^>]*)?>([\\s\\S]*?)</${tag}>`, 'g'))].map(([, inner]) => {
    expect(inner, `markup inside <${tag}>`).not.toMatch(/</);
    return decode(inner!);
  });
}

describe('coverageMarkdown read by a Markdown reader (marked, GFM)', () => {
  const report = hostileReport();
  const md = coverageMarkdown(report, 50);
  const html = marked.parse(md, { gfm: true, async: false });

  it('renders no element of the data: no HTML, links, images, code, emphasis or line breaks', () => {
    const tags = new Set([...html.matchAll(/<\/?([a-zA-Z][\w-]*)/g)].map(([, tag]) => tag!.toLowerCase()));
    expect([...tags].sort()).toEqual(['h1', 'h2', 'p', 'table', 'tbody', 'td', 'th', 'thead', 'tr']);
  });

  it('keeps every table’s columns and shows each name and id exactly', () => {
    const rule = report.rules.find((r) => r.rule.linkType !== undefined)!;
    expect(rule.links).toHaveLength(5);
    const cells = texts(html, 'td');
    const headers = texts(html, 'th');
    // The summary: one row of 7 cells per rule; then each rule's links, 3 cells a row.
    expect(headers).toEqual([
      ...['rule', 'covered', 'of', 'coverage', 'uncovered', 'orphans', 'suspect links'],
      ...[shown(topics[0]!.name), shown(topics[1]!.name), 'suspect'],
    ]);
    const summary = report.rules.flatMap((r) => [
      shown(ruleName(r.rule)),
      String(r.covered),
      String(r.total),
      expect.stringMatching(/%/),
      String(r.uncovered.length),
      String(r.orphans.length),
      String(r.suspect.length),
    ]);
    const suspect = new Set(rule.suspect.map(([s, t]) => `${s}\u0000${t}`));
    const links = rule.links.flatMap(([s, t]) => [
      shown(s),
      shown(t),
      suspect.has(`${s}\u0000${t}`) ? 'yes' : '',
    ]);
    expect(cells).toEqual([...summary, ...links]);
  });

  it('shows rule names in headings and ids in the lists as they are', () => {
    expect(texts(html, 'h2')).toEqual(report.rules.map((r) => shown(ruleName(r.rule))));
    const paragraphs = texts(html, 'p');
    for (const r of report.rules) {
      expect(paragraphs).toContain(
        `Not linked (${r.uncovered.length}): ${r.uncovered.map(shown).join(', ')}`,
      );
      expect(paragraphs).toContain(
        `Orphans of ${shown(r.rule.target.name)} (${r.orphans.length}): ${r.orphans.map(shown).join(', ')}`,
      );
    }
    expect(paragraphs.some((p) => p.includes(`${shown(HOSTILE[0]!)} → ${shown(HOSTILE[3]!)}`))).toBe(true);
  });

  it('reads each hostile text back as itself, alone and inside a line', () => {
    for (const text of HOSTILE) {
      const line = marked.parse(`a ${markdownText(text)} b`, { gfm: true, async: false });
      expect(texts(line, 'p'), JSON.stringify(text)).toEqual([`a ${shown(text)} b`]);
    }
  });

  it('leaves readable ids readable in the raw file', () => {
    expect(markdownText('REQ_001')).toBe('REQ_001');
    expect(markdownText('SW-REQ.12 (draft)')).toBe('SW-REQ.12 (draft)');
  });
});
