import type { BaselineDocument, DocumentRecord, MatrixRow, RecordChange } from '../src/document/model.js';
import { HOSTILE_VALUES } from './support/hostile-corpus.js';

/** Baseline documents for the renderers' tests and their measurement: small and hostile, or large. */

/** Text that must come out of a document literally (or, for what cannot be shown, visibly marked). */
export const HOSTILE_TEXTS = {
  markup: '<w:p><w:r><w:t>injected</w:t></w:r></w:p> <b>&amp;</b> ]]> {{ 7*7 }}',
  hebrew: 'דרישה אחת',
  arabic: 'متطلبات النظام',
  cjk: '系统需求 テスト 乍',
  greek: 'Ελληνικά Ωμέγα',
  cyrillic: 'Требование',
  accents: 'Ünïcödé àéîõü ß',
  symbols: '≤ ≥ ∑ → ✓ ★',
  emoji: '😀',
  controls: 'bell\u0007 escape\u001b nul\u0000 end',
  long: `${'Lorem ipsum dolor sit amet. '.repeat(3700)}END-OF-LONG-VALUE`,
};

export const SIGNATURES = [
  { signer: 'Ada Lovelace (ada)', meaning: 'reviewed', signedAt: '2026-08-10T08:00:00.000Z' },
  { signer: 'Ελένη Παπαδοπούλου (eleni)', meaning: 'approved', signedAt: '2026-08-11T09:15:00.000Z' },
];

export function sampleRecord(
  topic: string,
  i: number,
  fields: { label: string; value: string }[],
): DocumentRecord {
  return {
    readableId: `${topic}-${i}`,
    title: `Record ${i} of ${topic}`,
    fields,
    links: [{ role: 'verified by', records: [{ readableId: `TEST-${i}`, suspect: i % 3 === 0 }] }],
  };
}

/** A small baseline whose records carry every hostile text, one field each. */
export function hostileDocument(released = false): BaselineDocument {
  const hostile = [
    ...Object.entries(HOSTILE_TEXTS).map(([label, value]) => ({ label, value })),
    ...HOSTILE_VALUES.filter((v) => v.label !== 'long text').map(({ label, value }) => ({ label, value })),
  ];
  const requirements = Array.from({ length: 12 }, (_, i) =>
    sampleRecord(
      'REQ',
      i + 1,
      i === 0 ? hostile : [{ label: 'Text', value: `The system shall do thing ${i + 1}.` }],
    ),
  );
  const tests = Array.from({ length: 12 }, (_, i) =>
    sampleRecord('TEST', i + 1, [{ label: 'Steps', value: 'Run it.' }]),
  );
  return {
    tenant: 'Acme Medical <GmbH> & Co',
    subject: {
      kind: 'baseline',
      name: 'R1 "Release"',
      moment: '2026-08-11T09:30:00.000Z',
      status: released ? 'released' : 'proposed',
    },
    generatedAt: '2026-08-12T10:00:00.000Z',
    signatures: SIGNATURES,
    topics: [
      { name: 'System requirements', records: requirements },
      { name: 'Tests ' + HOSTILE_TEXTS.hebrew, records: tests },
    ],
    matrices: [
      {
        title: 'System requirements verified by tests',
        rowHeader: 'Requirement',
        columns: ['verified by'],
        rows: requirements.map((r, i) => ({
          readableId: r.readableId,
          cells: [[{ readableId: `TEST-${i + 1}`, suspect: i % 3 === 0 }]],
        })),
      },
    ],
    coverage: [
      {
        rule: 'System requirements verified by Tests',
        covered: 11,
        total: 12,
        percent: 91.7,
        uncovered: ['REQ-12'],
      },
    ],
    changes: {
      against: 'R0',
      changes: [
        { kind: 'added', topic: 'System requirements', readableId: 'REQ-12', title: 'Record 12' },
        { kind: 'removed', topic: 'Tests', readableId: 'TEST-99', title: 'Gone' },
        {
          kind: 'changed',
          topic: 'System requirements',
          readableId: 'REQ-2',
          title: 'Record 2',
          fields: [{ label: 'Text', before: 'old <value>', after: `new ${HOSTILE_TEXTS.cjk}` }],
        },
      ],
    },
  };
}

/** A baseline of `count` requirements, each with eight fields and three traces, produced as it is read. */
export function largeDocument(count: number): BaselineDocument {
  const fields = (i: number) =>
    Array.from({ length: 8 }, (_, f) => ({
      label: `Field ${f}`,
      value: `Value ${f} of record ${i}: lorem ipsum dolor sit amet`,
    }));
  async function* records(): AsyncIterable<DocumentRecord> {
    for (let i = 1; i <= count; i++)
      yield {
        ...sampleRecord('REQ', i, fields(i)),
        links: [
          {
            role: 'verified by',
            records: [0, 1, 2].map((k) => ({ readableId: `TEST-${i + k}`, suspect: k === 1 })),
          },
        ],
      };
  }
  async function* rows(): AsyncIterable<MatrixRow> {
    for (let i = 1; i <= count; i++)
      yield {
        readableId: `REQ-${i}`,
        cells: [[0, 1, 2].map((k) => ({ readableId: `TEST-${i + k}`, suspect: false }))],
      };
  }
  async function* changes(): AsyncIterable<RecordChange> {
    for (let i = 1; i <= count; i += 10)
      yield {
        kind: 'changed',
        topic: 'Requirements',
        readableId: `REQ-${i}`,
        title: `Record ${i}`,
        fields: [{ label: 'Field 1', before: 'a', after: 'b' }],
      };
  }
  return {
    tenant: 'Acme',
    subject: { kind: 'now', moment: '2026-08-11T09:30:00.000Z' },
    generatedAt: '2026-08-11T09:30:00.000Z',
    signatures: [],
    topics: [{ name: 'Requirements', records: records() }],
    matrices: [
      {
        title: 'Requirements verified by tests',
        rowHeader: 'Requirement',
        columns: ['verified by'],
        rows: rows(),
      },
    ],
    coverage: [
      { rule: 'Requirements verified by Tests', covered: count, total: count, percent: 100, uncovered: [] },
    ],
    changes: { against: 'R0', changes: changes() },
  };
}
