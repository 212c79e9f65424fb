import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { CsvSource } from '../src/import/csv-source.js';
import { missingSphinx, sphinxBuild } from './support/sphinx.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { KnowledgeTopicRevision, ServiceRecord, TraceEdge, TraceRole } from '@rxs/contract';
import { readSpecRelations, relationTypeOf } from '../src/import/reqif-relations.js';
import type { ExportedTrace, ExportPart, LinksBy } from '../src/export/model.js';
import { exportParts, type ExportSource } from '../src/export/procedure.js';
import { referenceSample } from './support/hostile-corpus.js';
import {
  missingReader,
  pythonCsvRows,
  scratchDir,
  shouldSkip,
  writeFile,
} from './support/spreadsheet-readers.js';

/**
 * Links named by the tenant's trace model: the export reads the model once, and each format names a
 * trace by its role where one matches (the forward name at the role's `from` record, the backward
 * name at the other), the contract relation type still beside it; `linksBy: 'relation-type'` and a
 * tracer without models export as before.
 */

const scratch = scratchDir();
afterAll(() => scratch.dispose());

const REQS = { revision: '6c0000000000000000000a01', history: '6c0000000000000000000a02' };
const TESTS = { revision: '6c0000000000000000000b01', history: '6c0000000000000000000b02' };
const REQ1 = '6c00000000000000000001a1';
const REQ2 = '6c00000000000000000001a2';
const TST1 = '6c00000000000000000001b1';
const OUTSIDE = '6c00000000000000000001ff';

const topicRef = (topic: typeof REQS, name: string) => ({
  topic_history_id: topic.history,
  topic_name: name,
  current_revision_id: topic.revision,
});

/** Tests verify requirements (traces test -> requirement); requirements motivate tests (requirement -> test). */
const ROLES: TraceRole[] = [
  {
    id: 'verifies',
    forward_name: 'verifies',
    backward_name: 'verified by',
    from: topicRef(TESTS, 'Tests'),
    to: topicRef(REQS, 'Requirements'),
    trace_source: 'from',
    relation_type: 'is_related',
  },
  {
    id: 'motivated-by',
    forward_name: 'motivated by',
    backward_name: 'motivates',
    from: topicRef(TESTS, 'Tests'),
    to: topicRef(REQS, 'Requirements'),
    trace_source: 'to',
    relation_type: 'contributes_to',
  },
  {
    id: 'unused',
    forward_name: 'unused',
    backward_name: 'unused by',
    from: topicRef(REQS, 'Requirements'),
    to: topicRef(TESTS, 'Tests'),
    trace_source: 'from',
    relation_type: 'mentions',
  },
];

const edge = (id: string, source: string, target: string, type: string, outdated = false) =>
  ({
    _id: id,
    source,
    target,
    relation_type: [type],
    source_node: { node_id: source, type: 'Record' },
    target_node: { node_id: target, type: 'Record' },
    outdated,
  }) as unknown as TraceEdge;

const EDGES = [
  edge('7e0000000000000000000001', TST1, REQ1, 'is_related'),
  edge('7e0000000000000000000002', REQ2, TST1, 'contributes_to', true),
  edge('7e0000000000000000000003', REQ1, REQ2, 'is_parent'),
  edge('7e0000000000000000000004', REQ1, OUTSIDE, 'is_related'),
];

/** Two topics cloned from the reference sample, the traces above, and the model (or none). */
function modelSource(model: TraceRole[] | undefined): ExportSource & { modelReads: number } {
  const topic = referenceSample<KnowledgeTopicRevision>('kt_system_requirements.json');
  const [sample] = referenceSample<ServiceRecord[]>('records_system_requirements.json');
  const topics = new Map([
    [
      REQS.revision,
      {
        ...REQS,
        name: 'Requirements',
        records: [
          [REQ1, 'REQ_001'],
          [REQ2, 'REQ_002'],
        ],
      },
    ],
    [TESTS.revision, { ...TESTS, name: 'Tests', records: [[TST1, 'TST_001']] }],
  ]);
  const source = {
    modelReads: 0,
    servers: { techdoc: 'http://techdoc.test', records: 'http://records.test', tracer: 'http://tracer.test' },
    async getTopic(revisionId: string) {
      const { history, name } = topics.get(revisionId)!;
      return {
        ...structuredClone(topic),
        _id: revisionId,
        latest_revision_id: revisionId,
        knowledge_topic_history_id: history,
        knowledge_topic_name: name,
      };
    },
    async *listRecords(query: { context__knowledge_unit_topic_id?: string }) {
      const revisionId = query.context__knowledge_unit_topic_id!;
      for (const [id, readable] of topics.get(revisionId)!.records) {
        const record = structuredClone(sample!);
        record._id = id!;
        record.name = readable!;
        record.data = { ...record.data, name: `${readable} — a record` };
        record.context.knowledge_unit_topic_id = revisionId;
        yield record;
      }
    },
    async listTraces() {
      return structuredClone(EDGES);
    },
    async getTraceRoles() {
      source.modelReads++;
      return model;
    },
  };
  return source as unknown as ExportSource & { modelReads: number };
}

async function partsOf(source: ExportSource, linksBy?: LinksBy): Promise<ExportPart[]> {
  const parts: ExportPart[] = [];
  for await (const part of exportParts(source, {
    revisionIds: [REQS.revision, TESTS.revision],
    traces: true,
    ...(linksBy && { linksBy }),
    now: () => new Date('2026-08-11T09:30:00.000Z'),
  }))
    parts.push(part);
  return parts;
}

const tracesPart = (parts: ExportPart[]) =>
  parts.find((part): part is Extract<ExportPart, { kind: 'traces' }> => part.kind === 'traces')!;

describe('the export procedure with a trace model', () => {
  it('reads the model once and names each trace between exported records by the role that matches', async () => {
    const source = modelSource(ROLES);
    const part = tracesPart(await partsOf(source));
    expect(source.modelReads).toBe(1);
    const byId = new Map(part.traces.map((trace) => [trace.id, trace]));
    expect(byId.get(EDGES[0]!._id)).toMatchObject({
      role: 'verifies',
      roleId: 'verifies',
      relationTypes: ['is_related'],
    });
    expect(byId.get(EDGES[1]!._id)).toMatchObject({ role: 'motivated by', roleId: 'motivated-by' });
    // No role for is_parent, nor for a record outside the export (its topic is not known).
    expect(byId.get(EDGES[2]!._id)).not.toHaveProperty('role');
    expect(byId.get(EDGES[3]!._id)).not.toHaveProperty('role');
    // The roles the traces name, in the model's order; a role no trace names is left out.
    expect(part.roles?.map((role) => role.id)).toEqual(['verifies', 'motivated-by']);
  });

  it('names links by relation type alone with linksBy relation-type (the model is not read) or without a model', async () => {
    const byType = modelSource(ROLES);
    const plain = tracesPart(await partsOf(byType, 'relation-type'));
    expect(byType.modelReads).toBe(0);
    const none = tracesPart(await partsOf(modelSource(undefined)));
    for (const part of [plain, none]) {
      expect(part).not.toHaveProperty('roles');
      for (const trace of part.traces) expect(trace).not.toHaveProperty('role');
    }
    expect(none.traces).toEqual(plain.traces);
  });
});

describe('each format names links by role', () => {
  it('JSON: each trace carries role (the forward name) and roleId, and the file lists the roles', async () => {
    const file = join(scratch.path, 'roles.json');
    await writeFile('json', await partsOf(modelSource(ROLES)), file);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { traces: ExportedTrace[]; roles: TraceRole[] };
    expect(doc.traces.map((trace) => [trace.relationTypes, trace.role])).toEqual([
      [['is_related'], 'verifies'],
      [['contributes_to'], 'motivated by'],
      [['is_parent'], undefined],
      [['is_related'], undefined],
    ]);
    // As the model stores them: an export of a past moment reads them from its history, without names.
    expect(doc.roles).toEqual(
      ROLES.slice(0, 2).map((role) => ({
        ...role,
        from: { topic_history_id: role.from.topic_history_id },
        to: { topic_history_id: role.to.topic_history_id },
      })),
    );
    const plain = join(scratch.path, 'plain.json');
    await writeFile('json', await partsOf(modelSource(ROLES), 'relation-type'), plain);
    expect(JSON.parse(readFileSync(plain, 'utf8'))).not.toHaveProperty('roles');
  });

  it('Sphinx-Needs: a link type per role on the need at its from end, incoming its backward name; each trace once', async () => {
    const file = join(scratch.path, 'roles.needs.json');
    await writeFile('needs', await partsOf(modelSource(ROLES)), file);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    const version = doc.versions[doc.current_version];
    const needs = version.needs;
    // A trace a role names is under the role's link type only, held by the record at the role's
    // from end (Sphinx shows it once); a trace no role names stays under `links` at its source.
    expect(needs.TST_001).toMatchObject({ links: [], verifies: ['REQ_001'], motivated_by: ['REQ_002'] });
    expect(needs.TST_001.rxs_suspect_links).toBe('REQ_002');
    expect(needs.REQ_001).toMatchObject({ links: ['REQ_002'], verifies: [], motivated_by: [] });
    expect(needs.REQ_002).toMatchObject({ links: [], verifies: [], motivated_by: [] });
    expect(needs.REQ_002.rxs_suspect_links).toBe('');
    expect(version.needs_schema.properties.verifies).toMatchObject({
      field_type: 'links',
      incoming: 'verified by',
      outgoing: 'verifies',
    });
    expect(version.needs_schema.properties.motivated_by).toMatchObject({
      incoming: 'motivates',
      outgoing: 'motivated by',
    });
  });

  it('CSV: a link column per role name beside the links column, which keeps the relation types (read by Python csv)', async () => {
    const file = join(scratch.path, 'roles.csv');
    await writeFile('csv', await partsOf(modelSource(ROLES)), file);
    const [header, ...rows] = pythonCsvRows(file);
    const at = (name: string) => header!.indexOf(name);
    expect(header!.slice(at('links'))).toEqual([
      'links',
      'links: verifies',
      'links: verified by',
      'links: motivated by',
      'links: motivates',
    ]);
    const row = (readable: string) => rows.find((cells) => cells[at('readable_id')] === readable)!;
    expect(row('TST_001')[at('links: verifies')]).toBe(`REQ_001 (${REQ1})`);
    expect(row('TST_001')[at('links: motivated by')]).toBe(`REQ_002 (${REQ2}) [suspect]`);
    expect(row('TST_001')[at('links')]).toBe(`is_related:REQ_001 (${REQ1})`);
    expect(row('REQ_001')[at('links: verified by')]).toBe(`TST_001 (${TST1})`);
    expect(row('REQ_001')[at('links')]).toBe(`is_parent:REQ_002 (${REQ2}); is_related:${OUTSIDE}`);
    expect(row('REQ_002')[at('links: motivates')]).toBe(`TST_001 (${TST1}) [suspect]`);
    // The role columns are the export's, like `links`: reading the file back for an import takes
    // no value from them, and says that traces are not imported.
    const source = new CsvSource(file);
    for await (const read of source.rows()) {
      const linkColumns = header!.slice(at('links'));
      expect([...read.values.keys()].filter((name) => linkColumns.includes(name))).toEqual([]);
      expect(read.problems).toEqual([]);
    }
    expect(source.notes.join(' ')).toMatch(/traces are not imported/);
    expect(row('REQ_002')[at('links')]).toBe(`contributes_to:TST_001 (${TST1}) [suspect]`);

    const plain = join(scratch.path, 'plain.csv');
    await writeFile('csv', await partsOf(modelSource(ROLES), 'relation-type'), plain);
    expect(pythonCsvRows(plain)[0]!.at(-1)).toBe('links');
  });

  it('XLSX: the Traces sheet reads each trace by its role', async () => {
    const file = join(scratch.path, 'roles.xlsx');
    await writeFile('xlsx', await partsOf(modelSource(ROLES)), file);
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(file);
    const sheet = book.getWorksheet('Traces')!;
    const rows: unknown[][] = [];
    sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
    const text = (value: unknown) =>
      value && typeof value === 'object' && 'richText' in value
        ? (value as { richText: { text: string }[] }).richText.map((run) => run.text).join('')
        : value;
    const table = rows.map((row) => row.map(text));
    expect(table[0]!.slice(-4)).toEqual(['role_from', 'role', 'role_to', 'role_backward']);
    expect(table[1]!.slice(-4)).toEqual(['TST_001', 'verifies', 'REQ_001', 'verified by']);
    expect(table[2]!.slice(-4)).toEqual(['TST_001', 'motivated by', 'REQ_002', 'motivates']);
    expect(table[3]!).toHaveLength(10);
  });
});

const SCHEMA = new URL('../../../reference/reqif-xsd/reqif.xsd', import.meta.url).pathname;
const xmllint = missingReader('xmllint', 'libxml2-utils');

describe.skipIf(shouldSkip(xmllint))(
  'ReqIF: a SPEC-RELATION-TYPE per role, read back as its relation type',
  () => {
    it('finds xmllint (libxml2-utils)', () => {
      expect(xmllint).toBeUndefined();
    });

    it('names the type by the forward name, runs the relation from the from record, validates, and imports back to the traces', async () => {
      const file = join(scratch.path, 'roles.reqif');
      await writeFile('reqif', await partsOf(modelSource(ROLES)), file);
      const xml = readFileSync(file, 'utf8');
      const lint = spawnSync('xmllint', ['--noout', '--schema', SCHEMA, file], { encoding: 'utf8' });
      expect({ status: lint.status, stderr: lint.stderr }).toEqual({
        status: 0,
        stderr: `${file} validates\n`,
      });
      const types = [
        ...xml.matchAll(/<SPEC-RELATION-TYPE IDENTIFIER="([^"]+)"[^>]*LONG-NAME="([^"]+)"/g),
      ].map((match) => [match[1], match[2]]);
      expect(types).toEqual([
        ['RT-is_related.verifies.from', 'verifies'],
        ['RT-contributes_to.motivated-by.to', 'motivated by'],
        ['RT-is_parent', 'is_parent'],
      ]);

      // Read back: each relation is its trace again, ends and relation type as the service has them.
      const traces = [];
      for await (const relation of readSpecRelations(file))
        traces.push([
          relation.source,
          relation.target,
          relationTypeOf(relation.type, undefined, relation.relationType),
        ]);
      expect(traces).toEqual([
        [`R-${TST1}`, `R-${REQ1}`, 'is_related'],
        [`R-${REQ2}`, `R-${TST1}`, 'contributes_to'],
        [`R-${REQ1}`, `R-${REQ2}`, 'is_parent'],
      ]);
      // The motivated-by relation runs from the test (the role's from record), against its trace.
      expect(xml).toMatch(
        new RegExp(
          `RT-contributes_to\\.motivated-by\\.to</SPEC-RELATION-TYPE-REF>\\s*</TYPE>\\s*<SOURCE>\\s*<SPEC-OBJECT-REF>R-${TST1}<`,
        ),
      );

      // A second export of the same state is the same file, byte for byte.
      const again = join(scratch.path, 'roles-again.reqif');
      await writeFile('reqif', await partsOf(modelSource(ROLES)), again);
      expect(readFileSync(again, 'utf8')).toBe(xml);
    });
  },
);

const sphinx = missingSphinx();

/** The conf.py of docs/formats/needs.md: extra options and link types declared from the file's needs_schema. */
const CONF = `project = "Roles"
extensions = ["sphinx_needs"]
import json
_needs = json.load(open("needs.json", encoding="utf-8"))
_fields = _needs["versions"][_needs["current_version"]]["needs_schema"]["properties"]
needs_extra_options = [name for name, f in _fields.items() if f.get("field_type") == "extra"]
needs_extra_links = [
    {"option": name, "incoming": f["incoming"], "outgoing": f.get("outgoing", name)}
    for name, f in _fields.items()
    if f.get("field_type") == "links" and name != "links"
]
`;

describe.skipIf(shouldSkip(sphinx))('Sphinx-Needs builds the role link types (sphinx -W)', () => {
  it('finds Sphinx and the vendored Sphinx-Needs', () => {
    expect(sphinx).toBeUndefined();
  });

  it('needimport with the role link types declared builds without a warning and shows both names', async () => {
    const dir = join(scratch.path, 'sphinx');
    const file = join(scratch.path, 'sphinx.needs.json');
    await writeFile('needs', await partsOf(modelSource(ROLES)), file);
    const run = sphinxBuild(dir, {
      'conf.py': CONF,
      'needs.json': readFileSync(file),
      'index.rst': 'Roles\n=====\n\n.. needimport:: /needs.json\n',
    });
    const out = run.out;
    expect({ status: run.status, log: run.log }).toEqual({ status: 0, log: '' });
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    for (const name of ['verifies', 'verified by', 'motivated by', 'motivates']) expect(html).toContain(name);
  }, 180_000);
});
