import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OPTION_TYPES } from '../src/mapping/options.js';
import type { ExportPart } from '../src/export/model.js';
import { exportParts } from '../src/export/procedure.js';
import { cellText } from '../src/export/writers/cells.js';
import { hostileRevisionIds, hostileSource } from './support/hostile-corpus.js';
import {
  collectParts,
  jsonExport,
  PYTHON,
  referenceSource,
  scratchDir,
  shouldSkip,
  writeFile,
  type JsonExport,
} from './support/spreadsheet-readers.js';

/**
 * The ReqIF export read by StrictDoc's `reqif` library (vendored in vendor/strictdoc-reqif, see its
 * README.md), the parser of StrictDoc's ReqIF import: it must parse our files, with and without
 * traces, and find every spec object, specification and relation (with its suspect mark) that the
 * JSON export carries. The library reads only STRING, INTEGER and XHTML values on relations.
 */

const VENDORED = new URL('./vendor/strictdoc-reqif', import.meta.url).pathname;
const scratch = scratchDir();
afterAll(() => scratch.dispose());

/** Why the library cannot run here (no python3, or no lxml), or undefined when it can. */
function missingLibrary(): string | undefined {
  const run = spawnSync(PYTHON, ['-B', '-c', 'import lxml.etree, lxml.html'], { encoding: 'utf8' });
  if (run.error)
    return `${PYTHON} is not installed: install the Debian packages python3 and python3-lxml (apt-get install python3 python3-lxml).`;
  return run.status === 0
    ? undefined
    : `Python's lxml is missing: install the Debian package python3-lxml (apt-get install python3-lxml). ${run.stderr.trim()}`;
}
const missing = missingLibrary();

interface ReadValue {
  kind: string;
  value: unknown;
}
interface ReadBack {
  exceptions: string[];
  objects: { identifier: string; longName: string; type: string; values: Record<string, ReadValue> }[];
  specifications: { longName: string; objects: string[] }[];
  relationTypes: { longName: string; attributes: { longName: string; kind: string }[] }[];
  relations: { type: string; source: string; target: string; values: Record<string, ReadValue> }[];
}

/** What `reqif.parser.ReqIFParser` reads, with references resolved to names. */
const READER = `
import json, sys
from reqif.parser import ReqIFParser
bundle = ReqIFParser.parse(sys.argv[1])
content = bundle.core_content.req_if_content
lookup = bundle.lookup
def attribute_definitions(spec_type):
    return getattr(spec_type, 'attribute_definitions', None) or getattr(spec_type, 'spec_attributes', None) or []
definitions = {d.identifier: d for t in content.spec_types or [] for d in attribute_definitions(t)}
enum_values = {v.identifier: v.other_content for t in content.data_types or [] for v in getattr(t, 'values', None) or []}
def read(attribute):
    value = attribute.value
    if attribute.attribute_type.name == 'ENUMERATION':
        value = [enum_values[ref] for ref in value]
    return definitions[attribute.definition_ref].long_name, {'kind': attribute.attribute_type.name, 'value': value}
def type_name(ref):
    return lookup.get_spec_type_by_ref(ref).long_name
objects = [{'identifier': o.identifier, 'longName': o.long_name, 'type': type_name(o.spec_object_type),
            'values': dict(read(a) for a in o.attributes)} for o in content.spec_objects or []]
specifications = [{'longName': s.long_name,
                   'objects': [h.spec_object for h in bundle.iterate_specification_hierarchy(s)]}
                  for s in content.specifications or []]
relation_types = [{'longName': t.long_name,
                   'attributes': [{'longName': d.long_name, 'kind': d.attribute_type.name} for d in attribute_definitions(t)]}
                  for t in content.spec_types or [] if type(t).__name__ == 'ReqIFSpecRelationType']
relations = [{'type': type_name(r.relation_type_ref), 'source': r.source, 'target': r.target,
              'values': dict([read(r.values_attribute)] if r.values_attribute else [])}
             for r in content.spec_relations or []]
sys.stdout.write(json.dumps({'exceptions': [str(e) for e in bundle.exceptions], 'objects': objects,
                             'specifications': specifications, 'relationTypes': relation_types, 'relations': relations}))
`;

function strictdocRead(file: string): ReadBack {
  return JSON.parse(
    execFileSync(PYTHON, ['-B', '-c', READER, file], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      env: { ...process.env, PYTHONPATH: VENDORED, PYTHONDONTWRITEBYTECODE: '1' },
    }),
  );
}

/** What XML 1.0 cannot carry becomes U+FFFD (docs/formats/reqif.md). */
const asXml = (text: string) =>
  text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD');

async function exportAndRead(parts: readonly ExportPart[], name: string) {
  const file = join(scratch.path, `${name}.reqif`);
  await writeFile('reqif', parts, file);
  return { read: strictdocRead(file), json: await jsonExport(parts, scratch.path) };
}

/** Every record a spec object with its facts and fields; every topic a specification, in order. */
function expectObjects(read: ReadBack, json: JsonExport, parts: readonly ExportPart[]) {
  expect(read.exceptions).toEqual([]);
  const enumerations = new Set(
    parts.flatMap((part) =>
      part.kind === 'topic'
        ? part.topic.fields.filter((f) => OPTION_TYPES.has(f.type ?? '')).map((f) => f.name)
        : [],
    ),
  );
  // Without a mapping file, a topic's spec object type is named after the topic.
  const records = json.topics.flatMap((topic) =>
    topic.records.map((record) => ({ record, type: topic.name })),
  );
  expect(read.objects).toHaveLength(records.length);
  for (const { record, type } of records) {
    const object = read.objects.find((o) => o.identifier === `R-${record.id}`);
    expect(object, record.id).toBeDefined();
    expect(object!.longName).toBe(record.readableId);
    expect(object!.type).toBe(type);
    const expected: Record<string, ReadValue> = {
      'ReqIF.ForeignID': { kind: 'STRING', value: record.readableId },
      'RXS.RecordId': { kind: 'STRING', value: record.id },
      'RXS.RecordName': { kind: 'STRING', value: asXml(record.name) },
      'RXS.Version': { kind: 'STRING', value: record.version },
    };
    for (const [name, value] of Object.entries(record.values))
      if (value !== undefined && value !== null)
        expected[name] = enumerations.has(name)
          ? { kind: 'ENUMERATION', value: Array.isArray(value) ? value : [value] }
          : { kind: 'STRING', value: asXml(cellText(value)) };
    expect(object!.values, record.readableId).toMatchObject(expected);
  }
  expect(read.specifications).toEqual(
    json.topics.map((topic) => ({
      longName: topic.name,
      objects: topic.records.map((record) => `R-${record.id}`),
    })),
  );
}

/** One relation per trace and relation type, carrying the suspect mark as "true" or "false". */
function expectRelations(read: ReadBack, json: JsonExport) {
  const expected = json.traces.flatMap((trace) =>
    trace.relationTypes.map((type) => ({
      type,
      source: `R-${trace.source.id}`,
      target: `R-${trace.target.id}`,
      values: { Suspect: { kind: 'STRING', value: String(trace.suspect) } },
    })),
  );
  expect(read.relations).toEqual(expected);
  expect(read.relationTypes).toEqual(
    [...new Set(expected.map((relation) => relation.type))].map((longName) => ({
      longName,
      attributes: [{ longName: 'Suspect', kind: 'STRING' }],
    })),
  );
}

describe.skipIf(shouldSkip(missing))("ReqIF read by StrictDoc's reqif library", () => {
  it('finds Python 3 with lxml (Debian packages python3, python3-lxml)', () => {
    expect(missing).toBeUndefined();
  });

  it('reads the reference sample with its traces, one suspect and one not', async () => {
    const { source, revisionIds } = referenceSource();
    const parts = await collectParts(source, revisionIds);
    const { read, json } = await exportAndRead(parts, 'reference-traces');
    expect(json.traces.map((trace) => trace.suspect)).toEqual([false, true]);
    expectObjects(read, json, parts);
    expectRelations(read, json);
  });

  it('reads the reference sample exported without traces', async () => {
    const { source, revisionIds } = referenceSource();
    const parts: ExportPart[] = [];
    for await (const part of exportParts(source, {
      revisionIds,
      now: () => new Date('2026-08-11T09:30:00.000Z'),
    }))
      parts.push(part);
    const { read, json } = await exportAndRead(parts, 'reference-no-traces');
    expect(json.traces ?? []).toEqual([]);
    expectObjects(read, json, parts);
    expect(read.relations).toEqual([]);
    expect(read.relationTypes).toEqual([]);
  });

  it('reads every hostile value as the JSON export has it, XML-unsafe characters as U+FFFD', async () => {
    const parts = await collectParts(hostileSource(), hostileRevisionIds());
    const { read, json } = await exportAndRead(parts, 'hostile');
    expectObjects(read, json, parts);
    expectRelations(read, json);
  });
});
