import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

describe('single records: create, read, update, delete, validation', () => {
  let t: TestServer;
  let revision: string;
  const record = (data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    name: 'REQ-T',
    form: {},
    data,
    context: { knowledge_unit_topic_id: revision },
    ...extra,
  });
  beforeAll(async () => {
    t = await startTestServer();
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
  });
  afterAll(() => t.close());

  it('creates, reads, updates (bumping the version and audit info) and deletes', async () => {
    const created = await t.api('POST', '/records/', {
      body: record({ name: 'Pressure', type: 'functional', priority: 'high' }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      version: '1.0',
      read_only: false,
      audit_info: { last_action: 'created', user_id_last_updated: null },
    });
    const id = created.body._id;
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect((await t.api('GET', `/records/${id}`)).body).toEqual(created.body);

    const updated = await t.api('PATCH', `/records/${id}`, {
      key: t.demo.tenant.users.editor.apiKey,
      body: { data: { name: 'Pressure', priority: 'low' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.version).toBe('2.0');
    expect(updated.body.data).toEqual({ name: 'Pressure', priority: 'low' });
    expect(updated.body.audit_info).toMatchObject({
      last_action: 'updated',
      timestamp_last_updated: expect.any(String),
      user_id_last_updated: expect.any(String),
    });

    const stale = await t.api('PATCH', `/records/${id}`, { body: { name: 'x', version: '1.0' } });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toMatch(/version 2.0/);

    expect((await t.api('DELETE', `/records/${id}`)).status).toBe(204);
    expect((await t.api('GET', `/records/${id}`)).status).toBe(404);
    expect((await t.api('DELETE', `/records/${id}`)).status).toBe(404);
  });

  it('validates data against the KT schema: one {loc, msg, type} per problem', async () => {
    // The sample schema has no required fields; its selects and checklist have allowed values.
    const res = await t.api('POST', '/records/', {
      body: record({ type: 'urgent', priority: 7, checklist_kgd0ri: ['Equipment', 'Nope'] }),
    });
    expect(res.status).toBe(422);
    const locs = res.body.detail.map((d: any) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.data.type', 'body.data.priority']));
    expect(locs.some((l: string) => l.startsWith('body.data.checklist_kgd0ri'))).toBe(true);
    for (const item of res.body.detail)
      expect(item).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
  });

  it('required fields of the Verification Tests topic, and a pattern rule', async () => {
    const tests = t.demo.tenant.topics.verificationTests!.currentRevisionId;
    const res = await t.api('POST', '/records/', {
      body: {
        name: 'TC',
        form: {},
        data: { textfield_k2j4h1: 'T-1' },
        context: { knowledge_unit_topic_id: tests },
      },
    });
    expect(res.status).toBe(422);
    const byLoc = Object.fromEntries(res.body.detail.map((d: any) => [d.loc.join('.'), d.type]));
    expect(byLoc['body.data.textfield_9vd1sa']).toBe('missing');
    expect(byLoc['body.data.radio_7yq2mw']).toBe('missing');
    expect(Object.keys(byLoc)).toContain('body.data.textfield_k2j4h1');
  });

  it('the KT revision must exist in the tenant: 404, naming the revision id for a history id', async () => {
    const unknown = await t.api('POST', '/records/', {
      body: { ...record({}), context: { knowledge_unit_topic_id: '0123456789abcdef01234567' } },
    });
    expect(unknown.status).toBe(404);
    const history = t.demo.tenant.topics.systemRequirements!.historyId;
    const byHistory = await t.api('POST', '/records/', {
      body: { ...record({}), context: { knowledge_unit_topic_id: history } },
    });
    expect(byHistory.status).toBe(404);
    expect(byHistory.body.detail).toContain(revision);
    const missing = await t.api('POST', '/records/', { body: { ...record({}), context: {} } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(['body', 'context', 'knowledge_unit_topic_id']);
  });

  it('a read_only record refuses changes and deletion', async () => {
    const created = await t.api('POST', '/records/', {
      body: record({ name: 'Frozen' }, { read_only: true }),
    });
    expect(created.body.read_only).toBe(true);
    expect((await t.api('PATCH', `/records/${created.body._id}`, { body: { name: 'changed' } })).status).toBe(
      409,
    );
    expect((await t.api('DELETE', `/records/${created.body._id}`)).status).toBe(409);
  });

  it('auto_number names records by their count', async () => {
    const res = await t.api('POST', '/records/', {
      body: record({}, { name: 'Requirements', auto_number: true }),
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toMatch(/^Requirements-\d+$/);
  });

  it('deleting a record removes the traces that touch it', async () => {
    const a = await t.api('POST', '/records/', { body: record({ name: 'A' }) });
    const b = await t.api('POST', '/records/', { body: record({ name: 'B' }) });
    const trace = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: a.body._id, node_type: 'Record' },
        target: { node_id: b.body._id, node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    expect(trace.status).toBe(201);
    await t.api('DELETE', `/records/${a.body._id}`);
    expect((await t.api('GET', `/traces/${trace.body._id}`)).status).toBe(404);
  });
});
