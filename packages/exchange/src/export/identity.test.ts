import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KnowledgeTopicRevision } from '../../../contract/src/knowledge-topic.js';
import type { ServiceRecord } from '../../../contract/src/record.js';
import {
  defaultIdentifierRule,
  defaultPresentation,
  DuplicateIdentifierError,
  LEADING_ID_PATTERN,
  readableIdOf,
  ReadableIds,
} from './identity.js';
import type { ExportedRecord, ExportPart } from './model.js';
import { exportParts, type ExportSource } from './procedure.js';

const sample = <T>(file: string): T =>
  JSON.parse(readFileSync(new URL(`../../../../reference/samples/${file}`, import.meta.url), 'utf8')) as T;

/** An in-memory service of topics and their records, run through the real export procedure. */
function sourceOf(topics: { revision: KnowledgeTopicRevision; records: ServiceRecord[] }[]): ExportSource {
  return {
    servers: { techdoc: 'http://t.test', records: 'http://r.test', tracer: 'http://x.test' },
    async getTopic(id) {
      const found = topics.find((t) => t.revision._id === id);
      if (!found) throw new Error(`no topic ${id}`);
      return structuredClone(found.revision);
    },
    async *listRecords(query) {
      const found = topics.find((t) => t.revision._id === query.context__knowledge_unit_topic_id);
      for (const record of found?.records ?? []) yield structuredClone(record);
    },
    async listTraces() {
      return [];
    },
  };
}

async function exportedRecords(source: ExportSource, revisionIds: string[]): Promise<ExportedRecord[]> {
  const records: ExportedRecord[] = [];
  for await (const part of exportParts(source, { revisionIds }) as AsyncIterable<ExportPart>)
    if (part.kind === 'record') records.push(part.record);
  return records;
}

const referenceTopic = sample<KnowledgeTopicRevision>('kt_system_requirements.json');
const referenceRecords = sample<ServiceRecord[]>('records_system_requirements.json');

/** A topic like the reference one, with other ids, a name and records of these names and data. */
function topicLike(name: string, index: number, records: { name: string; data?: object }[]) {
  const revisionId = `5f${index.toString(16).padStart(22, '0')}`;
  return {
    revision: {
      ...referenceTopic,
      _id: revisionId,
      knowledge_topic_history_id: `5e${index.toString(16).padStart(22, '0')}`,
      knowledge_topic_name: name,
      latest_revision_id: revisionId,
    } as KnowledgeTopicRevision,
    records: records.map(
      (r, i) =>
        ({
          ...referenceRecords[0]!,
          _id: `5d${index.toString(16).padStart(4, '0')}${i.toString(16).padStart(18, '0')}`,
          name: r.name,
          data: r.data ?? {},
          context: { ...referenceRecords[0]!.context, knowledge_unit_topic_id: revisionId },
        }) as ServiceRecord,
    ),
  };
}

describe('readable identifiers', () => {
  it('the reference sample gets REQ_001 ... from the leading id of its Name field', async () => {
    const revision = referenceTopic;
    const records = await exportedRecords(sourceOf([{ revision, records: referenceRecords }]), [
      revision._id,
    ]);
    expect(records.map((r) => r.readableId)).toEqual(['REQ_001', 'REQ_002', 'REQ_003', 'REQ_004']);
    // The record names ("Requirements-1") are valid ids too: the title field comes first.
    expect(records[0]!.name).toBe('Requirements-1');
  });

  it('takes PREFIX-NNN with dashes and several parts, and stops at the separator', () => {
    const presentation = defaultPresentation('System Requirements', [
      { key: 'title', name: 'Title', source: 'label' },
    ]);
    const rule = defaultIdentifierRule(presentation);
    const id = (title: string, name = 'x y') =>
      readableIdOf({ id: '6a7701ffcd5640b4bf28b05e', name, values: { Title: title } }, rule, presentation);
    expect(id('SYS-REQ-12: pressure')).toBe('SYS-REQ-12');
    expect(id('  UR_3a — user need')).toBe('UR_3a');
    expect(id('REQ-7')).toBe('REQ-7');
    // Not an id: a word without a number, a number without a prefix, an id glued to more text.
    expect(id('Requirements for sterilization')).toBe('REQ_6a7701ffcd5640b4bf28b05e');
    expect(id('12 pressure')).toBe('REQ_6a7701ffcd5640b4bf28b05e');
    expect(id('REQ_001x2 text')).toBe('REQ_6a7701ffcd5640b4bf28b05e');
  });

  it('a name that is a valid id serves as it is; other names fall back to prefix and _id', async () => {
    const topic = topicLike('Verification Tests', 1, [
      { name: 'TC.pressure-check' },
      { name: 'pressure check with spaces' },
      { name: 'VT-4 leak test' },
    ]);
    const records = await exportedRecords(sourceOf([topic]), [topic.revision._id]);
    expect(records.map((r) => r.readableId)).toEqual([
      'TC.pressure-check',
      `TEST_${topic.records[1]!._id}`,
      'VT-4',
    ]);
  });

  it('two records of two topics with one derived id are an error naming both records', async () => {
    const a = topicLike('System Requirements', 2, [{ name: 'REQ_001 first' }]);
    const b = topicLike('Software Requirements', 3, [{ name: 'other' }, { name: 'REQ_001 — again' }]);
    const run = exportedRecords(sourceOf([a, b]), [a.revision._id, b.revision._id]);
    await expect(run).rejects.toThrow(DuplicateIdentifierError);
    await expect(exportedRecords(sourceOf([a, b]), [a.revision._id, b.revision._id])).rejects.toThrow(
      new RegExp(`${a.records[0]!._id} and ${b.records[1]!._id} both have the readable id "REQ_001"`),
    );
  });

  it('default presentation: need type and prefix from the topic name', () => {
    expect(defaultPresentation('Verification Tests', [])).toMatchObject({
      needType: 'test',
      idPrefix: 'TEST',
    });
    expect(defaultPresentation('Design Specification', [])).toMatchObject({ needType: 'spec' });
    expect(defaultPresentation('System Requirements', [])).toMatchObject({
      needType: 'req',
      idPrefix: 'REQ',
      reqifTypeName: 'System Requirements',
    });
  });

  it('property: readable ids of an export are unique, or the error names both records', () => {
    const presentation = defaultPresentation('Requirements', [{ key: 't', name: 'Title', source: 'label' }]);
    const rule = defaultIdentifierRule(presentation);
    // Few letters and numbers, so collisions are frequent.
    const text = fc.oneof(
      fc.constantFrom('REQ_001', 'REQ-001', 'REQ_1', 'A_2 x', 'x', 'TC.1', ' REQ_001 — y'),
      fc.stringMatching(/^[A-C_ -]{0,3}[0-2]?$/),
    );
    const record = fc.record({ name: text, title: fc.option(text, { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 12 }), (records) => {
        const ids = new ReadableIds();
        const given: { readableId: string; recordId: string }[] = [];
        try {
          records.forEach((r, i) => {
            const recordId = `6a${i.toString(16).padStart(22, '0')}`;
            const readableId = readableIdOf(
              { id: recordId, name: r.name, values: r.title === undefined ? {} : { Title: r.title } },
              rule,
              presentation,
            );
            given.push({ readableId: ids.assign(readableId, recordId), recordId });
          });
        } catch (error) {
          if (!(error instanceof DuplicateIdentifierError)) throw error;
          const first = given.find((g) => g.readableId === error.readableId);
          expect(first?.recordId).toBe(error.firstRecordId);
          expect(error.secondRecordId).toBe(`6a${given.length.toString(16).padStart(22, '0')}`);
          expect(error.message).toContain(error.firstRecordId);
          expect(error.message).toContain(error.secondRecordId);
          return;
        }
        expect(new Set(given.map((g) => g.readableId)).size).toBe(given.length);
      }),
      { numRuns: 300 },
    );
  });

  it('the leading id pattern has one capture group', () => {
    expect(LEADING_ID_PATTERN.exec('REQ_001 — a')?.[1]).toBe('REQ_001');
  });
});
