import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.js';
import { webClient, type WebClient, type WebResponse } from '../web-client.js';
import { median } from './support/stats.js';

/**
 * Access to the web app, route by route from the server's own route table: every `/api/...` route
 * needs a live session, every state-changing one also the session's CSRF token and a same-origin
 * request; sessions end on sign-out, password change, user removal and expiry; the cookie carries
 * the right flags; sign-in guessing is slowed (per e-mail and per address) without revealing which
 * e-mails exist; and every id of another tenant answers as an id that never existed.
 */

interface Route {
  method: string;
  path: string;
}

/** The routes of the app, parsed from Fastify's route tree (so new routes are covered by themselves). */
function routesOf(tree: string): Route[] {
  const routes: Route[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    const parent = stack[depth - 1] ?? '';
    const segment = match[2]!;
    const path =
      parent.endsWith('/') || segment.startsWith('/') || parent === ''
        ? parent + segment
        : `${parent}/${segment}`;
    stack[depth] = path;
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim())) {
      if (method && method !== 'HEAD') routes.push({ method, path });
    }
  }
  return routes;
}

const PUBLIC = new Set(['POST /api/session', 'GET /api/session/probe', 'GET /api/meta']);
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A syntactically valid id for a route parameter (the guards run before any lookup). */
function concrete(path: string, id?: string): string {
  return path.replace(/:id\b/g, () => {
    if (id) return id;
    if (path.startsWith('/api/keys')) return randomBytes(8).toString('hex');
    if (path.startsWith('/api/users')) return randomUUID();
    return randomBytes(12).toString('hex');
  });
}

describe('web app access', () => {
  let t: TestServer;
  let routes: Route[];
  let owner: WebClient;
  let viewer: WebClient;
  const users = () => t.demo.tenant.users;

  const signedIn = async (email: string, password: string) => {
    const client = webClient(t.url);
    const res = await client.signIn(email, password);
    expect(res.status, res.text).toBe(200);
    return client;
  };
  const newUser = async (role: string) => {
    const email = `web-${randomBytes(4).toString('hex')}@demo.rxs.local`;
    const password = `pw-${randomBytes(9).toString('base64url')}`;
    const user = await t.server.app.services.accounts.createUser(t.demo.tenant.id, { email, role, password });
    return { ...user, email, password };
  };

  beforeAll(async () => {
    t = await startTestServer();
    routes = routesOf(t.server.app.printRoutes({ commonPrefix: false })).filter((r) =>
      r.path.startsWith('/api/'),
    );
    owner = await signedIn(users().owner.email, users().owner.password);
    viewer = await signedIn(users().viewer.email, users().viewer.password);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the route table lists the web API', () => {
    const names = routes.map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      'POST /api/session',
      'GET /api/session',
      'POST /api/keys',
      'DELETE /api/records/:id',
    ])
      expect(names).toContain(expected);
    expect(routes.length).toBeGreaterThan(15);
  });

  it('every route but sign-in and the vocabularies needs a session: 401 with a detail', async () => {
    const anonymous = webClient(t.url);
    for (const route of routes) {
      const name = `${route.method} ${route.path}`;
      if (PUBLIC.has(name)) continue;
      for (const cookie of [
        undefined,
        'rxs_session=',
        `rxs_session=${randomBytes(32).toString('base64url')}`,
        'rxs_session=../../etc',
      ]) {
        const res = await anonymous.request(route.method, concrete(route.path), {
          body: UNSAFE.has(route.method) ? {} : undefined,
          headers: cookie ? { cookie } : {},
        });
        // A state-changing request with no session may also be refused for its missing CSRF token.
        expect(
          res.status === 401 || (UNSAFE.has(route.method) && res.status === 403),
          `${name} ${cookie}: ${res.status} ${res.text}`,
        ).toBe(true);
        expect(typeof res.body?.detail, name).toBe('string');
      }
    }
  });

  it('every state-changing route refuses a missing or foreign CSRF token and cross-site requests', async () => {
    const unsafe = routes.filter((r) => UNSAFE.has(r.method) && !PUBLIC.has(`${r.method} ${r.path}`));
    expect(unsafe.length).toBeGreaterThan(10);
    for (const route of unsafe) {
      const name = `${route.method} ${route.path}`;
      const path = concrete(route.path);
      const body = route.method === 'DELETE' ? undefined : {};
      const attempts: [string, Parameters<WebClient['request']>[2]][] = [
        ['no token', { body, csrf: null }],
        ['an empty token', { body, csrf: '', headers: { 'x-csrf-token': '' } }],
        ["another session's token", { body, csrf: viewer.csrfToken! }],
        ['a token of the right length', { body, csrf: randomBytes(32).toString('base64url') }],
        ['a cross-site fetch', { body, headers: { 'sec-fetch-site': 'cross-site' } }],
        ['a same-site fetch', { body, headers: { 'sec-fetch-site': 'same-site' } }],
        ['a foreign origin', { body, headers: { origin: 'https://evil.example' } }],
        ['an opaque origin', { body, headers: { origin: 'null' } }],
      ];
      for (const [label, options] of attempts) {
        const res = await owner.request(route.method, path, options);
        expect(res.status, `${name} with ${label}: ${res.status} ${res.text}`).toBe(403);
        expect(typeof res.body?.detail).toBe('string');
      }
    }
    // The session itself is still fine.
    expect((await owner.request('GET', '/api/session')).status).toBe(200);
  });

  it('the session cookie: HttpOnly, SameSite=Strict, Path=/, host-only, browser-session; a fresh token at every sign-in', async () => {
    const attacker = `rxs_session=${randomBytes(32).toString('base64url')}`;
    const res = await fetch(`${t.url}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: attacker },
      body: JSON.stringify({ email: users().editor.email, password: users().editor.password }),
    });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^rxs_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=Strict/i);
    expect(cookie).toMatch(/;\s*Path=\/(;|$)/i);
    expect(cookie).not.toMatch(/Domain=|Max-Age=|Expires=/i);
    expect(cookie).not.toMatch(/Secure/i); // plain http on loopback
    // Session fixation: the cookie the browser brought is not adopted.
    expect(cookie).not.toContain(attacker);
    expect((await fetch(`${t.url}/api/session`, { headers: { cookie: attacker } })).status).toBe(401);
    // The CSRF token lives in the session, never in a cookie; each session has its own.
    const body = (await res.json()) as { csrfToken: string };
    expect(cookie).not.toContain(body.csrfToken);
    const again = await signedIn(users().editor.email, users().editor.password);
    expect(again.csrfToken).not.toBe(body.csrfToken);
    expect(again.cookie).not.toBe(cookie.split(';')[0]);
    // Answers of the web API are not cached.
    expect((await owner.request('GET', '/api/session')).headers.get('cache-control')).toMatch(/no-store/);
  });

  it('Secure cookies when RXS_SECURE_COOKIES=1 or the public URL is https', async () => {
    for (const env of [{ RXS_SECURE_COOKIES: '1' }, { RXS_PUBLIC_URL: 'https://rxs.example' }] as Record<
      string,
      string
    >[]) {
      const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
      Object.assign(process.env, env);
      let secure: TestServer | undefined;
      try {
        secure = await startTestServer();
        const res = await fetch(`${secure.url}/api/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            email: secure.demo.tenant.users.owner.email,
            password: secure.demo.tenant.users.owner.password,
          }),
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('set-cookie'), JSON.stringify(env)).toMatch(/;\s*Secure/i);
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
        await secure?.close();
      }
    }
  }, 60_000);

  it('a session ends on sign-out, password change, removal of the user and expiry; a role change applies at once', async () => {
    const { accounts, storage } = t.server.app.services;
    const probe = (client: WebClient) => client.request('GET', '/api/session');

    const out = await signedIn(users().viewer.email, users().viewer.password);
    const stale = out.cookie!;
    expect((await out.request('DELETE', '/api/session')).status).toBe(204);
    expect((await fetch(`${t.url}/api/session`, { headers: { cookie: stale } })).status).toBe(401);

    const changer = await newUser('editor');
    const here = await signedIn(changer.email, changer.password);
    const elsewhere = await signedIn(changer.email, changer.password);
    const changed = await here.request('POST', '/api/account/password', {
      body: { current_password: changer.password, new_password: 'a-brand-new-password' },
    });
    expect(changed.status).toBe(204);
    expect((await probe(here)).status).toBe(200);
    expect((await probe(elsewhere)).status).toBe(401);
    expect((await webClient(t.url).signIn(changer.email, changer.password)).status).toBe(401);

    const demoted = await newUser('editor');
    const session = await signedIn(demoted.email, demoted.password);
    const record = {
      name: 'w',
      form: {},
      data: {},
      context: { knowledge_unit_topic_id: t.demo.tenant.topics.systemRequirements!.currentRevisionId },
    };
    expect((await session.request('POST', '/api/records', { body: record })).status).toBe(201);
    await accounts.setRole(t.demo.tenant.id, demoted.id, 'viewer');
    expect((await session.request('POST', '/api/records', { body: record })).status).toBe(403);
    expect((await probe(session)).body.user.role).toBe('viewer');

    const removed = await newUser('admin');
    const gone = await signedIn(removed.email, removed.password);
    await accounts.deleteUser(t.demo.tenant.id, removed.id);
    expect((await probe(gone)).status).toBe(401);

    const expiring = await newUser('viewer');
    const old = await signedIn(expiring.email, expiring.password);
    await storage.db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('user_id', '=', expiring.id)
      .execute();
    expect((await probe(old)).status).toBe(401);
  });

  it('sign-in guessing is slowed per e-mail: 429 with a growing Retry-After, even for the right password', async () => {
    const target = await newUser('viewer');
    const client = webClient(t.url);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await client.signIn(` ${target.email.toUpperCase()} `, `wrong-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const locked = await client.signIn(target.email, target.password);
    expect(locked.status).toBe(429);
    const first = Number(locked.headers.get('retry-after'));
    expect(first).toBeGreaterThan(0);
    // Throttled answers are quick: no password hashing for them.
    const started = performance.now();
    for (let i = 0; i < 20; i++)
      expect((await client.signIn(target.email, 'still guessing')).status).toBe(429);
    expect((performance.now() - started) / 20).toBeLessThan(50);
    // After the wait, one more failure doubles it.
    await new Promise((r) => setTimeout(r, first * 1000 + 100));
    expect((await client.signIn(target.email, 'wrong-again')).status).toBe(401);
    const second = await client.signIn(target.email, target.password);
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(first);
  }, 30_000);

  it('guessing the current password in Settings is slowed like sign-in, and sign-in is then slowed too', async () => {
    const target = await newUser('editor');
    const session = await signedIn(target.email, target.password);
    const change = (current: string) =>
      session.request('POST', '/api/account/password', {
        body: { current_password: current, new_password: 'another-new-password' },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await change(`wrong-guess-${i}`)).status);
    expect(statuses).toEqual([422, 422, 422, 422, 422]);
    const locked = await change(target.password);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    // One budget per e-mail: the guesses made through Settings count for sign-in too.
    expect((await webClient(t.url).signIn(target.email, target.password)).status).toBe(429);
  });

  it('sign-in answers reveal nothing about which e-mail addresses exist', async () => {
    const known = await newUser('viewer');
    const timed = async (email: string) => {
      const started = performance.now();
      const res = await webClient(t.url).signIn(email, 'not-the-password');
      return { res, ms: performance.now() - started };
    };
    const a = await timed(known.email);
    const b = await timed(`nobody-${randomBytes(4).toString('hex')}@demo.rxs.local`);
    expect(a.res.status).toBe(401);
    expect(b.res.status).toBe(401);
    expect(a.res.text).toBe(b.res.text);
    // Each address gets 4 tries (under the throttle's 5), alternating.
    const existing: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 4; i++) {
      const other = await newUser('viewer');
      existing.push((await timed(other.email)).ms);
      unknown.push((await timed(`ghost-${i}-${randomBytes(4).toString('hex')}@demo.rxs.local`)).ms);
    }
    const [m1, m2] = [median(existing), median(unknown)];
    expect(Math.abs(m1 - m2), `existing ${m1} ms, unknown ${m2} ms`).toBeLessThan(
      Math.max(15, 0.5 * Math.max(m1, m2)),
    );
  }, 30_000);

  it('every id of another tenant, in every web route, answers as an id that never existed', async () => {
    const { accounts } = t.server.app.services;
    const other = t.demo.otherTenant;
    const risks = other.topics.riskRegister!;
    const theirKeys = await accounts.listApiKeys(other.id, { includeRevoked: true });
    const theirUsers = await accounts.listUsers(other.id);
    const batch = await t.api('POST', '/traces/batch/list', {
      key: other.users.owner.apiKey,
      body: { nodes: risks.recordIds.map((id) => ({ node_id: id, node_type: 'Record', version: '1' })) },
    });
    const theirTraces = [
      ...new Set(
        Object.values(batch.body.results as Record<string, { edges: { _id: string }[] }>).flatMap((r) =>
          r.edges.map((e) => e._id),
        ),
      ),
    ];
    const idsFor = (path: string): string[] => {
      if (path.startsWith('/api/keys')) return theirKeys.map((k) => k.id);
      if (path.startsWith('/api/users')) return theirUsers.map((u) => u.id);
      if (path.startsWith('/api/traces')) return theirTraces;
      if (path.startsWith('/api/records')) return risks.recordIds;
      return [risks.currentRevisionId, risks.historyId];
    };
    const shape = (res: WebResponse, id: string) => ({
      status: res.status,
      text: res.text
        .split(id)
        .join('<ID>')
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<TIME>'),
    });
    const problems: string[] = [];
    let compared = 0;
    const before = JSON.stringify(
      await Promise.all(
        risks.recordIds.map((id) =>
          t.api('GET', `/records/${id}`, { key: other.users.owner.apiKey }).then((r) => r.body),
        ),
      ),
    );
    for (const route of routes.filter((r) => r.path.includes(':id'))) {
      const fresh = () =>
        route.path.startsWith('/api/keys')
          ? randomBytes(8).toString('hex')
          : route.path.startsWith('/api/users')
            ? randomUUID()
            : randomBytes(12).toString('hex');
      for (const id of idsFor(route.path)) {
        const unknown = fresh();
        const body = route.method === 'DELETE' ? undefined : route.method === 'GET' ? undefined : {};
        const theirs = await owner.request(route.method, concrete(route.path, id), { body });
        const never = await owner.request(route.method, concrete(route.path, unknown), { body });
        compared++;
        const [x, y] = [shape(theirs, id), shape(never, unknown)];
        if (JSON.stringify(x) !== JSON.stringify(y))
          problems.push(
            `${route.method} ${route.path} with their ${id}: ${JSON.stringify(x)} vs ${JSON.stringify(y)}`,
          );
      }
    }
    // Searches, lists and the export download show nothing of theirs.
    const lists = [
      await owner.request('GET', '/api/records/search?q=RISK'),
      await owner.request('GET', '/api/topics?q=Risk'),
      await owner.request('GET', '/api/users'),
      await owner.request('GET', '/api/keys?include_revoked=true'),
    ];
    for (const res of lists) {
      for (const id of [
        ...risks.recordIds,
        risks.currentRevisionId,
        risks.historyId,
        ...theirUsers.map((u) => u.id),
        ...theirKeys.map((k) => k.id),
      ])
        if (res.text.includes(id)) problems.push(`a listing shows their ${id}`);
      if (/RISK-1|Risk Register|owner@other/.test(res.text))
        problems.push(`a listing shows their data: ${res.text.slice(0, 200)}`);
    }
    const download = await owner.request(
      'GET',
      `/api/export?revisions=${risks.currentRevisionId}&format=json`,
    );
    const downloadNever = await owner.request(
      'GET',
      `/api/export?revisions=${randomBytes(12).toString('hex')}&format=json`,
    );
    expect(download.status).toBe(downloadNever.status);
    expect(download.text).not.toContain('RISK-1');
    expect(problems, problems.join('\n')).toEqual([]);
    expect(compared).toBeGreaterThan(10);
    const after = JSON.stringify(
      await Promise.all(
        risks.recordIds.map((id) =>
          t.api('GET', `/records/${id}`, { key: other.users.owner.apiKey }).then((r) => r.body),
        ),
      ),
    );
    expect(after).toBe(before);
  }, 60_000);

  it('password spraying from one address is slowed too (many e-mails, one password each)', async () => {
    // A server of its own: this floods the throttle's count for the loopback address.
    const sprayed = await startTestServer();
    try {
      const client = webClient(sprayed.url);
      const statuses: number[] = [];
      for (let i = 0; i < 60; i++) {
        const res = await client.signIn(
          `spray-${i}-${randomBytes(3).toString('hex')}@demo.rxs.local`,
          'Winter2024!',
        );
        statuses.push(res.status);
        if (res.status === 429) break;
      }
      expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(50);
      expect(statuses[statuses.length - 1]).toBe(429);
    } finally {
      await sprayed.close();
    }
  }, 60_000);
});
