import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

const PASSWORD = 'a-long-enough-password';

/** Accounts, keys and sign-in as an attacker inside a tenant would try them. */
describe('accounts, keys and sign-in', () => {
  let t: TestServer;
  let owner: WebClient;
  let admin: WebClient;
  let adminId: string;
  const tenantId = () => t.demo.tenant.id;
  const users = () => t.demo.tenant.users;

  beforeAll(async () => {
    t = await startTestServer();
    owner = webClient(t.url);
    expect((await owner.signIn(users().owner.email, users().owner.password)).status).toBe(200);
    const created = await owner.request('POST', '/api/users', {
      body: { email: 'admin@demo.rxs.local', role: 'admin', password: PASSWORD },
    });
    expect(created.status).toBe(201);
    adminId = created.body.id;
    admin = webClient(t.url);
    expect((await admin.signIn('admin@demo.rxs.local', PASSWORD)).status).toBe(200);
  });
  afterAll(() => t.close());

  const ownerUserId = async () =>
    (await t.server.app.services.accounts.findUserByEmail(users().owner.email, tenantId()))!.id;

  describe('no one manages the keys of a higher role', () => {
    it('refuses an admin minting a key for the owner, and the key would not exist', async () => {
      const minted = await admin.request('POST', '/api/keys', {
        body: { name: 'act as owner', user_id: await ownerUserId() },
      });
      expect(minted.status).toBe(403);
      expect(minted.body.detail).toMatch(/may not manage the API keys of a user with the role "owner"/);
      const keys = await owner.request('GET', '/api/keys');
      expect(keys.body.map((k: { name: string }) => k.name)).not.toContain('act as owner');
    });

    it("refuses an admin regenerating or revoking the owner's key; the owner's key keeps working", async () => {
      const ownersKey = await owner.request('POST', '/api/keys', { body: { name: 'owner ci' } });
      expect(ownersKey.status).toBe(201);
      const regenerated = await admin.request('POST', `/api/keys/${ownersKey.body.id}/regenerate`);
      expect(regenerated.status).toBe(403);
      const revoked = await admin.request('DELETE', `/api/keys/${ownersKey.body.id}`);
      expect(revoked.status).toBe(403);
      const kt = await t.api('GET', `/kt/${t.demo.tenant.topics.systemRequirements!.currentRevisionId}`, {
        key: ownersKey.body.key,
      });
      expect(kt.status).toBe(200);
    });

    it('still lets an admin manage keys of admins, editors and viewers, and an owner those of everyone', async () => {
      const forEditor = await admin.request('POST', '/api/keys', {
        body: {
          name: 'editor ci',
          user_id: (await t.server.app.services.accounts.findUserByEmail(users().editor.email))!.id,
        },
      });
      expect(forEditor.status).toBe(201);
      expect((await admin.request('POST', `/api/keys/${forEditor.body.id}/regenerate`)).status).toBe(201);
      const forAdmin = await owner.request('POST', '/api/keys', {
        body: { name: 'admin ci', user_id: adminId },
      });
      expect(forAdmin.status).toBe(201);
      expect((await owner.request('DELETE', `/api/keys/${forAdmin.body.id}`)).status).toBe(200);
    });
  });

  describe('key expiry', () => {
    it('refuses expiries beyond the documented maximum of 3650 days, and dates that are not ISO 8601', async () => {
      for (const expires_at of ['99999-01-01T00:00:00Z', '+099999-01-01T00:00:00Z']) {
        const response = await owner.request('POST', '/api/keys', { body: { name: 'forever', expires_at } });
        expect(response.status).toBe(422);
        expect(response.body.detail[0].loc).toEqual(['body', 'expires_at']);
      }
      const tooFar = new Date(Date.now() + 3651 * 86_400_000).toISOString();
      const beyond = await owner.request('POST', '/api/keys', { body: { name: 'long', expires_at: tooFar } });
      expect(beyond.status).toBe(422);
      expect(beyond.body.detail[0].msg).toMatch(/at most 3650 days/);
      const inside = new Date(Date.now() + 3649 * 86_400_000).toISOString();
      expect(
        (await owner.request('POST', '/api/keys', { body: { name: 'long', expires_at: inside } })).status,
      ).toBe(201);
    });
  });

  describe('users are per tenant', () => {
    it('lets two tenants have a user with the same address, without telling either about the other', async () => {
      const other = webClient(t.url);
      const otherOwner = t.demo.otherTenant.users.owner;
      expect((await other.signIn(otherOwner.email, otherOwner.password)).status).toBe(200);
      // Tenant A adds B's owner address: no 409, the address is A's own user now.
      const squat = await owner.request('POST', '/api/users', {
        body: { email: otherOwner.email, role: 'viewer', password: PASSWORD },
      });
      expect(squat.status).toBe(201);
      // B can still add a person whose address A uses.
      const shared = await other.request('POST', '/api/users', {
        body: { email: 'shared@example.com', role: 'editor', password: 'password-in-tenant-b' },
      });
      expect(shared.status).toBe(201);
      const sharedInA = await owner.request('POST', '/api/users', {
        body: { email: 'shared@example.com', role: 'viewer', password: 'password-in-tenant-a' },
      });
      expect(sharedInA.status).toBe(201);
      // Within one tenant an address is still one user.
      const twice = await owner.request('POST', '/api/users', {
        body: { email: 'shared@example.com', role: 'viewer', password: PASSWORD },
      });
      expect(twice.status).toBe(409);
      expect(twice.body.detail).toMatch(/This tenant already has/);

      // The password tells which user signs in.
      const inA = webClient(t.url);
      expect((await inA.signIn('shared@example.com', 'password-in-tenant-a')).status).toBe(200);
      expect((await inA.request('GET', '/api/session')).body.user.tenantId).toBe(tenantId());
      const inB = webClient(t.url);
      expect((await inB.signIn('shared@example.com', 'password-in-tenant-b')).status).toBe(200);
      expect((await inB.request('GET', '/api/session')).body.user.tenantId).toBe(t.demo.otherTenant.id);
    });

    it('asks which tenant when the address and password fit users of several, then signs in to the one chosen', async () => {
      const otherOwner = webClient(t.url);
      await otherOwner.signIn(t.demo.otherTenant.users.owner.email, t.demo.otherTenant.users.owner.password);
      for (const client of [owner, otherOwner]) {
        const created = await client.request('POST', '/api/users', {
          body: { email: 'both@example.com', role: 'editor', password: PASSWORD },
        });
        expect(created.status).toBe(201);
      }
      const person = webClient(t.url);
      const choice = await person.signIn('both@example.com', PASSWORD);
      expect(choice.status).toBe(409);
      expect(choice.body.detail).toMatch(/several tenants/);
      expect(choice.body.tenants.map((x: { id: string }) => x.id).sort()).toEqual(
        [tenantId(), t.demo.otherTenant.id].sort(),
      );
      expect(person.cookie).toBeUndefined();
      const chosen = await person.request('POST', '/api/session', {
        body: { email: 'both@example.com', password: PASSWORD, tenant_id: t.demo.otherTenant.id },
      });
      expect(chosen.status).toBe(200);
      expect(chosen.body.user.tenantId).toBe(t.demo.otherTenant.id);
      // A wrong password reveals no tenants.
      const wrong = await webClient(t.url).signIn('both@example.com', 'not-the-password');
      expect(wrong.status).toBe(401);
      expect(wrong.body.tenants).toBeUndefined();
    });

    it("frees a deleted user's address for a new user", async () => {
      const first = await owner.request('POST', '/api/users', {
        body: { email: 'leaver@example.com', role: 'viewer', password: PASSWORD },
      });
      expect(first.status).toBe(201);
      expect((await owner.request('DELETE', `/api/users/${first.body.id}`)).status).toBe(204);
      const again = await owner.request('POST', '/api/users', {
        body: { email: 'leaver@example.com', role: 'editor', password: 'the-new-password' },
      });
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(first.body.id);
      expect((await webClient(t.url).signIn('leaver@example.com', 'the-new-password')).status).toBe(200);
    });
  });

  describe('sign-in throttling', () => {
    it('five wrong passwords from client A do not stop the right password from client B', async () => {
      const { accounts } = t.server.app.services;
      await accounts.createUser(tenantId(), {
        email: 'target@example.com',
        role: 'viewer',
        password: PASSWORD,
      });
      const fromA = (password: string) =>
        t.server.app.inject({
          method: 'POST',
          url: '/api/session',
          remoteAddress: '198.51.100.7',
          payload: { email: 'target@example.com', password },
        });
      for (let i = 0; i < 5; i++) expect((await fromA(`guess-${i}`)).statusCode).toBe(401);
      // A is slowed down, even with the right password...
      const slowed = await fromA(PASSWORD);
      expect(slowed.statusCode).toBe(429);
      expect(Number(slowed.headers['retry-after'])).toBeGreaterThan(0);
      // ...but the user, from elsewhere, signs in.
      const fromB = await t.server.app.inject({
        method: 'POST',
        url: '/api/session',
        remoteAddress: '203.0.113.9',
        payload: { email: 'target@example.com', password: PASSWORD },
      });
      expect(fromB.statusCode).toBe(200);
    });

    it('gives one client a global budget of failures across all addresses', async () => {
      const attempt = (email: string) =>
        t.server.app.inject({
          method: 'POST',
          url: '/api/session',
          remoteAddress: '198.51.100.99',
          payload: { email, password: 'sprayed-password' },
        });
      for (let i = 0; i < 50; i++) expect((await attempt(`spray-${i}@example.com`)).statusCode).toBe(401);
      expect((await attempt('spray-last@example.com')).statusCode).toBe(429);
    });

    it('ignores X-Forwarded-For from a client that is not a trusted proxy', async () => {
      const send = (forwardedFor: string, password: string) =>
        t.server.app.inject({
          method: 'POST',
          url: '/api/session',
          remoteAddress: '198.51.100.50',
          headers: { 'x-forwarded-for': forwardedFor },
          payload: { email: users().viewer.email, password },
        });
      for (let i = 0; i < 5; i++) expect((await send(`192.0.2.${i}`, `guess-${i}`)).statusCode).toBe(401);
      expect((await send('192.0.2.200', 'another-guess')).statusCode).toBe(429);
    });
  });

  describe('the audit log', () => {
    it('records sign-ins, failures, key and user changes with who, when and from where', async () => {
      const client = webClient(t.url);
      await client.signIn('admin@demo.rxs.local', 'wrong-password!');
      const key = await admin.request('POST', '/api/keys', { body: { name: 'audited' } });
      await admin.request('POST', `/api/keys/${key.body.id}/regenerate`);
      const editor = await admin.request('POST', '/api/users', {
        body: { email: 'audited@example.com', role: 'viewer', password: PASSWORD },
      });
      await admin.request('PATCH', `/api/users/${editor.body.id}`, { body: { role: 'editor' } });
      await admin.request('DELETE', `/api/users/${editor.body.id}`);

      const log = await owner.request('GET', '/api/audit');
      expect(log.status).toBe(200);
      const actions = log.body.map((e: { action: string }) => e.action);
      for (const action of [
        'sign-in',
        'sign-in-failed',
        'key-created',
        'key-regenerated',
        'key-revoked',
        'user-created',
        'role-changed',
        'user-deleted',
      ]) {
        expect(actions).toContain(action);
      }
      const roleChange = log.body.find((e: { action: string }) => e.action === 'role-changed');
      expect(roleChange).toMatchObject({
        actor: 'admin@demo.rxs.local',
        actor_user_id: adminId,
        target: 'audited@example.com',
        detail: 'viewer → editor',
      });
      expect(roleChange.client_address).toMatch(/127\.0\.0\.1/);
      expect(Date.parse(roleChange.at)).toBeGreaterThan(Date.now() - 60_000);
      // Newest first, and paged.
      const ats = log.body.map((e: { at: string }) => e.at);
      expect([...ats].sort().reverse()).toEqual(ats);
      const page = await owner.request('GET', `/api/audit?limit=2`);
      const next = await owner.request('GET', `/api/audit?limit=2&before=${page.body[1].id}`);
      expect(next.body[0].id).toBe(log.body[2].id);
    });

    it('is readable by owners and admins only, is never editable, and shows only the own tenant', async () => {
      const editor = webClient(t.url);
      await editor.signIn(users().editor.email, users().editor.password);
      expect((await editor.request('GET', '/api/audit')).status).toBe(403);
      expect((await admin.request('GET', '/api/audit')).status).toBe(200);
      for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) {
        expect((await owner.request(method, '/api/audit', { body: {} })).status).toBe(404);
      }
      const other = webClient(t.url);
      await other.signIn(t.demo.otherTenant.users.owner.email, t.demo.otherTenant.users.owner.password);
      const theirs = await other.request('GET', '/api/audit');
      expect(theirs.status).toBe(200);
      const ours = await owner.request('GET', '/api/audit?limit=500');
      const ourIds = new Set(ours.body.map((e: { id: string }) => e.id));
      expect(theirs.body.some((e: { id: string }) => ourIds.has(e.id))).toBe(false);
      expect(theirs.body.some((e: { actor: string }) => e.actor === 'admin@demo.rxs.local')).toBe(false);
      // An id of our log as `before` pages nothing of ours into theirs.
      const probe = await other.request('GET', `/api/audit?before=${ours.body[0].id}`);
      expect(probe.body.some((e: { id: string }) => ourIds.has(e.id))).toBe(false);
    });
  });
});

describe('installation settings for accounts', () => {
  let t: TestServer;
  beforeAll(async () => {
    vi.stubEnv('RXS_MAX_KEY_LIFETIME_DAYS', '30');
    vi.stubEnv('RXS_TRUSTED_PROXIES', '10.0.0.0/8');
    t = await startTestServer();
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await t.close();
  });

  it('caps key lifetimes at RXS_MAX_KEY_LIFETIME_DAYS: 422 beyond, the maximum when none is given', async () => {
    const owner = webClient(t.url);
    await owner.signIn(t.demo.tenant.users.owner.email, t.demo.tenant.users.owner.password);
    const tooLong = await owner.request('POST', '/api/keys', {
      body: { name: 'long', expires_at: new Date(Date.now() + 31 * 86_400_000).toISOString() },
    });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.detail[0].msg).toMatch(/at most 30 days/);
    const unbounded = await owner.request('POST', '/api/keys', { body: { name: 'default' } });
    expect(unbounded.status).toBe(201);
    const lifetime = Date.parse(unbounded.body.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(29.9 * 86_400_000);
    expect(lifetime).toBeLessThanOrEqual(30 * 86_400_000);
  });

  it('takes the client address from X-Forwarded-For only behind a trusted proxy', async () => {
    const { accounts } = t.server.app.services;
    await accounts.createUser(t.demo.tenant.id, {
      email: 'proxied@example.com',
      role: 'viewer',
      password: PASSWORD,
    });
    const viaProxy = (client: string, password: string) =>
      t.server.app.inject({
        method: 'POST',
        url: '/api/session',
        remoteAddress: '10.1.2.3',
        headers: { 'x-forwarded-for': `${client}, 10.9.9.9` },
        payload: { email: 'proxied@example.com', password },
      });
    for (let i = 0; i < 5; i++) expect((await viaProxy('198.51.100.1', `guess-${i}`)).statusCode).toBe(401);
    expect((await viaProxy('198.51.100.1', PASSWORD)).statusCode).toBe(429);
    // Everyone behind the same proxy is not locked out with the attacker.
    expect((await viaProxy('198.51.100.2', PASSWORD)).statusCode).toBe(200);
    const log = await accounts.audit.list(t.demo.tenant.id);
    expect(
      log.find((e) => e.action === 'sign-in' && e.target === 'proxied@example.com')?.client_address,
    ).toBe('198.51.100.2');
  });
});
