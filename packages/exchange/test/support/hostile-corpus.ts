import { readFileSync } from 'node:fs';
import type { FormSchema } from '../../../contract/src/form.js';
import type { KnowledgeTopicRevision } from '../../../contract/src/knowledge-topic.js';
import type { ServiceRecord } from '../../../contract/src/record.js';
import type { TraceEdge } from '../../../contract/src/trace.js';
import type { ExportSource } from '../../src/export/procedure.js';

/**
 * One corpus of hostile values that every export format must carry through unharmed, and an
 * in-memory service that serves it to the real export procedure. Each format's test writes this
 * export and reads it back with the program that will really read it (Python's csv, LibreOffice,
 * xmllint, docutils), comparing every value with the JSON export.
 */

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).join('');

export const HOSTILE_VALUES: { label: string; value: string }[] = [
  { label: 'LF', value: 'First line\nSecond line' },
  { label: 'CR', value: 'First line\rSecond line' },
  { label: 'CRLF', value: 'First line\r\nSecond line' },
  { label: 'trailing LF', value: 'ends with a line break\n' },
  { label: 'tabs', value: 'a\tb\t\tc' },
  { label: 'leading and trailing spaces', value: '   padded   ' },
  { label: 'only spaces', value: '     ' },
  { label: 'quotes', value: 'He said "stop" and \'go\'' },
  { label: 'commas and semicolons', value: 'a,b;c,,;;' },
  { label: 'formula =', value: '=1+2' },
  { label: 'formula +', value: '+SUM(A1:A2)' },
  { label: 'formula -', value: '-2+3' },
  { label: 'formula @', value: '@SUM(A1)' },
  { label: 'dde', value: "=cmd|' /C calc'!A0" },
  { label: 'apostrophe before a formula', value: "'=1+2, written with its own apostrophe" },
  { label: 'xml specials', value: '<b>&amp; "x" \'y\' </b> ]]> &lt;' },
  { label: 'C0 controls', value: `c0:${C0}:end` },
  { label: 'DEL', value: 'del\u007fchar' },
  { label: 'C1 controls', value: `c1:${C1}:end` },
  { label: 'noncharacters', value: 'nc\ufffe\uffffend' },
  { label: 'lone surrogates', value: 'hi\ud800lo\udc00end' },
  { label: 'emoji', value: 'ok ✓ 😀 👩‍🔬 ünïcödé' },
  { label: 'long text', value: 'Lorem ipsum dolor sit amet. '.repeat(1786).slice(0, 50_000) },
  { label: 'rst include', value: '.. include:: /etc/hostname' },
  { label: 'rst raw html', value: '.. raw:: html\n\n   <script>alert(1)</script>' },
  { label: 'rst section', value: 'Title\n=====\n\nBody' },
  { label: 'rst footnote', value: 'See note [#]_ and [1]_.\n\n.. [#] auto' },
  { label: 'rst substitution', value: 'A |subst| here\n\n.. |subst| replace:: BOOM' },
  { label: 'rst role', value: 'Run :download:`/etc/passwd` and :math:`x` now' },
  { label: 'rst bullets', value: '- one\n- two\n\n* three' },
  { label: 'rst table', value: '+---+---+\n| a | b |\n+---+---+\n\n=== ===\nA   B\n=== ===' },
  { label: 'rst trailing underscore', value: 'link_ and `target`_ and anonymous__' },
  { label: 'rst literal and emphasis', value: '``code`` *em* **strong** `interp`' },
  { label: 'rst comment', value: '.. this is a comment\n\n..\n  also' },
  { label: 'rst field list', value: ':field: value\n:other: x' },
  { label: 'rst block quote', value: 'para\n\n    indented quote' },
  { label: 'rst line block', value: '| line one\n| line two' },
  { label: 'rst doctest', value: '>>> import os\n>>> os.system("id")' },
  { label: 'rst definition', value: 'term\n  definition' },
  { label: 'rst enumerated', value: '1. one\n2. two\n#. three' },
  { label: 'rst transition', value: 'a\n\n----------\n\nb' },
  { label: 'rst backslashes', value: 'a\\b \\* \\` end\\' },
  { label: 'jinja', value: '{{ 7*7 }} {% raw %}' },
  { label: 'empty', value: '' },
  { label: 'rst backslash underline', value: 'Title\n\\\\\\\\\nbody' },
  { label: 'rst unicode bullets', value: '• one\n‣ two\n⁃ three' },
  { label: 'rst uri and email', value: 'see https://example.com/x_ and mail a@b.org' },
  { label: 'rst literal marker', value: 'Note::\n\n    literal' },
  { label: 'indented first line', value: '    code first\nthen text' },
  { label: 'sphinx-needs dynamic function', value: "[[copy('id')]]" },
];

/** Number of data keys of the one record that makes a topic very wide (beyond XLSX's 16,384 columns). */
export const WIDE_RECORD_KEYS = 16_400;

export const HOSTILE_TOPIC_REVISION = '7c0000000000000000000001';
export const HOSTILE_TOPIC_HISTORY = '7c00000000000000000000a1';
export const WIDE_TOPIC_REVISION = '7c0000000000000000000002';

const schema: FormSchema = {
  type: 'default',
  components: [
    { type: 'textfield', key: 'title', label: 'Title' },
    { type: 'textarea', key: 'description', label: 'Description' },
    { type: 'textfield', key: 'status', label: 'Status' },
    { type: 'textfield', key: 'note', label: 'Note' },
  ],
} as unknown as FormSchema;

function revision(id: string, historyId: string, name: string): KnowledgeTopicRevision {
  return {
    _id: id,
    knowledge_topic_history_id: historyId,
    knowledge_topic_name: name,
    knowledge_topic_schema: schema,
    version: '1.0',
    status: 'approved',
    latest_revision_id: id,
  } as unknown as KnowledgeTopicRevision;
}

function record(
  index: number,
  topicRevisionId: string,
  name: string,
  data: Record<string, unknown>,
): ServiceRecord {
  return {
    _id: `7d${index.toString(16).padStart(22, '0')}`,
    name,
    form: { components: [], id: 'form_1', type: 'default', schemaVersion: 19 },
    version: '1.0',
    data,
    read_only: false,
    metadata: { tenant_id: 'hostile' },
    context: {
      linked_product: null,
      linked_sop: null,
      form_id: null,
      global_element_id: null,
      knowledge_unit_id: null,
      knowledge_unit_topic_id: topicRevisionId,
      linked_document: null,
      group_id: null,
    },
    audit_info: {
      user_id_created: 'u1',
      timestamp_created: '2026-08-10T12:00:00.000000',
      user_id_last_updated: null,
      timestamp_last_updated: null,
      last_action: 'created',
    },
  } as unknown as ServiceRecord;
}

/** One record per hostile value, carrying it in its name, title, description, status and note. */
export function hostileRecords(): ServiceRecord[] {
  return HOSTILE_VALUES.map(({ value }, i) =>
    record(i + 1, HOSTILE_TOPIC_REVISION, value, {
      title: value,
      description: value,
      status: value,
      note: value,
    }),
  );
}

/** One record with `WIDE_RECORD_KEYS` data keys (any editor can write one). */
export function wideRecord(): ServiceRecord {
  const data: Record<string, unknown> = { title: 'WIDE_001 — a very wide record' };
  for (let i = 0; i < WIDE_RECORD_KEYS; i++) data[`k${i}`] = `v${i}`;
  return record(10_000, WIDE_TOPIC_REVISION, 'wide', data);
}

/**
 * An export source serving the hostile topic (and, with `wide`, a second topic holding the wide
 * record), with one trace from the first hostile record to each of the next two.
 */
export function hostileSource(options: { wide?: boolean } = {}): ExportSource {
  const topics = new Map<string, KnowledgeTopicRevision>([
    [HOSTILE_TOPIC_REVISION, revision(HOSTILE_TOPIC_REVISION, HOSTILE_TOPIC_HISTORY, 'Hostile Requirements')],
    [WIDE_TOPIC_REVISION, revision(WIDE_TOPIC_REVISION, '7c00000000000000000000a2', 'Wide Tests')],
  ]);
  const records = new Map<string, ServiceRecord[]>([
    [HOSTILE_TOPIC_REVISION, hostileRecords()],
    [WIDE_TOPIC_REVISION, options.wide ? [wideRecord()] : []],
  ]);
  const [first, second, third] = hostileRecords();
  const traces: TraceEdge[] = [second!, third!].map(
    (target, i) =>
      ({
        _id: `7e${i.toString(16).padStart(22, '0')}`,
        source: first!._id,
        target: target._id,
        relation_type: ['relates_to'],
        source_node: { id: first!._id, type: 'Record' },
        target_node: { id: target._id, type: 'Record' },
        // The second link is suspect: a record changed since it was reviewed.
        outdated: i === 1,
      }) as unknown as TraceEdge,
  );
  return {
    servers: { techdoc: 'http://techdoc.test', records: 'http://records.test', tracer: 'http://tracer.test' },
    async getTopic(id) {
      const topic = topics.get(id);
      if (!topic) throw new Error(`no topic ${id}`);
      return structuredClone(topic);
    },
    async *listRecords(query) {
      for (const r of records.get(query.context__knowledge_unit_topic_id ?? '') ?? [])
        yield structuredClone(r);
    },
    async listTraces() {
      return structuredClone(traces);
    },
  };
}

/** The revision ids to export the corpus: the hostile topic, and the wide one when asked. */
export function hostileRevisionIds(options: { wide?: boolean } = {}): string[] {
  return options.wide ? [HOSTILE_TOPIC_REVISION, WIDE_TOPIC_REVISION] : [HOSTILE_TOPIC_REVISION];
}

/** Reads a file of the reference samples (`reference/samples/`). */
export function referenceSample<T>(file: string): T {
  return JSON.parse(
    readFileSync(new URL(`../../../../reference/samples/${file}`, import.meta.url), 'utf8'),
  ) as T;
}
