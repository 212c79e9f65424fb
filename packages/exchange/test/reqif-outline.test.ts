import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createClient } from '@rxs/client';
import type { KnowledgeTopicRevision, OutlineEntry, RecordOutline, ServiceRecord } from '@rxs/contract';
import { exportSourceOf } from '../src/export/client-source.js';
import type { ExportPart } from '../src/export/model.js';
import { exportParts, type ExportSource } from '../src/export/procedure.js';
import { referenceSample } from './support/hostile-corpus.js';
import { missingReader, PYTHON, scratchDir, shouldSkip, writeFile } from './support/spreadsheet-readers.js';

/**
 * A topic's document outline in the ReqIF export: its SPECIFICATION's SPEC-HIERARCHYs nested by the
 * outline's levels (the topic's other records after them, at the top level, by `_id`), valid against
 * the ReqIF 1.2 schema (xmllint) and read as the same hierarchy by StrictDoc's reqif library; a topic
 * without one, or a service without outlines, exported flat as before.
 */

const SCHEMA = new URL('../../../reference/reqif-xsd/reqif.xsd', import.meta.url).pathname;
const VENDORED = new URL('./vendor/strictdoc-reqif', import.meta.url).pathname;
const xmllint = missingReader('xmllint', 'libxml2-utils');
const python = (() => {
  const run = spawnSync(PYTHON, ['-B', '-c', 'import lxml.etree'], { encoding: 'utf8' });
  return run.status === 0 ? undefined : 'python3 with lxml (Debian: python3, python3-lxml)';
})();
const scratch = scratchDir();
afterAll(() => scratch.dispose());

const EXPORTED_AT = new Date('2026-08-11T09:30:00.000Z');
const recordId = (topic: number, n: number) =>
  `6a7701ffcd5640b4bf28${topic}${n.toString(16).padStart(3, '0')}`;

/** Two topics of eight records each (cloned from the reference sample), the first with an outline. */
function outlinedSource(outlines: Map<string, RecordOutline | undefined>) {
  const topic = referenceSample<KnowledgeTopicRevision>('kt_system_requirements.json');
  const [sample] = referenceSample<ServiceRecord[]>('records_system_requirements.json');
  const revisionIds = ['69b989b54252b7481003b10a', '69b989b54252b7481003c10a'];
  const historyOf = (revisionId: string) => `${revisionId.slice(0, 20)}${revisionId.slice(20, 23)}b`;
  const calls: string[] = [];
  const source: ExportSource = {
    servers: { techdoc: 'http://techdoc.test', records: 'http://records.test', tracer: 'http://tracer.test' },
    async getTopic(revisionId) {
      const index = revisionIds.indexOf(revisionId);
      return {
        ...structuredClone(topic),
        _id: revisionId,
        latest_revision_id: revisionId,
        knowledge_topic_history_id: historyOf(revisionId),
        knowledge_topic_name: index === 0 ? 'Outlined Specification' : 'Flat Specification',
      };
    },
    async *listRecords(query) {
      const index = revisionIds.indexOf(query.context__knowledge_unit_topic_id!);
      for (let n = 0; n < 8; n++) {
        const record = structuredClone(sample!);
        record._id = recordId(index, n);
        record.name = `Record ${index}.${n}`;
        record.data = { ...record.data, name: `REQ_${index}${n} — record ${n} of topic ${index}` };
        record.context.knowledge_unit_topic_id = revisionIds[index]!;
        yield record;
      }
    },
    async listTraces() {
      return [];
    },
    async getOutline(historyId) {
      calls.push(historyId);
      return outlines.get(historyId);
    },
  };
  return { source, revisionIds, historyOf, calls };
}

const outlineOf = (historyId: string, entries: OutlineEntry[], updatedAt = '2026-08-01T00:00:00.000Z') => ({
  knowledge_topic_history_id: historyId,
  entries,
  updated_at: updatedAt,
  updated_by: 'someone',
});

/**
 * Records 3 ─ 1, 5 (under a record not exported, so one level up), 0; 6 ─ 2; a record not exported
 * with a child of its own (4, now top-level); 7 and the rest after the outline.
 */
const ENTRIES: OutlineEntry[] = [
  { record_id: recordId(0, 3), level: 1 },
  { record_id: recordId(0, 1), level: 2 },
  { record_id: 'ffffffffffffffffffffff01', level: 2 },
  { record_id: recordId(0, 5), level: 3 },
  { record_id: recordId(0, 0), level: 2 },
  { record_id: recordId(0, 6), level: 1 },
  { record_id: recordId(0, 2), level: 2 },
  { record_id: 'ffffffffffffffffffffff02', level: 1 },
  { record_id: recordId(0, 4), level: 2 },
];
/** What the SPECIFICATION holds, depth first: [record number, level]. */
const EXPECTED: [number, number][] = [
  [3, 1],
  [1, 2],
  [5, 2],
  [0, 2],
  [6, 1],
  [2, 2],
  [4, 1],
  [7, 1],
];

async function exported(source: ExportSource, revisionIds: string[], asOf?: string) {
  const parts: ExportPart[] = [];
  for await (const part of exportParts(source, { revisionIds, now: () => EXPORTED_AT, asOf }))
    parts.push(part);
  return parts;
}

async function reqifFile(parts: ExportPart[], name: string): Promise<string> {
  const file = join(scratch.path, `${name}.reqif`);
  await writeFile('reqif', parts, file);
  return file;
}

/** Each SPECIFICATION's hierarchy, depth first, as [SPEC-OBJECT-REF, level], read with lxml alone. */
function hierarchiesOf(file: string): Record<string, [string, number][]> {
  const script = `
import json, sys
from lxml import etree
ns = '{http://www.omg.org/spec/ReqIF/20110401/reqif.xsd}'
def walk(children, level, out):
    for h in children.findall(ns + 'SPEC-HIERARCHY'):
        out.append([h.find(ns + 'OBJECT/' + ns + 'SPEC-OBJECT-REF').text, level])
        nested = h.find(ns + 'CHILDREN')
        if nested is not None: walk(nested, level + 1, out)
result = {}
for spec in etree.parse(sys.argv[1]).iter(ns + 'SPECIFICATION'):
    out = []
    walk(spec.find(ns + 'CHILDREN'), 1, out)
    result[spec.get('LONG-NAME')] = out
print(json.dumps(result))`;
  return JSON.parse(execFileSync(PYTHON, ['-B', '-c', script, file], { encoding: 'utf8' }));
}

const flat = (topic: number): [string, number][] =>
  Array.from({ length: 8 }, (_, n) => [`R-${recordId(topic, n)}`, 1]);
const nested = (topic: number) =>
  EXPECTED.map(([n, level]): [string, number] => [`R-${recordId(topic, n)}`, level]);

describe('the document outline in the export procedure', () => {
  it('asks for each topic’s outline once, by its history id, and hands it on with the topic', async () => {
    const outlines = new Map<string, RecordOutline | undefined>();
    const { source, revisionIds, historyOf, calls } = outlinedSource(outlines);
    outlines.set(historyOf(revisionIds[0]!), outlineOf(historyOf(revisionIds[0]!), ENTRIES));
    const parts = await exported(source, revisionIds);
    expect(calls).toEqual(revisionIds.map(historyOf));
    const topics = parts.filter((part) => part.kind === 'topic');
    expect(topics.map((part) => part.outline)).toEqual([
      { entries: ENTRIES, updatedAt: '2026-08-01T00:00:00.000Z' },
      undefined,
    ]);
    // The records still arrive in `_id` order; the JSON of the topic is unchanged.
    expect(JSON.stringify(topics[0]!.topic)).not.toContain('outline');
  });

  it('through the client: a service without the route (404, 405, another answer) is a topic without an outline', async () => {
    for (const [status, body] of [
      [404, { detail: 'Not here' }],
      [405, { detail: 'Not here' }],
      [200, [{ _id: 'a record listing' }]],
      [500, { detail: 'Broken' }],
    ] as const) {
      const client = createClient({
        techdocUrl: 'http://rxs.test',
        recordsUrl: 'http://rxs.test',
        tracerUrl: 'http://rxs.test',
        apiKey: 'rxs_outline_key_1234',
        retries: 0,
        fetch: async () =>
          new Response(JSON.stringify(body), {
            status,
            headers: { 'content-type': 'application/json' },
          }),
      });
      const outline = exportSourceOf(client).getOutline!('69b989b54252b7481003b10b');
      if (status === 500) await expect(outline).rejects.toThrow();
      else expect(await outline).toBeUndefined();
    }
  });
});

describe.skipIf(shouldSkip(xmllint ?? python))('the document outline in ReqIF', () => {
  it('finds its readers (xmllint from libxml2-utils, Python 3 with lxml)', () => {
    expect(xmllint ?? python).toBeUndefined();
  });

  it('nests the SPEC-HIERARCHY by the outline, valid ReqIF 1.2; the other topic and an outline-less service stay flat', async () => {
    const outlines = new Map<string, RecordOutline | undefined>();
    const { source, revisionIds, historyOf } = outlinedSource(outlines);
    outlines.set(historyOf(revisionIds[0]!), outlineOf(historyOf(revisionIds[0]!), ENTRIES));
    const file = await reqifFile(await exported(source, revisionIds), 'outlined');
    const lint = spawnSync('xmllint', ['--noout', '--schema', SCHEMA, file], { encoding: 'utf8' });
    expect(lint.stderr).toContain('validates');
    expect(lint.status).toBe(0);
    expect(hierarchiesOf(file)).toEqual({
      'Outlined Specification': nested(0),
      'Flat Specification': flat(1),
    });

    // Without outlines the file is the one written before outlines existed: every record top-level.
    outlines.clear();
    const before = await reqifFile(await exported(source, revisionIds), 'flat');
    expect(hierarchiesOf(before)).toEqual({
      'Outlined Specification': flat(0),
      'Flat Specification': flat(1),
    });
  });

  it('an export of a past moment follows the outline only if it was last put by then, else says so', async () => {
    const outlines = new Map<string, RecordOutline | undefined>();
    const { source, revisionIds, historyOf } = outlinedSource(outlines);
    const history = historyOf(revisionIds[0]!);
    outlines.set(history, outlineOf(history, ENTRIES, '2026-08-05T00:00:00.000Z'));
    const at = async (asOf: string, name: string) => {
      const file = join(scratch.path, `${name}.reqif`);
      const warnings = await writeFile('reqif', await exported(source, revisionIds.slice(0, 1), asOf), file);
      return { hierarchy: hierarchiesOf(file)['Outlined Specification'], warnings };
    };
    const before = await at('2026-08-04T00:00:00Z', 'before-outline');
    expect(before.hierarchy).toEqual(flat(0));
    expect(before.warnings).toEqual([
      'Outlined Specification: its document outline was changed after 2026-08-04T00:00:00Z and its earlier state is not kept, so its SPECIFICATION lists its records flat, in their usual order.',
    ]);
    const after = await at('2026-08-06T00:00:00Z', 'after-outline');
    expect(after.hierarchy).toEqual(nested(0));
    expect(after.warnings).toEqual([]);
  });

  it("is read as the same hierarchy by StrictDoc's reqif library", async () => {
    const outlines = new Map<string, RecordOutline | undefined>();
    const { source, revisionIds, historyOf } = outlinedSource(outlines);
    outlines.set(historyOf(revisionIds[0]!), outlineOf(historyOf(revisionIds[0]!), ENTRIES));
    const file = await reqifFile(await exported(source, revisionIds), 'strictdoc');
    const reader = `
import json, sys
from reqif.parser import ReqIFParser
bundle = ReqIFParser.parse(sys.argv[1])
content = bundle.core_content.req_if_content
print(json.dumps({'exceptions': [str(e) for e in bundle.exceptions],
  'specifications': {s.long_name: [[h.spec_object, h.level] for h in bundle.iterate_specification_hierarchy(s)]
                     for s in content.specifications}}))`;
    const read = JSON.parse(
      execFileSync(PYTHON, ['-B', '-c', reader, file], {
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: VENDORED, PYTHONDONTWRITEBYTECODE: '1' },
      }),
    );
    expect(read).toEqual({
      exceptions: [],
      specifications: { 'Outlined Specification': nested(0), 'Flat Specification': flat(1) },
    });
  });
});
