import { ROLE_PERMISSIONS, type Role } from '@rxs/contract';
import { createClient } from '@rxs/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

describe('GET /account: who a key acts for', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('names the tenant, the user, the role with its permissions and the key, for every role', async () => {
    const users = t.demo.tenant.users;
    for (const role of ['owner', 'editor', 'viewer'] as Role[]) {
      const user = users[role as keyof typeof users];
      const res = await t.api('GET', '/account', { key: user.apiKey });
      expect(res.status, res.text).toBe(200);
      expect(res.body.tenant).toEqual({ id: t.demo.tenant.id, name: t.demo.tenant.name });
      expect(res.body.user.email).toBe(user.email);
      expect(res.body.role).toBe(role);
      expect(res.body.permissions).toEqual([...ROLE_PERMISSIONS[role]]);
      expect(res.body.key.id).toBe(user.apiKey.split('_')[1]);
      expect(JSON.stringify(res.body)).not.toContain(user.apiKey);
    }
  });

  it("answers another tenant's key with that tenant, and a revoked key with 401", async () => {
    const { accounts } = t.server.app.services;
    const other = await accounts.createTenant('Other & <Co> — Ünïcode');
    const user = await accounts.createUser(other.id, { email: 'qa@other.example', role: 'editor' });
    const created = await accounts.createApiKey(other.id, {
      userId: user.id,
      name: 'ci',
      expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
    });
    const res = await t.api('GET', '/account', { key: created.key });
    expect(res.body.tenant).toEqual({ id: other.id, name: 'Other & <Co> — Ünïcode' });
    expect(res.body.key).toEqual({ id: created.id, name: 'ci', expires_at: created.expires_at });
    await accounts.revokeApiKey(other.id, created.id);
    expect((await t.api('GET', '/account', { key: created.key })).status).toBe(401);
  });

  it('is read by the client, which answers undefined from a server without it', async () => {
    const client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
    });
    expect((await client.techdoc.account())?.tenant.name).toBe(t.demo.tenant.name);
    const elsewhere = createClient({
      techdocUrl: `${t.url}/nothing-here`,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
    });
    expect(await elsewhere.techdoc.account()).toBeUndefined();
  });
});
