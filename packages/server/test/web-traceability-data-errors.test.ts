import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/** Data keys of the wide record: more columns than an export takes (5,000). */
const WIDE_KEYS = 5_100;

/**
 * Two records of one topic with the same readable id: every web route that runs the export
 * procedure (the export and each of the traceability page's routes) answers 422 naming the id and
 * both records and saying what to do, never a 500. So does a topic with too many columns.
 */
describe('web app routes over topics with a duplicate readable id', () => {
  let t: TestServer;
  let viewer: WebClient;
  let revision: string;
  const recordIds: string[] = [];

  beforeAll(async () => {
    // An installation that raised RXS_MAX_RECORD_KEYS, so that an editor can write the wide record.
    t = await startTestServer({ maxRecordKeys: 2 * WIDE_KEYS });
    viewer = webClient(t.url);
    const { email, password } = t.demo.tenant.users.viewer;
    expect((await viewer.signIn(email, password)).status).toBe(200);
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Twins',
        type: 'multi_record',
        knowledge_topic_schema: { components: [{ type: 'textfield', key: 'text', label: 'Text' }] },
      },
    });
    revision = (await t.api('POST', `/kt/${draft.body._id}/approve`)).body._id;
    for (const name of ['TWIN_001 first', 'TWIN_001 second']) {
      const created = await t.api('POST', '/records/', {
        body: { name, form: {}, data: { text: name }, context: { knowledge_unit_topic_id: revision } },
      });
      expect(created.status, created.text).toBe(201);
      recordIds.push(created.body._id);
    }
  });
  afterAll(() => t.close());

  const expectNamedRefusal = (response: { status: number; text: string; body: any }) => {
    expect(response.status, response.text).toBe(422);
    // The export's data problems are one sentence (docs/web.md), naming what to change.
    const detail: unknown = response.body.detail;
    expect(detail).toEqual(expect.any(String));
    expect(detail).toContain('"TWIN_001"');
    for (const id of recordIds) expect(detail).toContain(id);
    expect(detail).toMatch(/mapping file/);
  };

  it('the export refuses them with 422', async () => {
    expectNamedRefusal(await viewer.request('GET', `/api/export?revisions=${revision}&format=csv`));
  });

  it('the traceability page refuses them with the same 422, read or downloaded, GET or POST', async () => {
    const answers = [
      await viewer.request('GET', `/api/traceability?revisions=${revision}`),
      await viewer.request('POST', '/api/traceability', { body: { revisions: revision } }),
    ];
    for (const format of ['html', 'xlsx', 'md', 'json']) {
      answers.push(
        await viewer.request('GET', `/api/traceability/report?revisions=${revision}&format=${format}`),
        await viewer.request('POST', '/api/traceability/report', { body: { revisions: revision, format } }),
      );
    }
    const exported = await viewer.request('GET', `/api/export?revisions=${revision}&format=csv`);
    for (const answer of answers) {
      expectNamedRefusal(answer);
      expect(answer.body.detail).toEqual(exported.body.detail);
    }
  });

  it('a refused report frees its export slot', async () => {
    for (let i = 0; i < 6; i++) {
      expect((await viewer.request('GET', `/api/traceability?revisions=${revision}`)).status).toBe(422);
    }
    const { status } = await viewer.request('GET', `/api/export?revisions=${revision}&format=json`);
    expect(status).toBe(422);
  });

  it('the traceability page refuses a topic with too many columns with the export’s 422', async () => {
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Wide',
        type: 'multi_record',
        knowledge_topic_schema: { components: [{ type: 'textfield', key: 'text', label: 'Text' }] },
      },
    });
    const wide = (await t.api('POST', `/kt/${draft.body._id}/approve`)).body._id as string;
    const data = Object.fromEntries(Array.from({ length: WIDE_KEYS }, (_, i) => [`k${i}`, `v${i}`]));
    const created = await t.api('POST', '/records/', {
      body: { name: 'WIDE_001', form: {}, data, context: { knowledge_unit_topic_id: wide } },
    });
    expect(created.status, created.text.slice(0, 300)).toBe(201);
    const exported = await viewer.request('GET', `/api/export?revisions=${wide}&format=csv`);
    expect(exported.status, exported.text).toBe(422);
    expect(exported.body.detail).toMatch(/columns.*Remove the stray keys/s);
    for (const answer of [
      await viewer.request('GET', `/api/traceability?revisions=${wide}`),
      await viewer.request('GET', `/api/traceability/report?revisions=${wide}&format=md`),
    ]) {
      expect(answer.status, answer.text).toBe(422);
      expect(answer.body.detail).toEqual(exported.body.detail);
    }
  });
});
