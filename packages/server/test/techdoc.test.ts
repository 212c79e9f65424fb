import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

const schema = {
  components: [
    { type: 'textfield', key: 'textfield_a1', label: 'Title', validate: { required: true } },
    {
      type: 'select',
      key: 'select_b2',
      label: 'Risk',
      properties: { 'service-key': 'risk' },
      values: [
        { label: 'Low', value: 'low' },
        { label: 'High', value: 'high' },
      ],
    },
  ],
};

describe('knowledge topics: revisions, history ids and re-approval', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('the demo topic: GET /kt/{revision} has the schema; old and current revisions both answer', async () => {
    const topic = t.demo.tenant.topics.systemRequirements!;
    const current = await t.api('GET', `/kt/${topic.currentRevisionId}`);
    expect(current.status).toBe(200);
    expect(current.body.knowledge_topic_schema.components.length).toBeGreaterThan(5);
    expect(current.body).toMatchObject({
      status: 'approved',
      version: '2.0',
      knowledge_topic_history_id: topic.historyId,
      latest_revision_id: topic.currentRevisionId,
    });
    const old = await t.api('GET', `/kt/${topic.oldRevisionIds[0]}`);
    expect(old.status).toBe(200);
    expect(old.body).toMatchObject({ version: '1.0', latest_revision_id: topic.currentRevisionId });
    expect(old.body._id).not.toBe(old.body.knowledge_topic_history_id);
  });

  it('full flow: create a draft, edit it, approve, edit after approval (409), open a draft, re-approve: records move', async () => {
    const created = await t.api('POST', '/kt/', {
      body: { knowledge_topic_name: 'Design Inputs', type: 'multi_record', knowledge_topic_schema: schema },
    });
    expect(created.status).toBe(201);
    const v1 = created.body._id;
    expect(created.body).toMatchObject({ status: 'draft', version: '1.0', latest_revision_id: v1 });
    expect(created.body.knowledge_topic_history_id).not.toBe(v1);

    const renamed = await t.api('PATCH', `/kt/${v1}`, {
      body: { knowledge_topic_name: 'Design Inputs (v1)' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.knowledge_topic_name).toBe('Design Inputs (v1)');

    const approved = await t.api('POST', `/kt/${v1}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('approved');
    expect((await t.api('POST', `/kt/${v1}/approve`)).status).toBe(409);

    const immutable = await t.api('PATCH', `/kt/${v1}`, { body: { knowledge_topic_name: 'nope' } });
    expect(immutable.status).toBe(409);
    expect(immutable.body.detail).toContain(`POST /kt/${v1}/draft`);

    const record = await t.api('POST', '/records/', {
      body: {
        name: 'DI-1',
        form: {},
        data: { textfield_a1: 'Sterile barrier' },
        context: { knowledge_unit_topic_id: v1 },
      },
    });
    expect(record.status).toBe(201);

    const draft = await t.api('POST', `/kt/${v1}/draft`);
    expect(draft.status).toBe(201);
    const v2 = draft.body._id;
    expect(draft.body).toMatchObject({
      status: 'draft',
      version: '2.0',
      knowledge_topic_history_id: created.body.knowledge_topic_history_id,
    });
    expect((await t.api('POST', `/kt/${v1}/draft`)).status).toBe(409); // one open draft at a time
    // An open draft does not move anything yet: v1 stays current.
    expect((await t.api('GET', `/kt/${v1}`)).body).toMatchObject({
      latest_revision_id: v1,
      latest_or_latest_approved_revision_id: v2,
    });

    await t.api('PATCH', `/kt/${v2}`, {
      body: {
        knowledge_topic_schema: {
          components: [...schema.components, { type: 'textarea', key: 'notes', label: 'Notes' }],
        },
      },
    });
    const reapproved = await t.api('POST', `/kt/${v2}/approve`);
    expect(reapproved.status).toBe(200);

    // The re-approval: records listed by the new revision, [] by the old; GET /kt/{old} shows the new one.
    expect((await t.api('GET', `/records/?context__knowledge_unit_topic_id=${v1}`)).body).toEqual([]);
    const moved = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${v2}`);
    expect(moved.body.map((r: any) => r._id)).toEqual([record.body._id]);
    expect(moved.body[0].context.knowledge_unit_topic_id).toBe(v2);
    expect((await t.api('GET', `/kt/${v1}`)).body.latest_revision_id).toBe(v2);
  });

  it('GET /kt/ filters by history id, status and name, and pages with a default size', async () => {
    const topic = t.demo.tenant.topics.systemRequirements!;
    const byHistory = await t.api('GET', `/kt/?knowledge_topic_history_id=${topic.historyId}`);
    expect(byHistory.body.map((r: any) => r._id).sort()).toEqual(
      [topic.currentRevisionId, ...topic.oldRevisionIds].sort(),
    );
    const byName = await t.api('GET', '/kt/?name=system%20REQ');
    expect(byName.body.every((r: any) => r.knowledge_topic_name === 'System Requirements')).toBe(true);
    const current = await t.api('GET', '/kt/?current=true');
    expect(current.body.map((r: any) => r.knowledge_topic_history_id)).toEqual([
      ...new Set(current.body.map((r: any) => r.knowledge_topic_history_id)),
    ]);
    const drafts = await t.api('GET', '/kt/?status=draft');
    expect(drafts.body.every((r: any) => r.status === 'draft')).toBe(true);

    for (let i = 0; i < 55; i++) {
      await t.server.app.services.techdoc.create(
        { tenantId: t.demo.tenant.id, userId: 'u', role: 'owner' },
        {
          knowledge_topic_name: `Many ${i}`,
          type: 'single_record',
          knowledge_topic_schema: { components: [] },
        },
      );
    }
    const unfiltered = await t.api('GET', '/kt/');
    expect(unfiltered.status).toBe(200);
    expect(unfiltered.body).toHaveLength(50); // the default page: never unbounded
    expect(unfiltered.headers.get('link')).toMatch(/rel="next"/);
    expect((await t.api('GET', '/kt/?limit=501')).status).toBe(422);
  });

  it('accepts the reference OpenAPI create body as well', async () => {
    const res = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic: {
          knowledge_topic_name: 'Ref Shape',
          type: 'single_record',
          knowledge_topic_schema: schema,
          related_form_id: 'x',
        },
        knowledge_unit_history_id: '69b989a14252b7481003afe5',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.knowledge_topic_name).toBe('Ref Shape');
  });

  it('rejects bad KT bodies with 422 items', async () => {
    const res = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: '',
        type: 'other',
        knowledge_topic_schema: { components: 'x' },
        extra: 1,
      },
    });
    expect(res.status).toBe(422);
    const locs = res.body.detail.map((d: any) => d.loc.join('.'));
    expect(locs).toEqual(
      expect.arrayContaining([
        'body.knowledge_topic_name',
        'body.type',
        'body.knowledge_topic_schema.components',
        'body.extra',
      ]),
    );
  });

  it('an editor may edit topics but not approve them', async () => {
    const editor = t.demo.tenant.users.editor.apiKey;
    const created = await t.api('POST', '/kt/', {
      key: editor,
      body: { knowledge_topic_name: 'By editor', type: 'multi_record', knowledge_topic_schema: schema },
    });
    expect(created.status).toBe(201);
    const approve = await t.api('POST', `/kt/${created.body._id}/approve`, { key: editor });
    expect(approve.status).toBe(403);
    expect(approve.body.detail).toContain('kt:approve');
  });
});
