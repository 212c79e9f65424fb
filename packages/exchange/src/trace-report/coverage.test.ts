import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LinkType } from '../export/model.js';
import { CoverageCollector, coverageMarkdown, coverageOf } from './coverage.js';
import type { CoverageRule, CoverageTopic, RuleCoverage } from './coverage-types.js';
import { coverageHtml } from './html.js';

const topic = (n: number): CoverageTopic => ({
  revisionId: `rev${n}`,
  historyId: `hist${n}`,
  name: `Topic ${n}`,
});

/**
 * Coverage and orphans against an independent count: for each source record, is there any counted
 * trace to a record of the target topic; for each target record, from one of the source topic.
 */
interface Link {
  source: string;
  target: string;
  linkType?: string;
  suspect?: boolean;
}

/** The coverage of a rule computed from the readable-id strings, not the report's numbers: the oracle. */
function oracleRule(
  rule: CoverageRule,
  records: ReadonlyMap<string, ReadonlyMap<string, string>>,
  links: readonly Link[],
): RuleCoverage {
  const sources = records.get(rule.source.revisionId) ?? new Map<string, string>();
  const targets = records.get(rule.target.revisionId) ?? new Map<string, string>();
  const linkedSources = new Set<string>();
  const linkedTargets = new Set<string>();
  const pairs = new Set<string>();
  const suspectPairs = new Set<string>();
  const counted: [string, string][] = [];
  const suspect: [string, string][] = [];
  const count = (source: string, target: string, isSuspect: boolean) => {
    linkedSources.add(source);
    linkedTargets.add(target);
    const key = `${source}\u0000${target}`;
    const readable: [string, string] = [sources.get(source)!, targets.get(target)!];
    if (isSuspect && !suspectPairs.has(key)) {
      suspectPairs.add(key);
      suspect.push(readable);
    }
    if (pairs.has(key)) return;
    pairs.add(key);
    counted.push(readable);
  };
  for (const link of links) {
    const isSuspect = link.suspect === true;
    if (rule.linkType !== undefined) {
      if (link.linkType === rule.linkType && sources.has(link.source) && targets.has(link.target))
        count(link.source, link.target, isSuspect);
      continue;
    }
    if (sources.has(link.source) && targets.has(link.target)) count(link.source, link.target, isSuspect);
    else if (sources.has(link.target) && targets.has(link.source)) count(link.target, link.source, isSuspect);
  }
  const uncovered = [...sources].filter(([id]) => !linkedSources.has(id)).map(([, readable]) => readable);
  const orphans = [...targets].filter(([id]) => !linkedTargets.has(id)).map(([, readable]) => readable);
  const total = sources.size;
  const covered = total - uncovered.length;
  const byPair = (a: [string, string], b: [string, string]) =>
    a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
  counted.sort(byPair);
  suspect.sort(byPair);
  return {
    rule,
    total,
    covered,
    percent: total === 0 ? 100 : (covered / total) * 100,
    uncovered,
    orphans,
    links: counted,
    suspect,
  };
}

describe('coverageOf', () => {
  it('property: the same report as computing it from the strings, readable ids alike or not', () => {
    const graph = fc.record({
      sizes: fc.tuple(fc.nat(4), fc.nat(4), fc.nat(3)),
      // Few readable ids: records of one topic often share one (ties must sort as strings do).
      readable: fc.array(fc.constantFrom('B', 'a', 'A-10', 'Ä'), {
        minLength: 16,
        maxLength: 16,
      }),
      links: fc.array(
        fc.record({
          from: fc.tuple(fc.nat(3), fc.nat(3)),
          to: fc.tuple(fc.nat(3), fc.nat(3)),
          linkType: fc.constantFrom(undefined, 'verified_by', 'other'),
          suspect: fc.option(fc.boolean(), { nil: undefined }),
        }),
        { maxLength: 24 },
      ),
      withType: fc.boolean(),
    });
    fc.assert(
      fc.property(graph, ({ sizes, readable, links, withType }) => {
        const topics = [topic(0), topic(1), topic(2)];
        let next = 0;
        const records = new Map(
          topics.map((t, i) => [
            t.revisionId,
            new Map(Array.from({ length: sizes[i]! }, (_, r) => [`t${i}r${r}`, readable[next++]!])),
          ]),
        );
        // Topic 3 does not exist: links to its records count nowhere.
        const traces = links.map((l) => ({
          source: `t${l.from[0]}r${l.from[1]}`,
          target: `t${l.to[0]}r${l.to[1]}`,
          ...(l.linkType && { linkType: l.linkType }),
          ...(l.suspect !== undefined && { suspect: l.suspect }),
        }));
        const linkTypes: LinkType[] = withType
          ? [
              {
                name: 'verified_by',
                incoming: 'verifies',
                sourceTopicHistoryId: 'hist1',
                targetTopicHistoryId: 'hist0',
              },
            ]
          : [];
        const report = coverageOf(topics, records, traces, linkTypes);
        expect(report.rules.map((r) => oracleRule(r.rule, records, traces))).toEqual(report.rules);
      }),
      { numRuns: 500 },
    );
  });

  it('sorts the links of records that share a readable id by their strings, as the report shows them', () => {
    const records = new Map([
      [
        'rev0',
        new Map([
          ['s1', 'X'],
          ['s2', 'X'],
        ]),
      ],
      [
        'rev1',
        new Map([
          ['t1', 'A'],
          ['t9', 'B'],
        ]),
      ],
    ]);
    const links = [
      { source: 's1', target: 't9' },
      { source: 's2', target: 't1', suspect: true },
      { source: 't1', target: 's2' },
    ];
    const [rule] = coverageOf([topic(0), topic(1)], records, links, []).rules;
    expect(rule!.links).toEqual([
      ['X', 'A'],
      ['X', 'B'],
    ]);
    expect(rule!.suspect).toEqual([['X', 'A']]);
  });

  it('property: coverage, uncovered records and orphans equal a direct count on random graphs', () => {
    const graph = fc.record({
      sizes: fc.tuple(fc.nat(6), fc.nat(6), fc.nat(4)),
      links: fc.array(
        fc.record({
          from: fc.tuple(fc.nat(2), fc.nat(6)),
          to: fc.tuple(fc.nat(2), fc.nat(6)),
          named: fc.boolean(),
          suspect: fc.boolean(),
        }),
        { maxLength: 25 },
      ),
      withType: fc.boolean(),
    });
    fc.assert(
      fc.property(graph, ({ sizes, links, withType }) => {
        const topics = [topic(0), topic(1), topic(2)];
        const records = new Map(
          topics.map((t, i) => [
            t.revisionId,
            new Map(Array.from({ length: sizes[i]! }, (_, r) => [`t${i}r${r}`, `T${i}-${r}`])),
          ]),
        );
        const recordId = ([t, r]: [number, number]) => `t${t}r${r}`;
        const traces = links.map((l) => ({
          source: recordId(l.from),
          target: recordId(l.to),
          linkType: withType && l.named && l.from[0] === 0 && l.to[0] === 1 ? 'verified_by' : undefined,
          suspect: l.suspect,
        }));
        const linkTypes: LinkType[] = withType
          ? [
              {
                name: 'verified_by',
                incoming: 'verifies',
                sourceTopicHistoryId: 'hist0',
                targetTopicHistoryId: 'hist1',
              },
            ]
          : [];
        const report = coverageOf(topics, records, traces, linkTypes);
        for (const r of report.rules) {
          const s = Number(r.rule.source.revisionId.slice(3));
          const g = Number(r.rule.target.revisionId.slice(3));
          const counts = (tr: (typeof traces)[number], a: string, b: string) =>
            r.rule.linkType !== undefined
              ? tr.linkType === r.rule.linkType && tr.source === a && tr.target === b
              : (tr.source === a && tr.target === b) || (tr.source === b && tr.target === a);
          const sourceIds = [...records.get(`rev${s}`)!.keys()];
          const targetIds = [...records.get(`rev${g}`)!.keys()];
          const linked = (a: string) => targetIds.some((b) => traces.some((tr) => counts(tr, a, b)));
          const linkedFrom = (b: string) => sourceIds.some((a) => traces.some((tr) => counts(tr, a, b)));
          const uncovered = sourceIds.filter((a) => !linked(a));
          expect(r.total).toBe(sourceIds.length);
          expect(r.covered).toBe(sourceIds.length - uncovered.length);
          expect(r.uncovered).toEqual(uncovered.map((a) => records.get(`rev${s}`)!.get(a)));
          expect(r.orphans).toEqual(
            targetIds.filter((b) => !linkedFrom(b)).map((b) => records.get(`rev${g}`)!.get(b)),
          );
          expect(r.percent).toBeCloseTo(
            sourceIds.length === 0 ? 100 : (100 * (sourceIds.length - uncovered.length)) / sourceIds.length,
          );
          for (const [a, b] of r.links) expect(a.startsWith(`T${s}-`) && b.startsWith(`T${g}-`)).toBe(true);
          // Suspect: the counted pairs of which some counted trace is suspect.
          const readable = (a: string, b: string) =>
            `${records.get(`rev${s}`)!.get(a)}>${records.get(`rev${g}`)!.get(b)}`;
          const suspectPairs = sourceIds.flatMap((a) =>
            targetIds
              .filter((b) => traces.some((tr) => tr.suspect && counts(tr, a, b)))
              .map((b) => readable(a, b)),
          );
          expect(r.suspect.map(([a, b]) => `${a}>${b}`).sort()).toEqual(suspectPairs.sort());
        }
        // Rules: the named link, then consecutive topics without one.
        const names = report.rules.map(
          (r) => `${r.rule.source.name}>${r.rule.target.name}:${r.rule.linkType ?? ''}`,
        );
        expect(names).toEqual(
          withType
            ? ['Topic 0>Topic 1:verified_by', 'Topic 1>Topic 2:']
            : ['Topic 0>Topic 1:', 'Topic 1>Topic 2:'],
        );
      }),
      { numRuns: 300 },
    );
  });

  it("a mapping's link no trace follows is a rule at 0%, not replaced by the default rule", async () => {
    const collector = new CoverageCollector();
    const topicPart = (n: number) => ({
      kind: 'topic' as const,
      topic: { revisionId: `rev${n}`, historyId: `hist${n}`, name: `Topic ${n}` } as never,
    });
    const record = (n: number, id: string) => ({
      kind: 'record' as const,
      record: { id, readableId: id.toUpperCase(), topicRevisionId: `rev${n}` } as never,
    });
    const reversed: LinkType = {
      name: 'verifies',
      incoming: 'verified by',
      sourceTopicHistoryId: 'hist1',
      targetTopicHistoryId: 'hist0',
    };
    await collector.writeParts([
      topicPart(0),
      record(0, 'r1'),
      topicPart(1),
      record(1, 't1'),
      {
        kind: 'traces',
        // A trace from topic 0 to topic 1: the other way round from the mapping's link.
        traces: [
          {
            id: 'x',
            source: { id: 'r1', type: 'Record' },
            target: { id: 't1', type: 'Record' },
            relationTypes: ['is_related'],
            suspect: false,
          },
        ],
        linkTypes: [],
        mappedLinkTypes: [reversed],
      },
    ]);
    const [rule, ...others] = collector.report().rules;
    expect(others).toEqual([]);
    expect(rule).toMatchObject({ covered: 0, total: 1, uncovered: ['T1'], rule: { linkType: 'verifies' } });
  });

  it('writes Markdown a reader can trust: cells escaped, the gate marked', () => {
    const records = new Map([
      [
        'rev0',
        new Map([
          ['a', 'REQ|1'],
          ['b', 'REQ_2'],
        ]),
      ],
      ['rev1', new Map([['c', 'TST_1']])],
    ]);
    const report = coverageOf([topic(0), topic(1)], records, [{ source: 'a', target: 'c' }], []);
    const md = coverageMarkdown(report, 75);
    expect(md).toContain('| Topic 0 → Topic 1 | 1 | 2 | 50.0% ❌ | 1 | 0 | 0 |');
    expect(md).toContain('Not linked (1): REQ_2');
    expect(md).toContain('| REQ\\|1 | TST_1 |  |');
    expect(md).not.toContain('Suspect links');

    const flagged = coverageMarkdown(
      coverageOf([topic(0), topic(1)], records, [{ source: 'a', target: 'c', suspect: true }], []),
    );
    expect(flagged).toContain('| Topic 0 → Topic 1 | 1 | 2 | 50.0% | 1 | 0 | 1 |');
    expect(flagged).toContain(
      'Suspect links (1), a record changed since the link was reviewed: REQ\\|1 → TST_1',
    );
    expect(flagged).toContain('| REQ\\|1 | TST_1 | yes |');
  });
});

describe('coverageHtml', () => {
  it('escapes every name and id, fetches nothing, and lists links instead of a huge matrix', () => {
    const hostile = { revisionId: 'r0', historyId: 'h0', name: '<script>alert(1)</script> & "x"' };
    const records = new Map([
      ['r0', new Map([['a', '<img src=x onerror=alert(1)>']])],
      ['r1', new Map([['b', 'TST_1']])],
    ]);
    const html = coverageHtml(coverageOf([hostile, topic(1)], records, [{ source: 'a', target: 'b' }], []));
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;');
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
    expect(html).not.toMatch(/(src|href)=["']?https?:/);

    const many = new Map([
      ['rev0', new Map(Array.from({ length: 300 }, (_, i) => [`s${i}`, `REQ_${i}`]))],
      ['rev1', new Map(Array.from({ length: 300 }, (_, i) => [`t${i}`, `TST_${i}`]))],
    ]);
    const big = coverageHtml(coverageOf([topic(0), topic(1)], many, [{ source: 's1', target: 't2' }], []));
    expect(big).not.toContain('class="matrix"');
    expect(big).toContain('<tr><td>REQ_1</td><td>TST_2</td><td></td></tr>');
  });
});
