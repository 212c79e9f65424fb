import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

// Every row of the interface document's error table, as a client meets it.
describe('the documented errors', () => {
  let t: TestServer;
  let revision: string;
  beforeAll(async () => {
    t = await startTestServer();
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
  });
  afterAll(() => t.close());

  it('200: success', async () => {
    const res = await t.api('GET', `/kt/${revision}`);
    expect(res.status).toBe(200);
    expect(res.body._id).toBe(revision);
  });

  it('201: created by POST /records/', async () => {
    const res = await t.api('POST', '/records/', {
      body: {
        name: 'REQ-NEW',
        form: {},
        data: { name: 'New requirement', type: 'functional' },
        context: { knowledge_unit_topic_id: revision },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.context.knowledge_unit_topic_id).toBe(revision);
  });

  it.each([
    ['missing', null, /missing/],
    ['malformed', 'not-a-key', /invalid/],
    ['well-formed but unknown', 'rxs_0123456789abcdef_' + 'A'.repeat(43), /invalid/],
  ])('401: API key %s', async (_case, key, message) => {
    for (const path of [`/kt/${revision}`, `/records/?context__knowledge_unit_topic_id=${revision}`]) {
      const res = await t.api('GET', path, { key });
      expect(res.status).toBe(401);
      expect(typeof res.body.detail).toBe('string');
      expect(res.body.detail).toMatch(message);
      expect(res.body.detail).toMatch(/Regenerate the key/);
    }
    const batch = await t.api('POST', '/traces/batch/list', { key, body: { nodes: [] } });
    expect(batch.status).toBe(401);
  });

  it('401: an expired key, and a revoked key', async () => {
    const { accounts } = t.server.app.services;
    const owner = (await accounts.findUserByEmail(t.demo.tenant.users.owner.email))!;
    const expiring = await accounts.createApiKey(t.demo.tenant.id, {
      userId: owner.id,
      name: 'short',
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await t.api('GET', `/kt/${revision}`, { key: expiring.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    const expired = await t.api('GET', `/kt/${revision}`, { key: expiring.key });
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toMatch(/expired/);

    const revocable = await accounts.createApiKey(t.demo.tenant.id, { userId: owner.id, name: 'to revoke' });
    expect((await t.api('GET', `/kt/${revision}`, { key: revocable.key })).status).toBe(200);
    await accounts.revokeApiKey(t.demo.tenant.id, revocable.id);
    const revoked = await t.api('GET', `/kt/${revision}`, { key: revocable.key });
    expect(revoked.status).toBe(401);
    expect(revoked.body.detail).toMatch(/revoked/);
    // Settings has no Regenerate button for a revoked key: the message sends to a new key.
    expect(revoked.body.detail).toMatch(/Create a new key in Settings → API keys/);
    expect(revoked.body.detail).not.toMatch(/Regenerate the key/);
  });

  it("403: a valid key whose user's role lacks the permission", async () => {
    const res = await t.api('POST', '/records/', {
      key: t.demo.tenant.users.viewer.apiKey,
      body: { name: 'x', form: {}, data: {}, context: { knowledge_unit_topic_id: revision } },
    });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/role "viewer" lacks the permission "records:write"/);
  });

  it('404: a history id where a revision id is expected names the revision id to use', async () => {
    const topic = t.demo.tenant.topics.systemRequirements!;
    const res = await t.api('GET', `/kt/${topic.historyId}`);
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain('history id');
    expect(res.body.detail).toContain(topic.currentRevisionId);
  });

  it('404: an unknown id', async () => {
    const res = await t.api('GET', '/kt/0123456789abcdef01234567');
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/not found/);
  });

  it('422: validation error with a detail array of {loc, msg, type}', async () => {
    const res = await t.api('POST', '/records/', { body: { form: {}, context: {} } });
    expect(res.status).toBe(422);
    expect(Array.isArray(res.body.detail)).toBe(true);
    expect(res.body.detail).toContainEqual({ loc: ['body', 'name'], msg: 'Field required', type: 'missing' });
    for (const item of res.body.detail) {
      expect(Object.keys(item).sort()).toEqual(['loc', 'msg', 'type']);
    }
  });

  it('an empty [] from GET /records/ is a 200 success, e.g. for a history id', async () => {
    const topic = t.demo.tenant.topics.systemRequirements!;
    const res = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic.historyId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('an unknown path is 404 with a detail', async () => {
    const res = await t.api('GET', '/nothing-here');
    expect(res.status).toBe(404);
    expect(typeof res.body.detail).toBe('string');
  });
});
