import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_DOCUMENT_BYTES,
  MAX_DOCUMENT_RECORDS,
  type DocumentRecord,
  type TopicDocument,
} from '@rxs/web-api';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';
import { webClient, type WebClient } from './web-client.js';

/** A form whose `title` is the heading and whose other fields are the record's paragraphs. */
const SPEC_SCHEMA = {
  components: [
    { type: 'textfield', key: 'title', label: 'Title' },
    { type: 'textarea', key: 'body', label: 'Requirement text' },
    { type: 'textfield', key: 'owner', label: 'Owner' },
  ],
};

/**
 * A topic's document (`GET /api/topics/{historyId}/document`): its records in outline order (else
 * readable-id order) with numbers, fields under their labels, links by role with suspect marks, as of
 * a moment, for the topic's tenant only, within its bounds.
 */
describe('web app API: topic document', () => {
  let t: TestServer;
  let viewer: WebClient;
  let other: WebClient;
  let specRevision: string;
  let specHistory: string;
  const ids: Record<string, string> = {};

  const record = async (revision: string, name: string, data: Record<string, string>) => {
    const created = await t.api('POST', '/records/', {
      body: { name, form: {}, data, context: { knowledge_unit_topic_id: revision } },
    });
    expect(created.status, created.text).toBe(201);
    return created.body._id as string;
  };
  const update = async (id: string, data: Record<string, string>) => {
    const current = await t.api('GET', `/records/${id}`);
    const updated = await t.api('PATCH', `/records/${id}`, {
      body: { data: { ...current.body.data, ...data }, version: current.body.version },
    });
    expect(updated.status, updated.text).toBe(200);
  };
  const documentOf = async (historyId: string, asOf?: string): Promise<TopicDocument> => {
    const query = asOf ? `?as_of=${encodeURIComponent(asOf)}` : '';
    const answer = await viewer.request('GET', `/api/topics/${historyId}/document${query}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.body as TopicDocument;
  };
  const byReadableId = (doc: TopicDocument, readableId: string): DocumentRecord =>
    doc.records.find((r) => r.readableId === readableId)!;

  beforeAll(async () => {
    t = await startTestServer();
    viewer = webClient(t.url);
    other = webClient(t.url);
    const users = t.demo.tenant.users;
    expect((await viewer.signIn(users.viewer.email, users.viewer.password)).status).toBe(200);
    const foreign = t.demo.otherTenant.users.owner;
    expect((await other.signIn(foreign.email, foreign.password)).status).toBe(200);

    specRevision = await approvedTopic(t, 'Pump Specification', { schema: SPEC_SCHEMA });
    specHistory = (await t.api('GET', `/kt/${specRevision}`)).body.knowledge_topic_history_id;
    const testsRevision = await approvedTopic(t, 'Pump Tests', { schema: SPEC_SCHEMA });
    const testsHistory = (await t.api('GET', `/kt/${testsRevision}`)).body.knowledge_topic_history_id;

    // Created out of number order: the document orders REQ-9 before REQ-10 as people number them.
    ids.req10 = await record(specRevision, 'REQ-10', {
      title: 'Flow rate',
      body: 'The pump delivers 10 l/min.\nAt 20 °C.',
      owner: '',
    });
    ids.req9 = await record(specRevision, 'REQ-9', { title: 'Pressure', body: '<b>2 bar</b>' });
    ids.req11 = await record(specRevision, 'REQ-11', { title: 'Noise', body: 'Below 40 dB.' });
    ids.tc4 = await record(testsRevision, 'TC-004', { title: 'Drop test', body: 'Drop from 1 m.' });

    const model = (await t.api('GET', '/trace-model')).body;
    const put = await t.api('PUT', '/trace-model', {
      body: {
        version: model.version,
        roles: [
          ...model.roles,
          {
            id: 'checks',
            forward_name: 'checks',
            backward_name: 'checked by',
            from: { topic_history_id: testsHistory },
            to: { topic_history_id: specHistory },
            trace_source: 'from',
            relation_type: 'is_related',
          },
        ],
      },
    });
    expect(put.status, put.text).toBe(200);
    const trace = async (source: string, target: string, relation_type: string) => {
      const created = await t.api('POST', '/traces/', {
        body: {
          source: { node_id: source, node_type: 'Record' },
          target: { node_id: target, node_type: 'Record' },
          relation_type,
        },
      });
      expect(created.status, created.text).toBe(201);
    };
    await trace(ids.tc4, ids.req10, 'is_related');
    await trace(ids.req9, ids.req11, 'mentions');
    // The test changed after the link was made: the link is suspect.
    await update(ids.tc4, { body: 'Drop from 1.5 m.' });
  });
  afterAll(() => t.close());

  it('without an outline: every record at level 1, in readable-id order, numbered 1, 2, 3', async () => {
    const doc = await documentOf(specHistory);
    expect(doc).toMatchObject({
      historyId: specHistory,
      name: 'Pump Specification',
      revisionId: specRevision,
      asOf: null,
      outlined: false,
      total: 3,
      omitted: 0,
    });
    expect(doc.records.map((r) => [r.number, r.level, r.readableId, r.title])).toEqual([
      ['1', 1, 'REQ-9', 'Pressure'],
      ['2', 1, 'REQ-10', 'Flow rate'],
      ['3', 1, 'REQ-11', 'Noise'],
    ]);
  });

  it('fields under their form labels, in form order, the title as heading and empty fields left out', async () => {
    const doc = await documentOf(specHistory);
    expect(byReadableId(doc, 'REQ-10').fields).toEqual([
      { label: 'Requirement text', text: 'The pump delivers 10 l/min.\nAt 20 °C.' },
    ]);
    // Text stays text: markup is a value like any other, for the page to show as such.
    expect(byReadableId(doc, 'REQ-9').fields).toEqual([{ label: 'Requirement text', text: '<b>2 bar</b>' }]);
  });

  it('links by the trace model role read from the record, else the relation type, with suspect marks', async () => {
    const doc = await documentOf(specHistory);
    expect(byReadableId(doc, 'REQ-10').links).toEqual([
      {
        name: 'checked by',
        recordId: ids.tc4,
        historyId: expect.any(String),
        readableId: 'TC-004',
        title: 'Drop test',
        suspect: true,
      },
    ]);
    expect(byReadableId(doc, 'REQ-9').links).toMatchObject([
      { name: 'mentions', readableId: 'REQ-11', title: 'Noise', suspect: false },
    ]);
    // A link no role names reads from each end: REQ-9 mentions REQ-11, which is mentioned by REQ-9.
    expect(byReadableId(doc, 'REQ-11').links).toMatchObject([{ name: 'mentioned by', readableId: 'REQ-9' }]);
  });

  it('in outline order with numbers from the levels; records the outline leaves out come after', async () => {
    const put = await t.api('PUT', `/records/outline/${specHistory}`, {
      body: {
        entries: [
          { record_id: ids.req11, level: 1 },
          { record_id: ids.req10, level: 2 },
        ],
      },
    });
    expect(put.status, put.text).toBe(200);
    const doc = await documentOf(specHistory);
    expect(doc.outlined).toBe(true);
    expect(doc.records.map((r) => [r.number, r.level, r.readableId])).toEqual([
      ['1', 1, 'REQ-11'],
      ['1.1', 2, 'REQ-10'],
      ['2', 1, 'REQ-9'],
    ]);
  });

  it('as of a moment: the values then, not the change since', async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await update(ids.req10, { body: 'The pump delivers 12 l/min.' });
    const now = await documentOf(specHistory);
    expect(byReadableId(now, 'REQ-10').fields[0]!.text).toBe('The pump delivers 12 l/min.');
    const then = await documentOf(specHistory, before);
    expect(then.asOf).toBe(before);
    expect(byReadableId(then, 'REQ-10').fields[0]!.text).toBe('The pump delivers 10 l/min.\nAt 20 °C.');
    expect(then.records.map((r) => r.readableId)).toEqual(['REQ-11', 'REQ-10', 'REQ-9']);
  });

  it("another tenant's user cannot read it; an unknown topic is 404", async () => {
    const foreign = await other.request('GET', `/api/topics/${specHistory}/document`);
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain('Pressure');
    expect((await viewer.request('GET', `/api/topics/${'f'.repeat(24)}/document`)).status).toBe(404);
    expect((await viewer.request('GET', `/api/topics/${specHistory}/document?as_of=yesterday`)).status).toBe(
      422,
    );
  });

  it(`answers at most ${MAX_DOCUMENT_RECORDS} records and says how many it left out`, async () => {
    const revision = await approvedTopic(t, 'Large Specification', { schema: SPEC_SCHEMA });
    const historyId = (await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id;
    const count = MAX_DOCUMENT_RECORDS + 5;
    for (let start = 0; start < count; start += 1000) {
      const records = Array.from({ length: Math.min(1000, count - start) }, (_, i) => ({
        name: `L-${start + i + 1}`,
        form: {},
        data: { title: `Line ${start + i + 1}` },
        context: { knowledge_unit_topic_id: revision },
      }));
      const bulk = await t.api('POST', '/records/bulk', { body: { records } });
      expect(bulk.status, bulk.text).toBeLessThan(300);
    }
    const doc = await documentOf(historyId);
    expect(doc.total).toBe(count);
    expect(doc.records).toHaveLength(MAX_DOCUMENT_RECORDS);
    expect(doc.omitted).toBe(5);
    expect(doc.records[0]).toMatchObject({ number: '1', readableId: 'L-1' });
    expect(doc.records.at(-1)).toMatchObject({
      number: String(MAX_DOCUMENT_RECORDS),
      readableId: `L-${MAX_DOCUMENT_RECORDS}`,
    });
  }, 120_000);

  it('answers about MAX_DOCUMENT_BYTES at most: large records past it are left out and counted', async () => {
    const revision = await approvedTopic(t, 'Heavy Specification', { schema: SPEC_SCHEMA });
    const historyId = (await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id;
    const text = 'x'.repeat(MAX_DOCUMENT_BYTES / 3 + 1000);
    for (const name of ['H-1', 'H-2', 'H-3', 'H-4'])
      await record(revision, name, { title: name, body: text });
    const doc = await documentOf(historyId);
    expect(doc.total).toBe(4);
    expect(doc.records.map((r) => r.readableId)).toEqual(['H-1', 'H-2']);
    expect(doc.omitted).toBe(2);
  }, 120_000);
});
