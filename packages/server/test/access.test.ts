import { ROLE_PERMISSIONS, type Permission, type Role } from '@rxs/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

describe('roles, keys and tenant isolation', () => {
  let t: TestServer;
  const keys = {} as Record<Role, string>;
  beforeAll(async () => {
    t = await startTestServer();
    keys.owner = t.demo.tenant.users.owner.apiKey;
    keys.editor = t.demo.tenant.users.editor.apiKey;
    keys.viewer = t.demo.tenant.users.viewer.apiKey;
    const { accounts } = t.server.app.services;
    const admin = await accounts.createUser(t.demo.tenant.id, {
      email: 'admin@demo.rxs.local',
      role: 'admin',
    });
    keys.admin = (await accounts.createApiKey(t.demo.tenant.id, { userId: admin.id, name: 'admin' })).key;
  });
  afterAll(() => t.close());

  // Each operation, what it needs, and a request that succeeds when allowed (fresh objects per call).
  const operations: {
    name: string;
    permission: Permission;
    call: (key: string) => Promise<{ status: number }>;
    ok: number;
  }[] = [
    {
      name: 'GET /kt/{id}',
      permission: 'kt:read',
      ok: 200,
      call: (key) =>
        t.api('GET', `/kt/${t.demo.tenant.topics.systemRequirements!.currentRevisionId}`, { key }),
    },
    { name: 'GET /kt/', permission: 'kt:read', ok: 200, call: (key) => t.api('GET', '/kt/', { key }) },
    {
      name: 'POST /kt/',
      permission: 'kt:write',
      ok: 201,
      call: (key) =>
        t.api('POST', '/kt/', {
          key,
          body: {
            knowledge_topic_name: 'm',
            type: 'multi_record',
            knowledge_topic_schema: { components: [] },
          },
        }),
    },
    {
      name: 'POST /kt/{id}/approve',
      permission: 'kt:approve',
      ok: 200,
      call: async (key) => {
        const draft = await t.api('POST', '/kt/', {
          body: {
            knowledge_topic_name: 'a',
            type: 'multi_record',
            knowledge_topic_schema: { components: [] },
          },
        });
        return t.api('POST', `/kt/${draft.body._id}/approve`, { key });
      },
    },
    {
      name: 'GET /records/',
      permission: 'records:read',
      ok: 200,
      call: (key) =>
        t.api(
          'GET',
          `/records/?context__knowledge_unit_topic_id=${t.demo.tenant.topics.systemRequirements!.currentRevisionId}`,
          { key },
        ),
    },
    {
      name: 'GET /records/{id}',
      permission: 'records:read',
      ok: 200,
      call: (key) =>
        t.api('GET', `/records/${t.demo.tenant.topics.systemRequirements!.recordIds[0]}`, { key }),
    },
    {
      name: 'POST /records/',
      permission: 'records:write',
      ok: 201,
      call: (key) =>
        t.api('POST', '/records/', {
          key,
          body: {
            name: 'm',
            form: {},
            data: {},
            context: { knowledge_unit_topic_id: t.demo.tenant.topics.systemRequirements!.currentRevisionId },
          },
        }),
    },
    {
      name: 'PATCH /records/{id}',
      permission: 'records:write',
      ok: 200,
      call: (key) =>
        t.api('PATCH', `/records/${t.demo.tenant.topics.systemRequirements!.recordIds[3]}`, {
          key,
          body: { name: 'Requirements-4' },
        }),
    },
    {
      name: 'POST /traces/batch/list',
      permission: 'traces:read',
      ok: 200,
      call: (key) =>
        t.api('POST', '/traces/batch/list', {
          key,
          body: {
            nodes: [
              {
                node_id: t.demo.tenant.topics.systemRequirements!.recordIds[0],
                node_type: 'Record',
                version: '1',
              },
            ],
          },
        }),
    },
    {
      name: 'POST /traces/',
      permission: 'traces:write',
      ok: 201,
      call: async (key) => {
        const rec = await t.api('POST', '/records/', {
          body: {
            name: 'n',
            form: {},
            data: {},
            context: { knowledge_unit_topic_id: t.demo.tenant.topics.systemRequirements!.currentRevisionId },
          },
        });
        return t.api('POST', '/traces/', {
          key,
          body: {
            source: { node_id: rec.body._id, node_type: 'Record' },
            target: { node_id: t.demo.tenant.topics.systemRequirements!.recordIds[0], node_type: 'Record' },
            relation_type: 'mentions',
          },
        });
      },
    },
  ];

  for (const role of ['owner', 'admin', 'editor', 'viewer'] as const) {
    for (const op of operations) {
      const allowed = ROLE_PERMISSIONS[role].includes(op.permission);
      it(`${role} ${allowed ? 'may' : 'may not'} ${op.name}`, async () => {
        const res = await op.call(keys[role]);
        expect(res.status).toBe(allowed ? op.ok : 403);
      });
    }
  }

  it('a key of tenant A gets 404 (or []) for every id of tenant B, through every endpoint', async () => {
    const other = t.demo.otherTenant;
    const risk = other.topics.riskRegister!;
    const a = t.ownerKey;
    expect((await t.api('GET', `/kt/${risk.currentRevisionId}`, { key: a })).status).toBe(404);
    expect((await t.api('GET', `/kt/${risk.historyId}`, { key: a })).body.detail).not.toContain(
      risk.currentRevisionId,
    );
    expect(
      (await t.api('PATCH', `/kt/${risk.currentRevisionId}`, { key: a, body: { knowledge_topic_name: 'x' } }))
        .status,
    ).toBe(404);
    expect((await t.api('POST', `/kt/${risk.currentRevisionId}/draft`, { key: a })).status).toBe(404);
    expect((await t.api('POST', `/kt/${risk.currentRevisionId}/approve`, { key: a })).status).toBe(404);
    expect(
      (await t.api('GET', `/kt/?knowledge_topic_history_id=${risk.historyId}`, { key: a })).body,
    ).toEqual([]);
    expect(
      (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${risk.currentRevisionId}`, { key: a }))
        .body,
    ).toEqual([]);
    expect((await t.api('GET', `/records/?id__in=${risk.recordIds.join(',')}`, { key: a })).body).toEqual([]);
    for (const id of risk.recordIds) {
      expect((await t.api('GET', `/records/${id}`, { key: a })).status).toBe(404);
      expect((await t.api('PATCH', `/records/${id}`, { key: a, body: { name: 'x' } })).status).toBe(404);
      expect((await t.api('DELETE', `/records/${id}`, { key: a })).status).toBe(404);
    }
    const create = await t.api('POST', '/records/', {
      key: a,
      body: { name: 'x', form: {}, data: {}, context: { knowledge_unit_topic_id: risk.currentRevisionId } },
    });
    expect(create.status).toBe(404);
    const batch = await t.api('POST', '/traces/batch/list', {
      key: a,
      body: { nodes: risk.recordIds.map((id) => ({ node_id: id, node_type: 'Record', version: '1' })) },
    });
    for (const id of risk.recordIds) expect(batch.body.results[id].edges).toEqual([]);
    const link = await t.api('POST', '/traces/', {
      key: a,
      body: {
        source: { node_id: risk.recordIds[0], node_type: 'Record' },
        target: { node_id: t.demo.tenant.topics.systemRequirements!.recordIds[0], node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    expect(link.status).toBe(404);
    // And B still sees all of its own.
    const own = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${risk.currentRevisionId}`, {
      key: other.users.owner.apiKey,
    });
    expect(own.body).toHaveLength(risk.recordIds.length);
  });

  it('keys are stored only as hashes; a regenerated key replaces the old one; a deleted user’s keys stop working', async () => {
    const { accounts, storage } = t.server.app.services;
    const rows = await storage.db.selectFrom('api_keys').selectAll().execute();
    for (const row of rows) {
      for (const key of Object.values(keys)) expect(JSON.stringify(row)).not.toContain(key.slice(-43));
    }
    const user = await accounts.createUser(t.demo.tenant.id, {
      email: 'temp@demo.rxs.local',
      role: 'viewer',
    });
    const first = await accounts.createApiKey(t.demo.tenant.id, { userId: user.id, name: 'ci' });
    const second = await accounts.regenerateApiKey(t.demo.tenant.id, first.id);
    const rev = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    expect((await t.api('GET', `/kt/${rev}`, { key: first.key })).status).toBe(401);
    expect((await t.api('GET', `/kt/${rev}`, { key: second.key })).status).toBe(200);
    expect(second.name).toBe('ci');
    await accounts.deleteUser(t.demo.tenant.id, user.id);
    expect((await t.api('GET', `/kt/${rev}`, { key: second.key })).status).toBe(401);
  });
});
