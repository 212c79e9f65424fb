import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, createNote } from './support/topics.js';

const SCHEMA = {
  components: [
    { type: 'textarea', key: 'note', label: 'Note' },
    {
      type: 'select',
      key: 'priority',
      label: 'Priority',
      values: [
        { value: 'high', label: 'High' },
        { value: 'low', label: 'Low' },
      ],
    },
  ],
};

/** A 422 names every problem of the request at once: the shape's and the form's together. */
describe('every problem in one answer', () => {
  let t: TestServer;
  let revision: string;
  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'Every problem', { schema: SCHEMA });
  });
  afterAll(async () => {
    await t?.close();
  });

  const locs = (body: { detail: { loc: unknown[] }[] }) =>
    body.detail.map((item) => item.loc.join('.')).sort();

  it('POST: an empty name and a wrong priority are both named', async () => {
    const res = await t.api('POST', '/records/', {
      body: {
        name: '',
        form: {},
        data: { priority: 'urgent' },
        context: { knowledge_unit_topic_id: revision },
      },
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(['body.data.priority', 'body.name']);
    // The shape's problem keeps the shape's wording; the form's is worded by the form's validation.
    expect(res.body.detail.find((d: { loc: string[] }) => d.loc[1] === 'name').type).toBe('string_too_short');
  });

  it('PATCH: the same, against the record’s own form', async () => {
    const id = await createNote(t, revision, 'a note');
    const res = await t.api('PATCH', `/records/${id}`, { body: { name: '', data: { priority: 'urgent' } } });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(['body.data.priority', 'body.name']);
  });

  it('without data the form has nothing to add, and other parts answer as before', async () => {
    const res = await t.api('POST', '/records/', {
      body: { name: '', form: {}, context: { knowledge_unit_topic_id: revision } },
    });
    expect(locs(res.body)).toEqual(['body.name']);
    const badId = await t.api('PATCH', '/records/not-an-id', { body: { name: '' } });
    expect(badId.status).toBe(422);
    expect(badId.body.detail[0].loc[0]).toBe('path');
    // A role that may not write learns nothing of the form.
    const viewer = t.demo.tenant.users.viewer?.apiKey;
    if (viewer) {
      const seen = await t.api('POST', '/records/', {
        key: viewer,
        body: {
          name: '',
          form: {},
          data: { priority: 'urgent' },
          context: { knowledge_unit_topic_id: revision },
        },
      });
      expect(locs(seen.body)).toEqual(['body.name']);
    }
  });
});
