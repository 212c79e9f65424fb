import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxsClient } from '@rxs/client';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic } from '../../server/test/support/topics.js';
import { exportSourceOf } from '../src/export/client-source.js';
import type { ExportFormat, ExportPart } from '../src/export/model.js';
import { importRecords, openRowSource } from '../src/index.js';
import { collectParts, writeFile } from './support/spreadsheet-readers.js';

/**
 * Every export shows each record's identity in its source (`context.global_element_id`), and a file
 * exported, then imported back into its topic, leaves every record as it was, identity included.
 * The ReqIF IDENTIFIER is the source id when it is a portable NCName, else `R-<_id>`.
 */

const SCHEMA = { components: [{ type: 'textarea', key: 'description', label: 'Description' }] };

/** Source ids by record name; `identifier` tells whether the ReqIF IDENTIFIER may be the source id. */
const SOURCES = [
  { name: 'doors', sourceId: '_a1b2c3d4-e5f6.7890', identifier: true },
  { name: 'polarion', sourceId: 'PRJ-123', identifier: true },
  { name: 'long', sourceId: `L${'x'.repeat(299)}`, identifier: true },
  { name: 'spaces', sourceId: 'with spaces ä / slash', identifier: false },
  { name: 'umlaut', sourceId: 'Ärger-1', identifier: false },
  { name: 'digit', sourceId: '123-not-an-ncname', identifier: false },
  { name: 'colon', sourceId: 'ns:name', identifier: false },
  // A copy made with --new-records keeps the R-<_id> of the record it was copied from: as the
  // IDENTIFIER it would read back as the _id of a record this tenant does not hold.
  { name: 'copy', sourceId: 'R-0123456789abcdef01234567', identifier: false },
] as const;
const WITHOUT = 'no-source';

const reqifSchema = new URL('../../../reference/reqif-xsd/reqif.xsd', import.meta.url).pathname;
const hasXmllint = spawnSync('xmllint', ['--version']).status === 0;

let server: TestServer;
let client: RxsClient;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  client = createClient({
    techdocUrl: server.url,
    recordsUrl: server.url,
    tracerUrl: server.url,
    apiKey: server.ownerKey,
  });
  dir = mkdtempSync(join(tmpdir(), 'rxs-source-id-'));
});

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Listed {
  _id: string;
  name: string;
  version: string;
  data: Record<string, unknown>;
  context: { global_element_id?: string | null };
}

/** A topic holding one record per source id and one without; its revision and record ids by name. */
async function topicWithSourceIds(name: string): Promise<{ revision: string; ids: Map<string, string> }> {
  const revision = await approvedTopic(server, name, { schema: SCHEMA });
  const ids = new Map<string, string>();
  for (const { name: recordName, sourceId } of [...SOURCES, { name: WITHOUT, sourceId: undefined }]) {
    const created = await server.api('POST', '/records/', {
      body: {
        name: recordName,
        form: {},
        data: { description: `the ${recordName} record` },
        context: {
          knowledge_unit_topic_id: revision,
          ...(sourceId !== undefined && { global_element_id: sourceId }),
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    ids.set(recordName, created.body._id);
  }
  return { revision, ids };
}

async function listed(revision: string): Promise<Listed[]> {
  const answer = await server.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}&limit=100`);
  expect(answer.status, answer.text).toBe(200);
  return (answer.body as Listed[]).sort((a, b) => a._id.localeCompare(b._id));
}

async function exported(revision: string): Promise<ExportPart[]> {
  return collectParts(exportSourceOf(client), [revision]);
}

async function exportTo(format: ExportFormat, parts: ExportPart[]): Promise<string> {
  const file = join(
    dir,
    `${format}-${Math.random().toString(36).slice(2)}.${format === 'needs' ? 'json' : format}`,
  );
  await writeFile(format, parts, file);
  return file;
}

const sourceIdOf = (recordName: string) => SOURCES.find((s) => s.name === recordName)?.sourceId ?? '';

describe('every format shows the source id', () => {
  let revision: string;
  let ids: Map<string, string>;
  let parts: ExportPart[];
  beforeAll(async () => {
    ({ revision, ids } = await topicWithSourceIds('Source ids shown'));
    parts = await exported(revision);
  });

  it('the export model carries it, absent without one', () => {
    const records = parts.flatMap((part) => (part.kind === 'record' ? [part.record] : []));
    expect(records).toHaveLength(SOURCES.length + 1);
    for (const record of records)
      if (record.name === WITHOUT) expect(record).not.toHaveProperty('sourceId');
      else expect(record.sourceId).toBe(sourceIdOf(record.name));
  });

  it('json and jsonl: in each record', async () => {
    const json = JSON.parse(readFileSync(await exportTo('json', parts), 'utf8'));
    for (const record of json.topics[0].records) expect(record.sourceId ?? '').toBe(sourceIdOf(record.name));
    const lines = readFileSync(await exportTo('jsonl', parts), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((line) => line.kind === 'record');
    expect(lines).toHaveLength(SOURCES.length + 1);
    for (const line of lines) expect(line.sourceId ?? '').toBe(sourceIdOf(line.name));
  });

  it('csv and xlsx: in the source_id column after topic_revision_id, empty without one', async () => {
    const rows = openRowSource(await exportTo('csv', parts));
    const csvIds = new Map<string, string>();
    for await (const row of rows.rows()) csvIds.set(row.facts.name!, row.facts.sourceId ?? '');
    expect(Object.fromEntries(csvIds)).toEqual(
      Object.fromEntries([...ids.keys()].map((name) => [name, sourceIdOf(name)])),
    );
    const text = readFileSync(await exportTo('csv', parts), 'utf8');
    expect(text.split('\r\n')[0]).toMatch(/^\uFEFF_id,readable_id,name,version,topic_revision_id,source_id,/);

    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(await exportTo('xlsx', parts));
    const sheet = book.worksheets[0]!;
    const header = [1, 2, 3, 4, 5, 6].map((column) => sheet.getRow(1).getCell(column).text);
    expect(header).toEqual(['_id', 'readable_id', 'name', 'version', 'topic_revision_id', 'source_id']);
    for (let r = 2; r <= sheet.rowCount; r++) {
      const row = sheet.getRow(r);
      expect(row.getCell(6).text).toBe(sourceIdOf(row.getCell(3).text));
    }
  });

  it('sphinx-needs: the option rxs_source_id', async () => {
    const needsJson = JSON.parse(readFileSync(await exportTo('needs', parts), 'utf8'));
    const version = Object.values(needsJson.versions)[0] as { needs: Record<string, Record<string, string>> };
    const needs = Object.values(version.needs);
    expect(needs).toHaveLength(SOURCES.length + 1);
    for (const need of needs) {
      const name = [...ids].find(([, id]) => id === need.rxs_record_id)![0];
      expect(need.rxs_source_id).toBe(sourceIdOf(name));
    }
  });

  it('reqif: the IDENTIFIER is a portable NCName source id, else R-<_id>; RXS.RecordId stays', async () => {
    const text = readFileSync(await exportTo('reqif', parts), 'utf8');
    for (const { name, sourceId, identifier } of SOURCES) {
      const expected = identifier ? sourceId : `R-${ids.get(name)}`;
      expect(text).toContain(`<SPEC-OBJECT IDENTIFIER="${expected}"`);
      expect(text).toContain(`<SPEC-OBJECT-REF>${expected}</SPEC-OBJECT-REF>`);
    }
    expect(text).toContain(`<SPEC-OBJECT IDENTIFIER="R-${ids.get(WITHOUT)}"`);
    for (const id of ids.values()) expect(text).toContain(`THE-VALUE="${id}"`);
  });

  it('reqif: every source id reads back, also one that cannot be the IDENTIFIER (RXS.SourceId)', async () => {
    const file = await exportTo('reqif', parts);
    const read = new Map<string, string | undefined>();
    for await (const row of openRowSource(file).rows()) read.set(row.facts.name!, row.facts.sourceId);
    for (const { name, sourceId } of SOURCES) expect(read.get(name), name).toBe(sourceId);
    expect(read.get(WITHOUT)).toBeUndefined();
  });

  it.skipIf(!hasXmllint)('reqif: validates against the ReqIF 1.2 schema', async () => {
    const file = await exportTo('reqif', parts);
    const result = spawnSync('xmllint', ['--noout', '--schema', reqifSchema, file], { encoding: 'utf8' });
    expect(result.stderr).toContain('validates');
    expect(result.status).toBe(0);
  });
});

describe('a round trip into the same topic leaves every record unchanged', () => {
  for (const format of ['csv', 'xlsx', 'reqif'] as const)
    it(format, async () => {
      const { revision } = await topicWithSourceIds(`Source ids round trip ${format}`);
      const before = await listed(revision);
      const file = await exportTo(format, await exported(revision));
      const report = await importRecords(client, openRowSource(file), { revisionId: revision });
      expect(
        { created: report.created, updated: report.updated, rejected: report.rejected },
        JSON.stringify(report).slice(0, 3000),
      ).toEqual({ created: 0, updated: 0, rejected: 0 });
      expect(report.unchanged).toBe(SOURCES.length + 1);
      expect(await listed(revision)).toEqual(before);
    });
});
