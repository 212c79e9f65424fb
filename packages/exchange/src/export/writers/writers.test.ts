import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import type { FormSchema } from '../../../../contract/src/form.js';
import type { KnowledgeTopicRevision } from '../../../../contract/src/knowledge-topic.js';
import type { ServiceRecord } from '../../../../contract/src/record.js';
import { buildFieldMap, extendFieldMap } from '../../mapping/field-map.js';
import { mapRecord } from '../../mapping/record.js';
import { defaultIdentifierRule, defaultPresentation, readableIdOf } from '../identity.js';
import type { ExportedTopic, ExportedTrace, ExportFormat, ExportPart } from '../model.js';
import { createWriter, needId, SheetNames, specObjectId, writeExport, type WriterOptions } from './index.js';

// ---------------------------------------------------------------------------------------------
// Fixture: the sample System Requirements topic and its records, one extra record full of awkward
// text, a second hand-made topic with nesting, an empty third topic, and traces between them.

const samples = new URL('../../../../../reference/samples/', import.meta.url);
const load = <T>(file: string) => JSON.parse(readFileSync(new URL(file, samples), 'utf8')) as T;
const sampleTopic = load<KnowledgeTopicRevision>('kt_system_requirements.json');
const sampleRecords = load<ServiceRecord[]>('records_system_requirements.json');

const EXPORTED_AT = '2026-08-11T09:30:00.000Z';
const SERVERS = {
  techdoc: 'http://techdoc.test',
  records: 'http://records.test',
  tracer: 'http://tracer.test',
};
const [REQ1, REQ2, REQ3, REQ4] = sampleRecords.map((r) => r._id) as [string, string, string, string];
const SPECIAL = '6a7701ffcd5640b4bf28b0ff';
const RISK1 = '7b0000000000000000000001';
const RISK2 = '7b0000000000000000000002';
const RISK3 = '7b0000000000000000000003';
const NOT_EXPORTED = 'ffffffffffffffffffffffff';

const SPECIAL_NAME = 'Special "record", with\nnewline';
const SPECIAL_DESCRIPTION =
  'Line one\nLine two, "quotes", a tab\tand <xml> & ampersand &amp; entity — ünïcödé ✓ 😀';

function serviceRecord(
  id: string,
  name: string,
  topicRevisionId: string,
  data: Record<string, unknown>,
): ServiceRecord {
  const base = structuredClone(sampleRecords[0]!);
  return {
    ...base,
    _id: id,
    name,
    data,
    context: { ...base.context, knowledge_unit_topic_id: topicRevisionId },
  };
}

const specialRecord = serviceRecord(SPECIAL, SPECIAL_NAME, sampleTopic._id, {
  name: "=cmd|' /C calc'!A0",
  description: SPECIAL_DESCRIPTION,
  type: 'Other',
  checklist_kgd0ri: ['Equipment', 'Infrastructure'],
  priority: 'urgent',
  justification: '+1+2',
  textfield_ollccr: '@SUM(A1)',
  textfield_v8rfy: '-2+3',
  legacy_note: 'kept from an older schema',
  control: 'bell\u0007char',
});

const riskSchema: FormSchema = {
  components: [
    { type: 'textfield', key: 'name' },
    {
      type: 'select',
      key: 'severity',
      label: 'Severity',
      values: [
        { label: 'High', value: 'high' },
        { label: 'Low', value: 'low' },
      ],
    },
    {
      type: 'dynamiclist',
      path: 'hazards',
      label: 'Hazards',
      components: [{ type: 'textfield', key: 'title', label: 'Hazard' }],
    },
    {
      type: 'group',
      path: 'owner',
      components: [{ type: 'textfield', key: 'email', label: 'Owner e-mail' }],
    },
  ],
};

interface TopicInput {
  revision: Pick<
    KnowledgeTopicRevision,
    | '_id'
    | 'knowledge_topic_history_id'
    | 'knowledge_topic_name'
    | 'version'
    | 'status'
    | 'latest_revision_id'
  > & {
    knowledge_topic_schema: FormSchema;
  };
  records: ServiceRecord[];
}

const systemRequirements: TopicInput = { revision: sampleTopic, records: [...sampleRecords, specialRecord] };
const riskTopic: TopicInput = {
  revision: {
    _id: '7a0000000000000000000001',
    knowledge_topic_history_id: '7a0000000000000000000002',
    knowledge_topic_name: 'Risks: Hazards / Mitigations [v2] and a long tail',
    version: '2.0',
    status: 'approved',
    latest_revision_id: '7a0000000000000000000001',
    knowledge_topic_schema: riskSchema,
  },
  records: [
    serviceRecord(RISK1, 'Burn', '7a0000000000000000000001', {
      name: 'Burn risk',
      severity: 'high',
      hazards: [{ title: 'Hot surface' }, { title: 'Steam' }],
      owner: { email: 'qa@example.com' },
    }),
    serviceRecord(RISK2, 'Cut', '7a0000000000000000000001', { name: 'Cut risk', severity: 'low' }),
  ],
};
const emptyTopic: TopicInput = {
  revision: {
    ...riskTopic.revision,
    _id: '7c0000000000000000000001',
    knowledge_topic_history_id: '7c0000000000000000000002',
    knowledge_topic_name: 'Empty topic',
    latest_revision_id: '7c0000000000000000000001',
  },
  records: [],
};

const trace = (
  id: string,
  source: string,
  target: string,
  relationTypes: string[],
  targetType = 'Record',
): ExportedTrace =>
  ({
    id,
    source: { id: source, type: 'Record' },
    target: { id: target, type: targetType },
    relationTypes,
  }) as ExportedTrace;
const TRACES = [
  trace('8a0000000000000000000001', REQ1, REQ2, ['is_parent']),
  trace('8a0000000000000000000002', REQ3, RISK1, ['mentions']),
  trace('8a0000000000000000000003', REQ1, 'doc-1', ['is_related'], 'Document'),
  trace('8a0000000000000000000004', REQ2, NOT_EXPORTED, ['is_related']),
  trace('8a0000000000000000000005', RISK1, REQ4, ['is_related', 'contributes_to']),
];

/** The parts an export of these topics produces, mapped by the real mapping functions. */
function exportParts(topics: TopicInput[], traces?: ExportedTrace[]): ExportPart[] {
  const parts: ExportPart[] = [
    {
      kind: 'header',
      header: {
        exportedAt: EXPORTED_AT,
        servers: SERVERS,
        revisionIds: topics.map((t) => t.revision._id),
        withTraces: traces !== undefined,
      },
    },
  ];
  const warnings: string[] = [];
  for (const { revision, records } of topics) {
    let map = buildFieldMap(revision.knowledge_topic_schema);
    warnings.push(...map.warnings);
    const topic: ExportedTopic = {
      revisionId: revision._id,
      historyId: revision.knowledge_topic_history_id,
      name: revision.knowledge_topic_name,
      // The sample revision predates these fields; the service fills them in.
      version: revision.version ?? '1.0',
      status: revision.status ?? 'approved',
      latestRevisionId: revision.latest_revision_id,
      schema: revision.knowledge_topic_schema,
      fields: map.fields,
      presentation: defaultPresentation(revision.knowledge_topic_name, map.fields),
    };
    parts.push({ kind: 'topic', topic });
    for (const record of records) {
      const mapped = mapRecord(record, map);
      mapped.record.readableId = readableIdOf(
        mapped.record,
        defaultIdentifierRule(topic.presentation),
        topic.presentation,
      );
      map = extendFieldMap(map, mapped.newFields);
      parts.push({ kind: 'record', record: mapped.record });
    }
    parts.push({ kind: 'topic-end', topic: { ...topic, fields: map.fields }, recordCount: records.length });
  }
  if (traces) parts.push({ kind: 'traces', traces, linkTypes: [] });
  parts.push({ kind: 'end', warnings: [...warnings, 'a warning with "quotes"'] });
  return parts;
}

const ALL = [systemRequirements, riskTopic, emptyTopic];
/** The first columns of the sample topic's table: the record's facts, then its first fields. */
const LEADING_COLUMNS = [
  '_id',
  'readable_id',
  'name',
  'version',
  'topic_revision_id',
  'source_id',
  'Name',
  'Description',
];

const workDir = mkdtempSync(join(tmpdir(), 'rxs-writers-test-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** Runs a writer over the parts into memory. */
async function render(
  format: ExportFormat,
  parts: ExportPart[],
  options: WriterOptions = {},
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  await writeExport(createWriter(format, out, options), parts);
  return Buffer.concat(chunks);
}

/** Runs a writer over the parts into a file (for xmllint). */
async function renderFile(format: ExportFormat, parts: ExportPart[], name: string): Promise<string> {
  const path = join(workDir, name);
  await writeExport(createWriter(format, createWriteStream(path)), parts);
  return path;
}

/** RFC 4180, enough to read our own output back independently of the library that wrote it. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') ((cell += '"'), i++);
      else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') (row.push(cell), (cell = ''));
    else if (char === '\r' && text[i + 1] === '\n')
      (row.push(cell), rows.push(row), (row = []), (cell = ''), i++);
    else cell += char;
  }
  if (cell !== '' || row.length > 0) (row.push(cell), rows.push(row));
  return rows;
}

const csvObjects = (text: string) => {
  const [header, ...rows] = parseCsv(text.replace(/^\uFEFF/, ''));
  return { header: header!, rows: rows.map((row) => Object.fromEntries(header!.map((h, i) => [h, row[i]]))) };
};

// ---------------------------------------------------------------------------------------------

describe('json', () => {
  it('writes the whole snapshot as one document, one record per line', async () => {
    const text = (await render('json', exportParts(ALL, TRACES))).toString('utf8');
    const doc = JSON.parse(text);
    expect(doc).toMatchObject({
      format: 'rxs-export',
      formatVersion: 1,
      exportedAt: EXPORTED_AT,
      servers: SERVERS,
    });
    expect(doc.topics.map((t: { name: string; recordCount: number }) => [t.name, t.recordCount])).toEqual([
      ['System Requirements', 5],
      ['Risks: Hazards / Mitigations [v2] and a long tail', 2],
      ['Empty topic', 0],
    ]);
    const [requirements, risks, empty] = doc.topics;
    expect(requirements).toMatchObject({
      revisionId: sampleTopic._id,
      historyId: sampleTopic.knowledge_topic_history_id,
      version: '1.0',
      status: 'approved',
      latestRevisionId: sampleTopic.latest_revision_id,
    });
    expect(requirements.schema).toEqual(sampleTopic.knowledge_topic_schema);
    expect(requirements.fields.map((f: { name: string }) => f.name)).toContain('legacy_note');
    expect(requirements.records[4].values.Description).toBe(SPECIAL_DESCRIPTION);
    expect(requirements.records[4].name).toBe(SPECIAL_NAME);
    expect(risks.records[0].values.Hazards).toEqual([{ Hazard: 'Hot surface' }, { Hazard: 'Steam' }]);
    expect(empty.records).toEqual([]);
    expect(doc.traces).toEqual(TRACES);
    expect(doc.warnings).toContain('a warning with "quotes"');
    // Streamed: every record sits on a line of its own.
    expect(
      text.split('\n').filter((line) => line.startsWith('{"id":') && line.includes('"topicRevisionId"'))
        .length,
    ).toBe(7);
  });

  it('writes null traces when traces were not asked for, and an empty export', async () => {
    expect(JSON.parse((await render('json', exportParts(ALL))).toString()).traces).toBeNull();
    const empty = JSON.parse((await render('json', exportParts([], []))).toString());
    expect(empty).toMatchObject({ topics: [], traces: [] });
  });

  it('streams: bytes leave before the export ends', async () => {
    const chunks: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString());
        done();
      },
    });
    const writer = createWriter('json', out);
    const parts = exportParts([systemRequirements]);
    for (const part of parts.slice(0, 4)) await writer.write(part);
    expect(chunks.join('')).toContain(REQ2);
    for (const part of parts.slice(4)) await writer.write(part);
    await writer.close();
    expect(JSON.parse(chunks.join('')).topics[0].records).toHaveLength(5);
  });
});

describe('jsonl', () => {
  it('writes one object per line, each with its kind', async () => {
    const lines = (await render('jsonl', exportParts(ALL, TRACES)))
      .toString()
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const kinds = lines.map((l) => l.kind);
    expect(kinds[0]).toBe('header');
    expect(kinds.at(-1)).toBe('end');
    expect(kinds.filter((k) => k === 'topic')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'record')).toHaveLength(7);
    expect(kinds.filter((k) => k === 'trace')).toHaveLength(TRACES.length);
    expect(lines[0]).toMatchObject({
      format: 'rxs-export',
      formatVersion: 1,
      exportedAt: EXPORTED_AT,
      withTraces: true,
    });
    const special = lines.find((l) => l.id === SPECIAL);
    expect(special).toMatchObject({ kind: 'record', topicRevisionId: sampleTopic._id, name: SPECIAL_NAME });
    const end = lines.find((l) => l.kind === 'topic-end' && l.revisionId === sampleTopic._id);
    expect(end.recordCount).toBe(5);
    expect(end.fields.map((f: { key: string }) => f.key)).toEqual(
      expect.arrayContaining(['legacy_note', 'control']),
    );
  });
});

describe('csv', () => {
  it('writes one row per record with the fixed columns, then the semantic names', async () => {
    const bytes = await render('csv', exportParts([systemRequirements]));
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const { header, rows } = csvObjects(bytes.toString('utf8'));
    expect(header.slice(0, LEADING_COLUMNS.length)).toEqual(LEADING_COLUMNS);
    expect(header).not.toContain('topic');
    expect(header).not.toContain('links');
    expect(header.slice(-2)).toEqual(['legacy_note', 'control']);
    expect(rows).toHaveLength(5);
    expect(rows[0]).toMatchObject({
      _id: REQ1,
      name: 'Requirements-1',
      version: '1.0',
      topic_revision_id: sampleTopic._id,
      Name: 'REQ_001 — Sterilization temperature range is better',
      'Requirement concerning': 'Equipment',
      Priority: 'high',
    });
  });

  it('keeps quotes, newlines and unicode, joins checklists and neutralises formulas', async () => {
    const { rows } = csvObjects((await render('csv', exportParts([systemRequirements]))).toString('utf8'));
    const special = rows.find((r) => r._id === SPECIAL)!;
    expect(special.name).toBe(SPECIAL_NAME);
    expect(special.Description).toBe(SPECIAL_DESCRIPTION);
    expect(special['Requirement concerning']).toBe('Equipment; Infrastructure');
    expect(special.Name).toBe("'=cmd|' /C calc'!A0");
    expect(special.Justification).toBe("'+1+2");
    expect(special['specify Other Type']).toBe("'@SUM(A1)");
    expect(special['specify Other Source']).toBe("'-2+3");
    expect(special.Priority).toBe('urgent');
    expect(special.legacy_note).toBe('kept from an older schema');
    expect(special.control).toBe('bell\u0007char');
  });

  it('puts several topics in one table with a topic column, the union of columns and links', async () => {
    const { header, rows } = csvObjects((await render('csv', exportParts(ALL, TRACES))).toString('utf8'));
    expect(header[0]).toBe('topic');
    expect(header.at(-1)).toBe('links');
    // The risk topic's field named "name" cannot share the record's own "name" column.
    expect(header).toContain('name (name)');
    expect(header.filter((h) => h === 'name')).toHaveLength(1);
    expect(new Set(header).size).toBe(header.length);
    expect(rows).toHaveLength(7);
    const burn = rows.find((r) => r._id === RISK1)!;
    expect(burn).toMatchObject({
      topic: riskTopic.revision.knowledge_topic_name,
      'name (name)': 'Burn risk',
      Severity: 'high',
    });
    expect(JSON.parse(burn.Hazards!)).toEqual([{ Hazard: 'Hot surface' }, { Hazard: 'Steam' }]);
    expect(burn.Priority).toBe('');
    expect(burn.links).toBe(`is_related:${REQ4}; contributes_to:${REQ4}`);
    expect(rows.find((r) => r._id === REQ1)!.links).toBe(`is_parent:${REQ2}; is_related:Document/doc-1`);
    expect(rows.find((r) => r._id === REQ2)!.links).toBe(`is_related:${NOT_EXPORTED}`);
  });

  describe('rows formatted as records arrive give the same bytes as rows formatted on close', () => {
    /** The same parts, but the header announces a second topic: the writer spools from the start. */
    const spooledFromStart = (parts: ExportPart[]): ExportPart[] =>
      parts.map((part) =>
        part.kind === 'header'
          ? { ...part, header: { ...part.header, revisionIds: [...part.header.revisionIds, 'another'] } }
          : part,
      );
    const topicEnd = (parts: ExportPart[]) => parts.findIndex((p) => p.kind === 'topic-end');

    it('when records carry keys the schema does not know (rows rearranged to the final columns)', async () => {
      const parts = exportParts([systemRequirements]);
      const streamed = await render('csv', parts);
      expect(streamed).toEqual(await render('csv', spooledFromStart(parts)));
      expect(csvObjects(streamed.toString('utf8')).header.slice(-2)).toEqual(['legacy_note', 'control']);
    });

    it('when every record fits the schema (rows copied as they are)', async () => {
      const plain = { ...systemRequirements, records: systemRequirements.records.slice(0, 2) };
      const parts = exportParts([plain]);
      expect(parts.filter((p) => p.kind === 'record')).toHaveLength(2);
      const streamed = await render('csv', parts);
      expect(streamed).toEqual(await render('csv', spooledFromStart(parts)));
      expect(csvObjects(streamed.toString('utf8')).rows).toHaveLength(2);
    });

    it('when the parts arrive in batches (writeParts)', async () => {
      const parts = exportParts([systemRequirements]);
      const chunks: Buffer[] = [];
      const out = new Writable({
        write(chunk: Buffer, _encoding, done) {
          chunks.push(Buffer.from(chunk));
          done();
        },
      });
      const writer = createWriter('csv', out);
      await writer.writeParts!(parts.slice(0, 4));
      await writer.writeParts!(parts.slice(4));
      await writer.close();
      expect(Buffer.concat(chunks)).toEqual(await render('csv', parts));
    });

    it('when traces or a second topic arrive unannounced', async () => {
      const parts = exportParts([systemRequirements]);
      const withTraces = [
        ...parts.slice(0, topicEnd(parts) + 1),
        { kind: 'traces', traces: TRACES, linkTypes: [] } as ExportPart,
        ...parts.slice(topicEnd(parts) + 1),
      ];
      const streamed = await render('csv', withTraces);
      expect(streamed).toEqual(await render('csv', spooledFromStart(withTraces)));
      expect(csvObjects(streamed.toString('utf8')).header.at(-1)).toBe('links');

      const two = exportParts([systemRequirements, riskTopic]);
      const header = two[0] as Extract<ExportPart, { kind: 'header' }>;
      const unannounced: ExportPart[] = [
        { kind: 'header', header: { ...header.header, revisionIds: header.header.revisionIds.slice(0, 1) } },
        ...two.slice(1),
      ];
      const rows = await render('csv', unannounced);
      expect(rows).toEqual(await render('csv', two));
      expect(csvObjects(rows.toString('utf8')).header[0]).toBe('topic');
    });
  });

  it('writes only the header for topics without records', async () => {
    const { header, rows } = csvObjects((await render('csv', exportParts([emptyTopic]))).toString('utf8'));
    expect(header).toEqual([
      '_id',
      'readable_id',
      'name',
      'version',
      'topic_revision_id',
      'source_id',
      'name (name)',
      'Severity',
      'Hazards',
      'Owner e-mail',
    ]);
    expect(rows).toEqual([]);
  });
});

describe('xlsx', () => {
  /** Text cells are inline rich text (so whitespace survives); exceljs reads them as runs. */
  const plain = (value: unknown) =>
    value !== null && typeof value === 'object' && 'richText' in value
      ? (value as ExcelJS.CellRichTextValue).richText.map((run) => run.text).join('')
      : value;
  const rowValues = (row: ExcelJS.Row) => (row.values as unknown[]).map(plain);

  async function workbook(parts: ExportPart[]) {
    const book = new ExcelJS.Workbook();
    await book.xlsx.load((await render('xlsx', parts)) as unknown as ArrayBuffer);
    return book;
  }

  it('writes a sheet per topic with a bold, frozen header, then Traces and Export', async () => {
    const book = await workbook(exportParts(ALL, TRACES));
    expect(book.worksheets.map((s) => s.name)).toEqual([
      'System Requirements',
      'Risks  Hazards   Mitigations  v',
      'Empty topic',
      'Traces',
      'Export',
    ]);
    const sheet = book.getWorksheet('System Requirements')!;
    const header = rowValues(sheet.getRow(1));
    expect(header.slice(1, LEADING_COLUMNS.length + 1)).toEqual(LEADING_COLUMNS);
    expect(sheet.getRow(1).font?.bold).toBe(true);
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(sheet.rowCount).toBe(6);
    expect(book.worksheets[2]!.rowCount).toBe(1);
  });

  it('keeps values as typed cells, special text intact and formulas inert', async () => {
    const book = await workbook(exportParts([systemRequirements]));
    const sheet = book.getWorksheet('System Requirements')!;
    const header = rowValues(sheet.getRow(1)).slice(1);
    const row = [...Array(sheet.rowCount).keys()]
      .map((i) => sheet.getRow(i + 1))
      .find((r) => plain(r.getCell(1).value) === SPECIAL)!;
    const cell = (name: string) => {
      const found = row.getCell(header.indexOf(name) + 1);
      return { value: plain(found.value), type: found.type, numFmt: found.numFmt };
    };
    expect(cell('name').value).toBe(SPECIAL_NAME);
    expect(cell('Description').value).toBe(SPECIAL_DESCRIPTION);
    expect(cell('Requirement concerning').value).toBe('Equipment; Infrastructure');
    for (const [name, text] of [
      ['Name', "=cmd|' /C calc'!A0"],
      ['Justification', '+1+2'],
    ] as const) {
      expect(cell(name).value).toBe(text);
      expect(cell(name).type).toBe(ExcelJS.ValueType.RichText);
      expect(cell(name).numFmt).toBe('@');
    }
    // A control character is written as the OOXML escape _x0007_, which readers decode.
    expect(cell('control').value).toBe('bell\u0007char');
  });

  it('lists traces and the export facts', async () => {
    const book = await workbook(exportParts(ALL, TRACES));
    const traces = book.getWorksheet('Traces')!;
    expect(traces.rowCount).toBe(TRACES.length + 1);
    // No mapping file (no link type) and records made without the procedure (no readable ids).
    expect(rowValues(traces.getRow(6)).slice(1)).toEqual([
      '8a0000000000000000000005',
      'is_related; contributes_to',
      undefined,
      RISK1,
      undefined,
      'Record',
      REQ4,
      undefined,
      'Record',
    ]);
    const facts = book.getWorksheet('Export')!;
    const cells = facts
      .getSheetValues()
      .flat()
      .map(plain)
      .filter((v) => v !== undefined && v !== null);
    expect(cells).toEqual(
      expect.arrayContaining([
        EXPORTED_AT,
        SERVERS.records,
        sampleTopic._id,
        'a warning with "quotes"',
        5,
        0,
      ]),
    );
  });

  it('has no Traces sheet when traces were not exported', async () => {
    const book = await workbook(exportParts([systemRequirements]));
    expect(book.worksheets.map((s) => s.name)).toEqual(['System Requirements', 'Export']);
  });
});

describe('sheet names', () => {
  it('are valid and unique', () => {
    const names = new SheetNames(['Traces', 'Export']);
    expect(names.take('Traces')).toBe('Traces (2)');
    expect(names.take('history')).toBe('history (2)');
    expect(names.take("'Quoted'")).toBe('Quoted');
    expect(names.take('a/b\\c?d*e[f]g:h')).toBe('a b c d e f g h');
    expect(names.take('')).toBe('Topic');
    const long = 'A very long knowledge topic name indeed';
    const first = names.take(long);
    const second = names.take(long.toUpperCase());
    expect(first).toHaveLength(31);
    expect(second).toHaveLength(31);
    expect(second.endsWith(' (2)')).toBe(true);
    expect(names.take('😀'.repeat(20)).length).toBeLessThanOrEqual(31);
  });
});

const hasXmllint = spawnSync('xmllint', ['--version']).status === 0;
const schema = new URL('../../../../../reference/reqif-xsd/reqif.xsd', import.meta.url).pathname;
/** An XPath result; xmllint ends it with one line break of its own. */
const xpath = (file: string, expression: string) =>
  execFileSync('xmllint', ['--xpath', expression, file], { encoding: 'utf8' }).replace(/\n$/, '');
const node = (name: string) => `//*[local-name()="${name}"]`;

describe('reqif', () => {
  if (!hasXmllint) {
    it.skip('needs xmllint (Debian: apt-get install libxml2-utils) to validate against the ReqIF schema', () => {});
    return;
  }

  it('validates against the ReqIF 1.2 schema, with all topics, records, relations and specifications', async () => {
    const file = await renderFile('reqif', exportParts(ALL, TRACES), 'all.reqif');
    const result = spawnSync('xmllint', ['--noout', '--schema', schema, file], { encoding: 'utf8' });
    expect(result.stderr).toContain('validates');
    expect(result.status).toBe(0);

    expect(xpath(file, `count(${node('SPEC-OBJECT-TYPE')})`)).toBe('3');
    expect(xpath(file, `count(${node('SPEC-OBJECT')})`)).toBe('7');
    expect(xpath(file, `count(${node('SPECIFICATION')})`)).toBe('3');
    expect(
      xpath(file, `count(${node('SPECIFICATION')}[@LONG-NAME="Empty topic"]${node('SPEC-HIERARCHY')})`),
    ).toBe('0');
    expect(
      xpath(
        file,
        `count(${node('SPECIFICATION')}[@LONG-NAME="System Requirements"]${node('SPEC-HIERARCHY')})`,
      ),
    ).toBe('5');
    expect(xpath(file, `string(${node('REQ-IF-TOOL-ID')})`)).toBe('RXS');
    expect(xpath(file, `string(${node('CREATION-TIME')})`)).toBe(EXPORTED_AT);

    // Relations only where both ends are exported records: t1, t2 and both relation types of t5.
    const relation = (source: string, target: string) =>
      `count(${node('SPEC-RELATION')}[*[local-name()="SOURCE"]/*="${specObjectId(source)}"][*[local-name()="TARGET"]/*="${specObjectId(target)}"])`;
    expect(xpath(file, `count(${node('SPEC-RELATION')})`)).toBe('4');
    expect(xpath(file, relation(REQ1, REQ2))).toBe('1');
    expect(xpath(file, relation(REQ3, RISK1))).toBe('1');
    expect(xpath(file, relation(RISK1, REQ4))).toBe('2');
    expect(xpath(file, `count(${node('SPEC-RELATION-TYPE')})`)).toBe('4');
  });

  it('derives identifiers from record ids and keeps text exactly', async () => {
    const file = await renderFile('reqif', exportParts([systemRequirements], TRACES), 'special.reqif');
    expect(specObjectId(REQ1)).toBe(`R-${REQ1}`);
    const object = `${node('SPEC-OBJECT')}[@IDENTIFIER="R-${SPECIAL}"]`;
    // LONG-NAME and ReqIF.ForeignID: the readable id (this record has none of its own: prefix and _id).
    expect(xpath(file, `string(${object}/@LONG-NAME)`)).toBe(`REQ_${SPECIAL}`);
    const definition = (name: string) =>
      `${node('ATTRIBUTE-DEFINITION-STRING')}[@LONG-NAME="${name}"]/@IDENTIFIER`;
    const descriptionId = xpath(file, `string(${definition('Description')})`);
    const value = (id: string) =>
      xpath(
        file,
        `string(${object}${node('ATTRIBUTE-VALUE-STRING')}[*[local-name()="DEFINITION"]/*="${id}"]/@THE-VALUE)`,
      );
    expect(value(descriptionId)).toBe(SPECIAL_DESCRIPTION);
    expect(value(xpath(file, `string(${definition('ReqIF.ForeignID')})`))).toBe(`REQ_${SPECIAL}`);
    expect(value(xpath(file, `string(${definition('RXS.RecordId')})`))).toBe(SPECIAL);
    expect(value(xpath(file, `string(${definition('RXS.RecordName')})`))).toBe(SPECIAL_NAME);
    expect(value(xpath(file, `string(${definition('legacy_note')})`))).toBe('kept from an older schema');
    expect(value(xpath(file, `string(${definition('control')})`))).toBe('bell\uFFFDchar');
  });

  it('takes a source id as IDENTIFIER when it is a unique NCName, in objects, relations and hierarchy', async () => {
    const sourceIds = new Map([
      [REQ1, 'SR-1'],
      // Held by two records of the file: neither may take it.
      [REQ2, 'SHARED'],
      [RISK1, 'SHARED'],
      // What REQ4 is called without a source id of its own.
      [REQ3, `R-${REQ4}`],
      [SPECIAL, 'not an ID / ä'],
      // Spelled like identifiers the writer makes: REQ4's SPEC-HIERARCHY, the string datatype.
      [RISK2, `H-${REQ4}`],
      [REQ4, 'DT-string'],
    ]);
    const withSourceIds = (input: TopicInput): TopicInput => ({
      ...input,
      records: input.records.map((record) =>
        sourceIds.has(record._id)
          ? { ...record, context: { ...record.context, global_element_id: sourceIds.get(record._id)! } }
          : record,
      ),
    });
    const file = await renderFile(
      'reqif',
      exportParts([withSourceIds(systemRequirements), withSourceIds(riskTopic)], TRACES),
      'source-ids.reqif',
    );
    const result = spawnSync('xmllint', ['--noout', '--schema', schema, file], { encoding: 'utf8' });
    expect(result.stderr).toContain('validates');
    const identifiers = xpath(file, `${node('SPEC-OBJECT')}/@IDENTIFIER`)
      .split('\n')
      .map((line) => line.trim().replace(/^IDENTIFIER="(.*)"$/, '$1'));
    expect(identifiers).toContain('SR-1');
    for (const id of [REQ2, RISK1, REQ3, REQ4, SPECIAL, RISK2]) expect(identifiers).toContain(`R-${id}`);
    expect(new Set(identifiers).size).toBe(identifiers.length);
    const relations = (source: string, target: string) =>
      `count(${node('SPEC-RELATION')}[*[local-name()="SOURCE"]/*="${source}"][*[local-name()="TARGET"]/*="${target}"])`;
    expect(xpath(file, relations('SR-1', `R-${REQ2}`))).toBe('1');
    expect(xpath(file, relations(`R-${REQ3}`, `R-${RISK1}`))).toBe('1');
    expect(xpath(file, `count(${node('SPEC-HIERARCHY')}[*[local-name()="OBJECT"]/*="SR-1"])`)).toBe('1');
    expect(xpath(file, `count(${node('SPEC-HIERARCHY')}[*[local-name()="OBJECT"]/*="R-${REQ1}"])`)).toBe('0');
  });

  it('writes selects and checklists as enumerations, values that are not options as text beside', async () => {
    const file = await renderFile('reqif', exportParts([systemRequirements]), 'enums.reqif');
    const definition = (name: string) => `${node('ATTRIBUTE-DEFINITION-ENUMERATION')}[@LONG-NAME="${name}"]`;
    expect(xpath(file, `string(${definition('Requirement concerning')}/@MULTI-VALUED)`)).toBe('true');
    expect(xpath(file, `string(${definition('Priority')}/@MULTI-VALUED)`)).toBe('false');
    const priorityType = xpath(
      file,
      `string(${definition('Priority')}${node('DATATYPE-DEFINITION-ENUMERATION-REF')})`,
    );
    const values = `${node('DATATYPE-DEFINITION-ENUMERATION')}[@IDENTIFIER="${priorityType}"]${node('ENUM-VALUE')}`;
    expect(xpath(file, `count(${values})`)).toBe('5');
    expect(xpath(file, `string(${values}[@LONG-NAME="High"]${node('EMBEDDED-VALUE')}/@OTHER-CONTENT)`)).toBe(
      'high',
    );
    const special = `${node('SPEC-OBJECT')}[@IDENTIFIER="R-${SPECIAL}"]`;
    expect(
      xpath(file, `count(${special}${node('ATTRIBUTE-VALUE-ENUMERATION')}${node('ENUM-VALUE-REF')})`),
    ).toBe('3');
    // "urgent" is no Priority option: it goes, as text, to the twin attribute "Priority (as text)".
    const twin = xpath(
      file,
      `string(${node('ATTRIBUTE-DEFINITION-STRING')}[@LONG-NAME="Priority (as text)"]/@IDENTIFIER)`,
    );
    expect(
      xpath(
        file,
        `string(${special}${node('ATTRIBUTE-VALUE-STRING')}[*[local-name()="DEFINITION"]/*="${twin}"]/@THE-VALUE)`,
      ),
    ).toBe('urgent');
  });

  it('validates for an empty export', async () => {
    const file = await renderFile('reqif', exportParts([]), 'empty.reqif');
    expect(spawnSync('xmllint', ['--noout', '--schema', schema, file]).status).toBe(0);
  });
});

describe('needs', () => {
  it('writes a needs.json that needimport reads: ids, titles, options and links', async () => {
    const doc = JSON.parse((await render('needs', exportParts(ALL, TRACES))).toString('utf8'));
    // Topics of different versions: the needs are filed under the export time.
    expect(doc).toMatchObject({
      created: EXPORTED_AT,
      current_version: EXPORTED_AT,
      project: expect.stringContaining('System Requirements'),
    });
    expect(Object.keys(doc.versions)).toEqual([EXPORTED_AT]);
    const version = doc.versions[doc.current_version];
    expect(version.needs_amount).toBe(7);
    const needs = version.needs as Record<string, Record<string, unknown>>;
    expect(Object.keys(needs)).toHaveLength(7);
    for (const [id, need] of Object.entries(needs)) {
      expect(id).toMatch(/^[A-Z0-9_]{5,}$/);
      expect(need.id).toBe(id);
      for (const [option, value] of Object.entries(need)) {
        expect(option).toMatch(/^[a-z][a-z0-9_]*$/);
        if (!['tags', 'links', 'status'].includes(option)) expect(typeof value).toBe('string');
      }
      // Every option on every need, as Sphinx-Needs writes them, so a :filter: never meets a missing name.
      expect(Object.keys(need)).toEqual(Object.keys(needs.REQ_001!));
    }
    // Need ids are the readable ids ("Burn", a valid id as a whole name, in Sphinx-Needs' letters);
    // a record without one gets the topic's prefix and its _id.
    const [RISK1_NEED, SPECIAL_NEED] = ['BURN_', `REQ_${SPECIAL.toUpperCase()}`];
    const req1 = needs.REQ_001!;
    expect(req1).toMatchObject({
      title: 'Sterilization temperature range is better',
      type: 'req',
      description: 'Device shall achieve and maintain sterilization temperature of 121°C ± 2°C',
      tags: ['system_requirements'],
      links: ['REQ_002'],
      priority: 'high',
      requirement_concerning: 'Equipment',
      type_field: 'functional',
      name: 'REQ_001 — Sterilization temperature range is better',
      rxs_record_id: REQ1,
      rxs_topic_revision_id: sampleTopic._id,
    });
    expect(req1.description_field).toBeUndefined();
    expect(req1.severity).toBe('');
    expect(needs.REQ_003!.links).toEqual([RISK1_NEED]);
    expect(needs[RISK1_NEED]!.links).toEqual(['REQ_004']);
    expect(needs[RISK1_NEED]!.priority).toBe('');
    expect(needs.REQ_002!.links).toEqual([]);
    expect(needs[RISK1_NEED]!.hazards).toBe('[{"Hazard":"Hot surface"},{"Hazard":"Steam"}]');
    expect(needs[SPECIAL_NEED]!.title).toBe("=cmd|' /C calc'!A0");
  });

  it('escapes markup in descriptions and honours its options', async () => {
    const markup = serviceRecord(RISK3, 'Markup record', riskTopic.revision._id, {
      owner: { email: 'a *b* `c` |d| e_ f_g \\' },
    });
    const parts = exportParts([{ ...riskTopic, records: [...riskTopic.records, markup] }]);
    const doc = JSON.parse(
      (
        await render('needs', parts, {
          needs: {
            idPrefix: 'RISK',
            needType: 'spec',
            project: 'Demo',
            version: '9',
            titleField: 'name',
            descriptionField: 'Owner e-mail',
          },
        })
      ).toString(),
    );
    expect(doc).toMatchObject({ project: 'Demo', current_version: '9' });
    const need = doc.versions['9'].needs.BURN_;
    expect(need).toMatchObject({
      id: 'BURN_',
      type: 'spec',
      title: 'Burn risk',
      description: 'qa\\@example\\.com',
      severity: 'high',
    });
    expect(doc.versions['9'].needs.CUT__.title).toBe('Cut risk');
    // Descriptions are reStructuredText to Sphinx: every markup character arrives escaped. The
    // record has no readable id: idPrefix replaces the topic's prefix of the one made up.
    expect(doc.versions['9'].needs[`RISK_${RISK3.toUpperCase()}`].description).toBe(
      'a \\*b\\* \\`c\\` \\|d\\| e\\_ f\\_g \\\\',
    );
    expect(needId('sys-req-1')).toBe('SYS_REQ_1');
    expect(needId('R_1')).toBe('R_1__');
  });
});

describe('every writer', () => {
  const formats: ExportFormat[] = ['json', 'jsonl', 'csv', 'xlsx', 'reqif', 'needs'];

  it.each(formats)('%s: leaves no temporary files, after success and after failure', async (format) => {
    const tempDir = mkdtempSync(join(workDir, `${format}-`));
    await render(format, exportParts(ALL, TRACES), { tempDir });
    expect(readdirSync(tempDir)).toEqual([]);

    // A failed export: close arrives without the end part, and the output is ended all the same.
    let ended = false;
    const out = new Writable({
      write: (_chunk, _encoding, done) => done(),
      final: (done) => ((ended = true), done()),
    });
    const writer = createWriter(format, out, { tempDir });
    for (const part of exportParts(ALL, TRACES).slice(0, 5)) await writer.write(part);
    await writer.close();
    expect(ended).toBe(true);
    expect(readdirSync(tempDir)).toEqual([]);
  });

  it.each(formats)('%s: writes thousands of records through a slow output', async (format) => {
    const many = Array.from({ length: 2000 }, (_, i) =>
      serviceRecord(
        `6b${i.toString(16).padStart(22, '0')}`,
        `Record ${i}`,
        sampleTopic._id,
        // Each its own name: the procedure refuses two records with one readable id.
        { ...sampleRecords[i % 4]!.data, name: `Record ${i}` },
      ),
    );
    const chunks: Buffer[] = [];
    const out = new Writable({
      highWaterMark: 256,
      write(chunk: Buffer, _encoding, done) {
        chunks.push(Buffer.from(chunk));
        setImmediate(done);
      },
    });
    await writeExport(
      createWriter(format, out),
      exportParts([{ revision: sampleTopic, records: many }], TRACES),
    );
    const output = Buffer.concat(chunks);
    if (format === 'xlsx') {
      const book = new ExcelJS.Workbook();
      await book.xlsx.load(output as unknown as ArrayBuffer);
      expect(book.getWorksheet('System Requirements')!.rowCount).toBe(2001);
    } else {
      expect(output.toString('utf8').split('Record 1999').length - 1).toBeGreaterThanOrEqual(1);
      expect(output.toString('utf8').match(/Record \d+\b/g)?.length).toBeGreaterThanOrEqual(2000);
    }
  });

  it('rejects an unknown format', () => {
    expect(() => createWriter('pdf' as ExportFormat, new Writable())).toThrow(/pdf/);
  });
});
