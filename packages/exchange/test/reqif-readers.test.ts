import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FormSchema } from '../../contract/src/form.js';
import type { KnowledgeTopicRevision } from '../../contract/src/knowledge-topic.js';
import type { ServiceRecord } from '../../contract/src/record.js';
import type { TraceEdge } from '../../contract/src/trace.js';
import { defaultIdentifierRule, defaultPresentation } from '../src/export/identity.js';
import type { ExportPart, TopicPresentation } from '../src/export/model.js';
import { exportParts, type ExportMapping, type ExportSource } from '../src/export/procedure.js';
import { cellText } from '../src/export/writers/cells.js';
import {
  HOSTILE_VALUES,
  hostileRevisionIds,
  hostileSource,
  WIDE_RECORD_KEYS,
} from './support/hostile-corpus.js';
import {
  collectParts,
  jsonExport,
  missingReader,
  PYTHON,
  referenceSource,
  scratchDir,
  shouldSkip,
  writeFile,
  type JsonExport,
} from './support/spreadsheet-readers.js';

/**
 * The ReqIF export validated with xmllint against the OMG schema and read back by Python's
 * xml.etree: every SPEC-OBJECT's attribute values, typed as the form says, must equal what the JSON
 * export carries, after the one documented change (docs/formats/reqif.md): characters XML 1.0
 * cannot hold become U+FFFD. Values that do not fit their type are in the "(as text)" twin, with a
 * warning naming the record and field.
 */

const xmllint = missingReader('xmllint', 'libxml2-utils');
const python = missingReader(PYTHON, 'python3');
const scratch = scratchDir();
afterAll(() => scratch.dispose());
const SCHEMA = new URL('../../../reference/reqif-xsd/reqif.xsd', import.meta.url).pathname;

/** What XML 1.0 cannot carry (C0 but tab, LF, CR; U+FFFE, U+FFFF; lone surrogates) becomes U+FFFD. */
const asXml = (text: string) =>
  text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD');

interface ReadValue {
  kind: 'STRING' | 'INTEGER' | 'REAL' | 'BOOLEAN' | 'DATE' | 'ENUMERATION' | 'XHTML';
  value: unknown;
}
interface ReadBack {
  comment: string;
  datatypes: Record<string, string>;
  objects: {
    identifier: string;
    longName: string;
    type: string;
    values: Record<string, ReadValue>;
  }[];
  relations: { type: string; source: string; target: string; values: Record<string, unknown> }[];
}

/** The file as Python's xml.etree reads it: every object's values by attribute name, typed. */
const READER = `
import json, sys
import xml.etree.ElementTree as ET
ns = '{http://www.omg.org/spec/ReqIF/20110401/reqif.xsd}'
root = ET.parse(sys.argv[1]).getroot()
local = lambda el: el.tag[len(ns):]
datatypes = {el.get('IDENTIFIER'): local(el)[len('DATATYPE-DEFINITION-'):] for el in root.iter() if local(el).startswith('DATATYPE-DEFINITION-') and el.get('IDENTIFIER')}
definitions = {el.get('IDENTIFIER'): el.get('LONG-NAME') for el in root.iter() if local(el).startswith('ATTRIBUTE-DEFINITION-') and el.get('IDENTIFIER')}
types = {el.get('IDENTIFIER'): el.get('LONG-NAME') for el in root.iter(ns + 'SPEC-OBJECT-TYPE')}
types.update({el.get('IDENTIFIER'): el.get('LONG-NAME') for el in root.iter(ns + 'SPEC-RELATION-TYPE')})
enum_values = {el.get('IDENTIFIER'): el.find(f'{ns}PROPERTIES/{ns}EMBEDDED-VALUE').get('OTHER-CONTENT') for el in root.iter(ns + 'ENUM-VALUE')}
def typed(kind, text):
    if kind == 'INTEGER': return int(text)
    if kind == 'REAL': return float(text)
    if kind == 'BOOLEAN': return {'true': True, 'false': False}[text]
    if kind == 'DATE':
        from datetime import datetime
        return datetime.fromisoformat(text).isoformat()
    return text
objects = []
for obj in root.iter(ns + 'SPEC-OBJECT'):
    values = {}
    for value in obj.find(ns + 'VALUES'):
        kind = local(value)[len('ATTRIBUTE-VALUE-'):]
        ref = value.find(ns + 'DEFINITION')[0].text
        if kind == 'ENUMERATION':
            read = [enum_values[r.text] for r in value.find(ns + 'VALUES')]
        else:
            read = typed(kind, value.get('THE-VALUE'))
        values[definitions[ref]] = {'kind': kind, 'value': read}
    objects.append({'identifier': obj.get('IDENTIFIER'), 'longName': obj.get('LONG-NAME'),
                    'type': types[obj.find(f'{ns}TYPE/{ns}SPEC-OBJECT-TYPE-REF').text], 'values': values})
def relation_values(rel):
    values = {}
    for value in (rel.find(ns + 'VALUES') or []):
        kind = local(value)[len('ATTRIBUTE-VALUE-'):]
        values[definitions[value.find(ns + 'DEFINITION')[0].text]] = typed(kind, value.get('THE-VALUE'))
    return values
relations = [{'type': types[rel.find(f'{ns}TYPE/{ns}SPEC-RELATION-TYPE-REF').text],
              'source': rel.find(f'{ns}SOURCE/{ns}SPEC-OBJECT-REF').text,
              'target': rel.find(f'{ns}TARGET/{ns}SPEC-OBJECT-REF').text,
              'values': relation_values(rel)} for rel in root.iter(ns + 'SPEC-RELATION')]
comment = root.find(f'{ns}THE-HEADER/{ns}REQ-IF-HEADER/{ns}COMMENT').text
sys.stdout.write(json.dumps({'comment': comment, 'datatypes': datatypes, 'objects': objects, 'relations': relations}))
`;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function readBack(file: string): ReadBack {
  return JSON.parse(execFileSync(PYTHON, ['-c', READER, file], { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

function validate(file: string): void {
  const run = spawnSync('xmllint', ['--noout', '--schema', SCHEMA, file], { encoding: 'utf8' });
  expect(run.stderr.slice(-2000)).toContain('validates');
  expect(run.status).toBe(0);
}

async function writeReqif(parts: readonly ExportPart[], name: string) {
  const file = join(scratch.path, `${name}.reqif`);
  const warnings = await writeFile('reqif', parts, file);
  validate(file);
  return { file, warnings, read: readBack(file), json: await jsonExport(parts, scratch.path) };
}

/** The record facts every SPEC-OBJECT carries, as the JSON export has them. */
function expectFacts(read: ReadBack, json: JsonExport) {
  const records = json.topics.flatMap((topic) =>
    topic.records.map((record) => ({ record, presentation: presentationOf(topic) })),
  );
  expect(read.objects).toHaveLength(records.length);
  for (const { record, presentation } of records) {
    const object = read.objects.find((o) => o.identifier === `R-${record.id}`);
    expect(object, record.id).toBeDefined();
    expect(object!.longName).toBe(record.readableId);
    const title =
      presentation.titleField === undefined ? '' : cellText(record.values[presentation.titleField]);
    expect(object!.values).toMatchObject({
      'ReqIF.ForeignID': { kind: 'STRING', value: record.readableId },
      'ReqIF.Name': { kind: 'STRING', value: asXml(title || record.name) },
      'RXS.RecordId': { kind: 'STRING', value: record.id },
      'RXS.RecordName': { kind: 'STRING', value: asXml(record.name) },
      'RXS.Version': { kind: 'STRING', value: record.version },
    });
    if (presentation.descriptionField === undefined) expect(object!.values['ReqIF.Text']).toBeUndefined();
    else
      expect(object!.values['ReqIF.Text']).toEqual({
        kind: 'STRING',
        value: asXml(cellText(record.values[presentation.descriptionField])),
      });
  }
}

/** The topic's presentation as the JSON export carries it. */
function presentationOf(topic: JsonExport['topics'][number]): TopicPresentation {
  return (topic as unknown as { presentation: TopicPresentation }).presentation;
}

/** Relations as the JSON export's traces say: type, and both ends by identifier and readable id. */
function expectRelations(read: ReadBack, json: JsonExport) {
  const traces = json.traces as (JsonExport['traces'][number] & { linkType?: string })[];
  const expected = traces.flatMap((trace) =>
    (trace.linkType ? [trace.linkType] : trace.relationTypes).map((type) => ({
      type,
      source: `R-${trace.source.id}`,
      target: `R-${trace.target.id}`,
      values: { Suspect: String(trace.suspect) },
    })),
  );
  expect(read.relations).toEqual(expected);
  // The sources hold a suspect link, so "true" is read back as well as "false".
  if (json.traces.length > 1) expect(json.traces.filter((t) => t.suspect)).toHaveLength(1);
  for (const trace of json.traces) {
    const longName = (id: string) => read.objects.find((o) => o.identifier === `R-${id}`)?.longName;
    expect(longName(trace.source.id)).toBe(trace.source.readableId);
    expect(longName(trace.target.id)).toBe(trace.target.readableId);
  }
}

describe.skipIf(shouldSkip(xmllint ?? python))('ReqIF read back by xmllint and Python', () => {
  it('finds its readers (xmllint from libxml2-utils, Python 3)', () => {
    expect(xmllint).toBeUndefined();
    expect(python).toBeUndefined();
  });

  it('carries every hostile value as the JSON export has it, XML-unsafe characters as U+FFFD', async () => {
    const parts = await collectParts(hostileSource(), hostileRevisionIds());
    const { read, json, warnings } = await writeReqif(parts, 'hostile');
    const [topic] = json.topics;
    expect(topic!.records).toHaveLength(HOSTILE_VALUES.length);
    expectFacts(read, json);
    for (const record of topic!.records) {
      const object = read.objects.find((o) => o.identifier === `R-${record.id}`)!;
      for (const field of topic!.fields)
        expect(object.values[field.name], `${record.name} ${field.name}`).toEqual({
          kind: 'STRING',
          value: asXml(cellText(record.values[field.name])),
        });
    }
    expectRelations(read, json);
    // Every replacement is reported, naming the record and field; the rest pass without a word.
    for (const { label, value } of HOSTILE_VALUES) {
      const record = topic!.records.find((r) => r.name === value)!;
      const about = warnings.filter((w) => w.includes(`record ${record.readableId} (${record.id})`));
      if (asXml(value) === value) expect(about, label).toEqual([]);
      else
        expect(
          about.some((w) => w.includes('field "Note"') && w.includes('U+FFFD')),
          label,
        ).toBe(true);
    }
  });

  it('carries a record with 16,400 data keys, each as a text attribute', async () => {
    const parts = await collectParts(hostileSource({ wide: true }), hostileRevisionIds({ wide: true }), {
      maxColumns: 20_000,
    });
    const { read, json } = await writeReqif(parts, 'wide');
    expectFacts(read, json);
    const wide = json.topics[1]!.records[0]!;
    const object = read.objects.find((o) => o.identifier === `R-${wide.id}`)!;
    expect(Object.keys(wide.values)).toHaveLength(WIDE_RECORD_KEYS + 1);
    for (const [name, value] of Object.entries(wide.values))
      expect(object.values[name], name).toEqual({ kind: 'STRING', value: cellText(value) });
  }, 120_000);

  it('carries the reference sample, selects and checklists as enumerations of their values', async () => {
    const { source, revisionIds } = referenceSource();
    const parts = await collectParts(source, revisionIds);
    const { read, json, warnings } = await writeReqif(parts, 'reference');
    expect(warnings).toEqual([]);
    expectFacts(read, json);
    const [topic] = json.topics;
    expect(read.objects.every((o) => o.type === 'System Requirements')).toBe(true);
    for (const record of topic!.records) {
      const object = read.objects.find((o) => o.identifier === `R-${record.id}`)!;
      for (const [name, value] of Object.entries(record.values)) {
        const options = Array.isArray(value) ? value : [value];
        const expected = ['Type', 'Requirement concerning', 'Infrastructure', 'Source', 'Priority'].includes(
          name,
        )
          ? { kind: 'ENUMERATION', value: options }
          : { kind: 'STRING', value: asXml(cellText(value)) };
        expect(object.values[name], `${record.readableId} ${name}`).toEqual(expected);
      }
    }
    expectRelations(read, json);
  });

  it('types attributes after the form and keeps values that do not fit in a text twin, with a warning', async () => {
    const parts = await typedParts();
    const { read, json, warnings } = await writeReqif(parts, 'typed');
    const tests = json.topics.find((t) => t.name === 'Verification Tests')!;
    expect(tests.records).toHaveLength(TYPED_RECORDS.length);
    expectFacts(read, json);
    expect(new Set(read.objects.map((o) => o.type))).toEqual(new Set(['Test Case', 'Requirements']));

    for (const [index, record] of tests.records.entries()) {
      const object = read.objects.find((o) => o.identifier === `R-${record.id}`)!;
      const misfits = TYPED_RECORDS[index]!.misfits;
      for (const [name, kind] of Object.entries(FIELD_KINDS)) {
        const value = record.values[name];
        const where = `${record.readableId} ${name}`;
        const about = warnings.filter(
          (w) => w.includes(`record ${record.readableId} (${record.id})`) && w.includes(`"${name}"`),
        );
        if (misfits.includes(name)) {
          // Not of its type: the typed attribute is left out, the raw value is in the twin.
          expect(object.values[name], where).toBeUndefined();
          expect(object.values[`${name} (as text)`], where).toEqual({
            kind: 'STRING',
            value: cellText(value),
          });
          expect(about, where).toHaveLength(1);
          continue;
        }
        expect(about, where).toEqual([]);
        expect(object.values[`${name} (as text)`], where).toBeUndefined();
        const empty =
          value === undefined || value === null || value === '' || (Array.isArray(value) && !value.length);
        // Absent values are left out; so are empty ones, but for text, where "" is a value.
        if (value === undefined || value === null || (empty && kind !== 'STRING')) {
          expect(object.values[name], where).toBeUndefined();
          continue;
        }
        const read = object.values[name]!;
        expect(read?.kind, where).toBe(kind);
        if (kind === 'INTEGER' || kind === 'REAL') expect(read.value, where).toBe(Number(value));
        else if (kind === 'BOOLEAN') expect(read.value, where).toBe(value);
        else if (kind === 'DATE')
          // A date alone is midnight without a zone; a time gains its seconds.
          expect(read.value, where).toMatch(new RegExp(`^${escape(String(value).replace(/Z$/, ''))}(:00)?`));
        else if (kind === 'ENUMERATION')
          expect(read.value, where).toEqual(Array.isArray(value) ? value : [value]);
        else expect(read.value, where).toBe(asXml(cellText(value)));
      }
    }
    // Twins exist only for the fields that needed one; the warnings are also in the header comment.
    const twins = new Set(TYPED_RECORDS.flatMap((r) => r.misfits));
    for (const object of read.objects)
      for (const name of Object.keys(object.values))
        if (name.endsWith(' (as text)')) expect(twins.has(name.slice(0, -' (as text)'.length))).toBe(true);
    expect(warnings.length).toBe(TYPED_RECORDS.flatMap((r) => r.misfits).length);
    for (const warning of warnings) expect(read.comment).toContain(warning);
    expectRelations(read, json);
    expect(read.relations.map((r) => r.type)).toEqual(['verifies']);
  });

  it('keeps the first 1000 warnings word for word and counts the rest, and the file stays valid', async () => {
    const records = Array.from({ length: 1005 }, (_, i) => ({
      name: `TC_${i + 1}`,
      data: { title: `TC_${i + 1} — old`, runs: 'abc' },
    }));
    const { read, warnings } = await writeReqif(await typedParts(records), 'many-warnings');
    expect(warnings).toHaveLength(1001);
    expect(warnings[999]).toContain('record TC_1000 ');
    expect(warnings[1000]).toMatch(/^5 more values were changed/);
    expect(read.comment).toContain('- and 955 more.');
    expect(read.objects.filter((o) => o.values['Runs (as text)']?.value === 'abc')).toHaveLength(1005);
  });
});

// ---------------------------------------------------------------------------------------------
// A topic with every typed component, records that fit and records written before the form changed.

/** The ReqIF kind each field of the typed topic must get. */
const FIELD_KINDS: Record<string, ReadValue['kind']> = {
  Title: 'STRING',
  Runs: 'INTEGER',
  Samples: 'INTEGER',
  Duration: 'REAL',
  Weight: 'REAL',
  Automated: 'BOOLEAN',
  'Executed on': 'DATE',
  'Executed at': 'DATE',
  'Start time': 'STRING',
  Verdict: 'ENUMERATION',
  Severity: 'ENUMERATION',
  Platforms: 'ENUMERATION',
  Tags: 'ENUMERATION',
  Notes: 'STRING',
  Temperature: 'INTEGER',
};

const typedSchema = {
  components: [
    { type: 'textfield', key: 'title', label: 'Title' },
    { type: 'number', key: 'runs', label: 'Runs', decimalDigits: 0 },
    { type: 'number', key: 'samples', label: 'Samples', increment: '1' },
    { type: 'number', key: 'duration', label: 'Duration', decimalDigits: 2 },
    { type: 'number', key: 'weight', label: 'Weight', serializeToString: true },
    { type: 'checkbox', key: 'automated', label: 'Automated' },
    { type: 'datetime', key: 'executed_on', subtype: 'date', dateLabel: 'Executed on', label: 'Executed on' },
    { type: 'datetime', key: 'executed_at', subtype: 'datetime', label: 'Executed at' },
    { type: 'datetime', key: 'start_time', subtype: 'time', label: 'Start time' },
    option('select', 'verdict', 'Verdict', ['passed', 'failed']),
    option('radio', 'severity', 'Severity', ['high', 'low']),
    option('checklist', 'platforms', 'Platforms', ['linux', 'windows']),
    option('taglist', 'tags', 'Tags', ['smoke', 'slow']),
    { type: 'textarea', key: 'notes', label: 'Notes' },
    {
      type: 'group',
      path: 'env',
      components: [{ type: 'number', key: 'temp', label: 'Temperature', decimalDigits: 0 }],
    },
  ],
} as unknown as FormSchema;

function option(type: string, key: string, label: string, values: string[]) {
  return { type, key, label, values: values.map((value) => ({ label: value.toUpperCase(), value })) };
}

const TYPED_RECORDS: { name: string; data: Record<string, unknown>; misfits: string[] }[] = [
  {
    name: 'TC_001',
    data: {
      title: 'TC_001 — every value fits',
      runs: 3,
      samples: 12,
      duration: 12.5,
      weight: '7.25',
      automated: true,
      executed_on: '2026-09-02',
      executed_at: '2026-09-02T14:30Z',
      start_time: '14:30',
      verdict: 'passed',
      severity: 'high',
      platforms: ['linux', 'windows'],
      tags: ['smoke'],
      notes: 'line\nbreak & <xml>',
      env: { temp: 21 },
    },
    misfits: [],
  },
  {
    name: 'TC_002',
    data: {
      title: 'TC_002 — written before the form changed',
      runs: 'abc',
      samples: 2.5,
      duration: '12,5',
      weight: 'heavy',
      automated: 'maybe',
      executed_on: '02/09/2026',
      executed_at: '2026-02-30T10:00',
      start_time: 'noonish',
      verdict: 'unknown',
      severity: ['high', 'low'],
      platforms: ['linux', 'mac'],
      tags: 'smoke',
      notes: 42,
      env: { temp: 'warm' },
    },
    misfits: [
      'Runs',
      'Samples',
      'Duration',
      'Weight',
      'Automated',
      'Executed on',
      'Executed at',
      'Verdict',
      'Severity',
      'Platforms',
      'Temperature',
    ],
  },
  {
    name: 'TC_003',
    data: {
      title: 'TC_003 — edges that fit',
      runs: '42',
      samples: 0,
      duration: 1e21,
      weight: '-.5',
      automated: false,
      executed_on: '',
      executed_at: '2026-09-02T14:30:15+02:00',
      verdict: null,
      platforms: [],
      env: { temp: -40 },
    },
    misfits: [],
  },
  {
    name: 'TC_004',
    data: {
      title: 'TC_004 — a whole number too large for INTEGER',
      runs: 1e20,
      samples: '9223372036854775808',
    },
    misfits: ['Runs', 'Samples'],
  },
];

const TESTS_REVISION = '7a0000000000000000000001';
const REQS_REVISION = '7a0000000000000000000002';

function typedSource(typedRecords: readonly { name: string; data: Record<string, unknown> }[]): ExportSource {
  const revision = (id: string, name: string, schema: FormSchema) =>
    ({
      _id: id,
      knowledge_topic_history_id: `${id.slice(0, -1)}f`,
      knowledge_topic_name: name,
      knowledge_topic_schema: schema,
      version: '1.0',
      status: 'approved',
      latest_revision_id: id,
    }) as unknown as KnowledgeTopicRevision;
  const record = (id: string, topic: string, name: string, data: Record<string, unknown>) =>
    ({
      _id: id,
      name,
      version: '1.0',
      data,
      context: { knowledge_unit_topic_id: topic },
      audit_info: { timestamp_created: '2026-08-10T12:00:00.000000', timestamp_last_updated: null },
    }) as unknown as ServiceRecord;
  const topics = new Map([
    [TESTS_REVISION, revision(TESTS_REVISION, 'Verification Tests', typedSchema)],
    [
      REQS_REVISION,
      revision(REQS_REVISION, 'Requirements', {
        components: [{ type: 'textfield', key: 'title', label: 'Title' }],
      } as unknown as FormSchema),
    ],
  ]);
  const tests = typedRecords.map(({ name, data }, i) =>
    record(`7b${String(i + 1).padStart(22, '0')}`, TESTS_REVISION, name, data),
  );
  const requirement = record('7c'.padEnd(24, '0'), REQS_REVISION, 'REQ_001', {
    title: 'REQ_001 — Hold 121 °C',
  });
  const records = new Map([
    [TESTS_REVISION, tests],
    [REQS_REVISION, [requirement]],
  ]);
  const trace = {
    _id: '7d'.padEnd(24, '0'),
    source: requirement._id,
    target: tests[0]!._id,
    relation_type: ['relates_to'],
    source_node: { id: requirement._id, type: 'Record' },
    target_node: { id: tests[0]!._id, type: 'Record' },
  } as unknown as TraceEdge;
  return {
    servers: { techdoc: 'http://techdoc.test', records: 'http://records.test', tracer: 'http://tracer.test' },
    async getTopic(id) {
      return structuredClone(topics.get(id)!);
    },
    async *listRecords(query) {
      for (const r of records.get(query.context__knowledge_unit_topic_id ?? '') ?? [])
        yield structuredClone(r);
    },
    async listTraces() {
      return [structuredClone(trace)];
    },
  };
}

/** As a mapping file would say: tests are "Test Case" objects, requirements → tests "verifies". */
const typedMapping: ExportMapping = {
  topic(topic, fields) {
    const presentation = defaultPresentation(topic.name, fields);
    if (topic.name === 'Verification Tests') presentation.reqifTypeName = 'Test Case';
    return { presentation, rule: defaultIdentifierRule(presentation) };
  },
  linkType(source, target) {
    return source.name === 'Requirements' && target.name === 'Verification Tests'
      ? {
          name: 'verifies',
          incoming: 'verified by',
          sourceTopicHistoryId: source.historyId,
          targetTopicHistoryId: target.historyId,
        }
      : undefined;
  },
};

async function typedParts(
  typedRecords: readonly { name: string; data: Record<string, unknown> }[] = TYPED_RECORDS,
): Promise<ExportPart[]> {
  const parts: ExportPart[] = [];
  for await (const part of exportParts(typedSource(typedRecords), {
    revisionIds: [REQS_REVISION, TESTS_REVISION],
    traces: true,
    mapping: typedMapping,
    now: () => new Date('2026-08-11T09:30:00.000Z'),
  }))
    parts.push(part);
  return parts;
}
