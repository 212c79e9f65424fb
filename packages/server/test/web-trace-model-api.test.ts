import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceModel, TraceRole } from '@rxs/contract';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/**
 * The trace model in the web app's API (`GET`/`PUT /api/trace-model`): everyone signed in reads
 * their own tenant's model, owners and admins replace it at the version they read, and the service's
 * 409 and 422 items reach the browser unchanged.
 */
describe('web app API: the trace model', () => {
  let t: TestServer;
  let owner: WebClient;
  let admin: WebClient;
  let viewer: WebClient;
  let editor: WebClient;
  let other: WebClient;
  const topics = () => t.demo.tenant.topics;

  const mitigates = (): TraceRole => ({
    id: 'mitigates',
    forward_name: 'mitigates',
    backward_name: 'mitigated by',
    from: { topic_history_id: topics().verificationTests!.historyId },
    to: { topic_history_id: topics().systemRequirements!.historyId },
    trace_source: 'from',
    relation_type: 'mentions',
  });

  beforeAll(async () => {
    t = await startTestServer();
    const users = t.demo.tenant.users;
    [owner, admin, viewer, editor, other] = [0, 1, 2, 3, 4].map(() => webClient(t.url)) as WebClient[];
    expect((await owner!.signIn(users.owner.email, users.owner.password)).status).toBe(200);
    expect((await viewer!.signIn(users.viewer.email, users.viewer.password)).status).toBe(200);
    expect((await editor!.signIn(users.editor.email, users.editor.password)).status).toBe(200);
    const foreign = t.demo.otherTenant.users.owner;
    expect((await other!.signIn(foreign.email, foreign.password)).status).toBe(200);
    const adminUser = {
      email: 'trace-admin@example.com',
      password: 'a long admin password 1',
      role: 'admin',
    };
    expect((await owner!.request('POST', '/api/users', { body: adminUser })).status).toBe(201);
    expect((await admin!.signIn(adminUser.email, adminUser.password)).status).toBe(200);
  });
  afterAll(() => t.close());

  it('answers the demo model with its version and topic names to every role, and nothing without a session', async () => {
    for (const client of [owner, admin, editor, viewer]) {
      const res = await client.request<TraceModel>('GET', '/api/trace-model');
      expect(res.status, res.text).toBe(200);
      expect(res.body.version).toBe(1);
      const verifies = res.body.roles.find((role) => role.id === 'verifies');
      expect(verifies).toMatchObject({
        forward_name: 'verifies',
        backward_name: 'verified by',
        from: { topic_name: topics().verificationTests!.name },
        to: { topic_name: topics().systemRequirements!.name },
      });
    }
    expect((await webClient(t.url).request('GET', '/api/trace-model')).status).toBe(401);
  });

  it('keeps tenants apart: tenant B neither sees nor may use tenant A’s topics', async () => {
    const res = await other.request<TraceModel>('GET', '/api/trace-model');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ version: 0, roles: [] });
    expect(res.text).not.toContain(topics().systemRequirements!.historyId);

    const put = await other.request('PUT', '/api/trace-model', {
      body: { version: 0, roles: [mitigates()] },
    });
    expect(put.status, put.text).toBe(422);
    expect(put.body.detail.map((item: { loc: unknown[] }) => item.loc)).toEqual([
      ['body', 'roles', 0, 'from', 'topic_history_id'],
      ['body', 'roles', 0, 'to', 'topic_history_id'],
    ]);
  });

  it('lets only owners and admins replace it, with the CSRF token', async () => {
    const current = (await owner.request<TraceModel>('GET', '/api/trace-model')).body;
    const body = { version: current.version, roles: [...current.roles, mitigates()] };
    for (const client of [viewer, editor]) {
      const res = await client.request('PUT', '/api/trace-model', { body });
      expect(res.status, res.text).toBe(403);
    }
    const noCsrf = await owner.request('PUT', '/api/trace-model', { body, csrf: null });
    expect(noCsrf.status).toBe(403);
    expect((await owner.request<TraceModel>('GET', '/api/trace-model')).body.version).toBe(current.version);

    const saved = await admin.request<TraceModel>('PUT', '/api/trace-model', { body });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.version).toBe(current.version + 1);
    expect(saved.body.roles.at(-1)).toMatchObject({
      id: 'mitigates',
      backward_name: 'mitigated by',
      from: { topic_name: topics().verificationTests!.name },
    });
    const seen = await viewer.request<TraceModel>('GET', '/api/trace-model');
    expect(seen.body.roles.map((role) => role.id)).toContain('mitigates');
  });

  it('refuses a change based on an old version (409) and answers each problem as a 422 item', async () => {
    const current = (await owner.request<TraceModel>('GET', '/api/trace-model')).body;
    const old = await owner.request('PUT', '/api/trace-model', {
      body: { version: current.version - 1, roles: current.roles },
    });
    expect(old.status, old.text).toBe(409);
    expect(old.body.detail).toMatch(/changed since you read it/);

    const twice = { ...mitigates(), id: 'mitigates-again', relation_type: 'is_parent' as const };
    const invalid = await owner.request('PUT', '/api/trace-model', {
      body: { version: current.version, roles: [...current.roles, twice] },
    });
    expect(invalid.status, invalid.text).toBe(422);
    const index = current.roles.length;
    expect(invalid.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'roles', index, 'forward_name'] }),
        expect.objectContaining({ loc: ['body', 'roles', index, 'backward_name'] }),
      ]),
    );
    const internal = await owner.request('PUT', '/api/trace-model', {
      body: { version: current.version, roles: [{ ...twice, relation_type: 'auto_mention' }] },
    });
    expect(internal.status, internal.text).toBe(422);
    expect(internal.body.detail[0].loc).toEqual(['body', 'roles', 0, 'relation_type']);
  });
});
