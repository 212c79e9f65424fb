import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/** The web app's JSON API: sessions, CSRF, keys, users, topics, records, traces, export. */
describe('web app API', () => {
  let t: TestServer;
  let owner: WebClient;
  let editor: WebClient;
  let viewer: WebClient;
  const users = () => t.demo.tenant.users;
  const requirements = () => t.demo.tenant.topics.systemRequirements!;

  beforeAll(async () => {
    t = await startTestServer();
    owner = webClient(t.url);
    editor = webClient(t.url);
    viewer = webClient(t.url);
    expect((await owner.signIn(users().owner.email, users().owner.password)).status).toBe(200);
    expect((await editor.signIn(users().editor.email, users().editor.password)).status).toBe(200);
    expect((await viewer.signIn(users().viewer.email, users().viewer.password)).status).toBe(200);
  });
  afterAll(() => t.close());

  describe('sessions', () => {
    it('signs in with e-mail and password into an httpOnly, SameSite=Strict cookie (not Secure on plain http)', async () => {
      const client = webClient(t.url);
      const response = await client.signIn(users().editor.email.toUpperCase(), users().editor.password);
      expect(response.status).toBe(200);
      const cookie = response.headers.get('set-cookie')!;
      expect(cookie).toMatch(/^rxs_session=[A-Za-z0-9_-]{43};/);
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Strict/i);
      expect(cookie).not.toMatch(/Secure/i);
      expect(response.body.user).toMatchObject({ email: users().editor.email, role: 'editor' });
      expect(response.body.permissions).toContain('records:write');
      expect(response.body.permissions).not.toContain('kt:approve');
      expect(response.body.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const me = await client.request('GET', '/api/session');
      expect(me.status).toBe(200);
      expect(me.body.user.tenantName).toBe(t.demo.tenant.name);
    });

    it('refuses a wrong password or an unknown user alike, and stores only a hash of the session token', async () => {
      const client = webClient(t.url);
      const wrong = await client.signIn(users().viewer.email, 'not-the-password');
      const unknown = await client.signIn('nobody@demo.rxs.local', 'whatever-password');
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      expect(wrong.body.detail).toBe(unknown.body.detail);
      expect(client.cookie).toBeUndefined();

      const token = owner.cookie!.split('=')[1]!;
      const rows = await t.server.storage.db.selectFrom('sessions').select('id').execute();
      expect(rows.map((r) => r.id)).not.toContain(token);
    });

    it('answers 401 without a session and ends the session on sign-out', async () => {
      expect((await webClient(t.url).request('GET', '/api/topics')).status).toBe(401);
      const client = webClient(t.url);
      await client.signIn(users().viewer.email, users().viewer.password);
      const stale = client.cookie!;
      const out = await client.request('DELETE', '/api/session');
      expect(out.status).toBe(204);
      expect(out.headers.get('set-cookie')).toMatch(/rxs_session=;/);
      const after = await fetch(`${t.url}/api/session`, { headers: { cookie: stale } });
      expect(after.status).toBe(401);
    });

    it('slows down password guessing: after 5 failures for an e-mail, 429 with Retry-After', async () => {
      const { accounts } = t.server.app.services;
      await accounts.createUser(t.demo.tenant.id, {
        email: 'guessed@demo.rxs.local',
        role: 'viewer',
        password: 'the-right-password',
      });
      const client = webClient(t.url);
      for (let i = 0; i < 5; i++) {
        expect((await client.signIn('guessed@demo.rxs.local', `guess-${i}`)).status).toBe(401);
      }
      const blocked = await client.signIn('guessed@demo.rxs.local', 'the-right-password');
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(blocked.body.detail).toMatch(/Try again in \d+ seconds/);
      // Other accounts are not locked by it.
      expect((await webClient(t.url).signIn(users().viewer.email, users().viewer.password)).status).toBe(200);
    });
  });

  describe('CSRF protection', () => {
    it('refuses every state-changing request without the session token in X-CSRF-Token', async () => {
      const missing = await owner.request('POST', '/api/keys', { body: { name: 'x' }, csrf: null });
      expect(missing.status).toBe(403);
      expect(missing.body.detail).toMatch(/CSRF/);
      const wrong = await owner.request('POST', '/api/keys', {
        body: { name: 'x' },
        csrf: editor.csrfToken!,
      });
      expect(wrong.status).toBe(403);
      const deleted = await owner.request('DELETE', `/api/records/${requirements().recordIds[0]}`, {
        csrf: null,
      });
      expect(deleted.status).toBe(403);
      const signOut = await owner.request('DELETE', '/api/session', { csrf: null });
      expect(signOut.status).toBe(403);
      expect((await owner.request('GET', '/api/session')).status).toBe(200);
    });

    it('refuses cross-site requests, sign-in included', async () => {
      const foreign = await owner.request('POST', '/api/keys', {
        body: { name: 'x' },
        headers: { origin: 'https://evil.example' },
      });
      expect(foreign.status).toBe(403);
      const crossSite = await webClient(t.url).request('POST', '/api/session', {
        body: { email: users().owner.email, password: users().owner.password },
        headers: { 'sec-fetch-site': 'cross-site' },
      });
      expect(crossSite.status).toBe(403);
      const sameOrigin = await owner.request('POST', '/api/keys', {
        body: { name: 'same origin' },
        headers: { origin: t.url },
      });
      expect(sameOrigin.status).toBe(201);
    });
  });

  describe('API keys in Settings', () => {
    it('creates a key shown once, which then works with X-API-Key, and lists it with its last use', async () => {
      const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
      const created = await owner.request('POST', '/api/keys', {
        body: { name: 'CI export', expires_at: expires },
      });
      expect(created.status).toBe(201);
      expect(created.body.key).toMatch(/^rxs_[0-9a-f]{16}_/);
      expect(created.body.expires_at).toBe(expires);
      const rev = requirements().currentRevisionId;
      const records = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${rev}`, {
        key: created.body.key,
      });
      expect(records.status).toBe(200);
      expect(records.body).toHaveLength(requirements().recordIds.length);

      const listed = await owner.request('GET', '/api/keys');
      const row = listed.body.find((k: { id: string }) => k.id === created.body.id);
      expect(row).toMatchObject({ name: 'CI export', expires_at: expires, revoked_at: null });
      expect(row.last_used_at).not.toBeNull();
      expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    });

    it('revokes and regenerates keys', async () => {
      const created = (await owner.request('POST', '/api/keys', { body: { name: 'to regenerate' } })).body;
      const fresh = await owner.request('POST', `/api/keys/${created.id}/regenerate`);
      expect(fresh.status).toBe(201);
      expect(fresh.body.name).toBe('to regenerate');
      expect((await t.api('GET', '/kt/', { key: created.key })).status).toBe(401);
      expect((await t.api('GET', '/kt/', { key: fresh.body.key })).status).toBe(200);

      const revoked = await owner.request('DELETE', `/api/keys/${fresh.body.id}`);
      expect(revoked.status).toBe(200);
      expect(revoked.body.revoked_at).not.toBeNull();
      const denied = await t.api('GET', '/kt/', { key: fresh.body.key });
      expect(denied.status).toBe(401);
      expect(denied.body.detail).toMatch(/revoked/);
      const withRevoked = await owner.request('GET', '/api/keys?include_revoked=true');
      expect(withRevoked.body.map((k: { id: string }) => k.id)).toContain(fresh.body.id);
      expect((await owner.request('GET', '/api/keys')).body.map((k: { id: string }) => k.id)).not.toContain(
        fresh.body.id,
      );
    });

    it('refuses an expiry in the past or a key without a name', async () => {
      const past = await owner.request('POST', '/api/keys', {
        body: { name: 'old', expires_at: '2001-01-01T00:00:00Z' },
      });
      expect(past.status).toBe(422);
      expect(past.body.detail[0].loc).toEqual(['body', 'expires_at']);
      const unnamed = await owner.request('POST', '/api/keys', { body: { name: '' } });
      expect(unnamed.status).toBe(422);
      expect(unnamed.body.detail[0].loc).toEqual(['body', 'name']);
    });

    it('lets editors manage only their own keys, and viewers create none', async () => {
      const own = await editor.request('POST', '/api/keys', { body: { name: 'mine' } });
      expect(own.status).toBe(201);
      const ownerUserId = (await owner.request('GET', '/api/session')).body.user.id;
      const forOther = await editor.request('POST', '/api/keys', {
        body: { name: 'x', user_id: ownerUserId },
      });
      expect(forOther.status).toBe(403);
      const listed = await editor.request('GET', '/api/keys');
      expect(new Set(listed.body.map((k: { user_email: string }) => k.user_email))).toEqual(
        new Set([users().editor.email]),
      );

      const byViewer = await viewer.request('POST', '/api/keys', { body: { name: 'viewer key' } });
      expect(byViewer.status).toBe(403);
      expect(byViewer.body.detail).toMatch(/may not create API keys/);
      expect((await viewer.request('GET', '/api/session')).body.canCreateOwnKeys).toBe(false);

      // An owner issues the viewer's key; the viewer may see and revoke it.
      const viewerId = (await viewer.request('GET', '/api/session')).body.user.id;
      const issued = await owner.request('POST', '/api/keys', {
        body: { name: 'for viewer', user_id: viewerId },
      });
      expect(issued.status).toBe(201);
      expect((await t.api('GET', '/kt/', { key: issued.body.key })).status).toBe(200);
      const write = await t.api('POST', '/records/', {
        key: issued.body.key,
        body: { name: 'x', form: {}, context: { knowledge_unit_topic_id: requirements().currentRevisionId } },
      });
      expect(write.status).toBe(403);
      expect((await viewer.request('POST', `/api/keys/${issued.body.id}/regenerate`)).status).toBe(403);
      expect((await viewer.request('DELETE', `/api/keys/${issued.body.id}`)).status).toBe(200);
    });
  });

  describe('users and roles', () => {
    it('lets owners and admins add users, change roles and remove users; others are refused', async () => {
      expect((await editor.request('GET', '/api/users')).status).toBe(403);
      expect((await viewer.request('POST', '/api/users', { body: {} })).status).toBe(403);

      const added = await owner.request('POST', '/api/users', {
        body: { email: 'Admin2@demo.rxs.local', role: 'admin', password: 'long-enough-password' },
      });
      expect(added.status).toBe(201);
      expect(added.body).toMatchObject({ email: 'admin2@demo.rxs.local', role: 'admin' });
      const admin = webClient(t.url);
      expect((await admin.signIn('admin2@demo.rxs.local', 'long-enough-password')).status).toBe(200);

      // An admin may not make owners, nor touch one.
      const promote = await admin.request('POST', '/api/users', {
        body: { email: 'boss@demo.rxs.local', role: 'owner', password: 'long-enough-password' },
      });
      expect(promote.status).toBe(403);
      const ownerId = (await owner.request('GET', '/api/session')).body.user.id;
      expect(
        (await admin.request('PATCH', `/api/users/${ownerId}`, { body: { role: 'viewer' } })).status,
      ).toBe(403);
      const self = (await admin.request('GET', '/api/session')).body.user.id;
      expect((await admin.request('PATCH', `/api/users/${self}`, { body: { role: 'owner' } })).status).toBe(
        403,
      );

      const weak = await admin.request('POST', '/api/users', {
        body: { email: 'weak@demo.rxs.local', role: 'viewer', password: 'short' },
      });
      expect(weak.status).toBe(422);
      expect(weak.body.detail[0].loc).toEqual(['body', 'password']);

      const demoted = await owner.request('PATCH', `/api/users/${added.body.id}`, {
        body: { role: 'viewer' },
      });
      expect(demoted.body.role).toBe('viewer');
      // The role applies to the live session at once.
      expect((await admin.request('GET', '/api/users')).status).toBe(403);
      expect((await owner.request('DELETE', `/api/users/${added.body.id}`)).status).toBe(204);
      expect((await admin.request('GET', '/api/session')).status).toBe(401);
    });

    it('changes the own password and signs out the other sessions', async () => {
      const { accounts } = t.server.app.services;
      await accounts.createUser(t.demo.tenant.id, {
        email: 'changer@demo.rxs.local',
        role: 'editor',
        password: 'first-password-1',
      });
      const here = webClient(t.url);
      const elsewhere = webClient(t.url);
      await here.signIn('changer@demo.rxs.local', 'first-password-1');
      await elsewhere.signIn('changer@demo.rxs.local', 'first-password-1');
      const wrong = await here.request('POST', '/api/account/password', {
        body: { current_password: 'nope', new_password: 'second-password-2' },
      });
      expect(wrong.status).toBe(422);
      const changed = await here.request('POST', '/api/account/password', {
        body: { current_password: 'first-password-1', new_password: 'second-password-2' },
      });
      expect(changed.status).toBe(204);
      expect((await here.request('GET', '/api/session')).status).toBe(200);
      expect((await elsewhere.request('GET', '/api/session')).status).toBe(401);
      expect((await webClient(t.url).signIn('changer@demo.rxs.local', 'second-password-2')).status).toBe(200);
    });
  });

  describe('knowledge topics, records and traces', () => {
    const schema = {
      type: 'default',
      components: [
        {
          type: 'textfield',
          key: 'textfield_h1',
          label: 'Hazard',
          properties: { 'service-key': 'hazard' },
          validate: { required: true },
        },
        {
          type: 'select',
          key: 'select_s1',
          label: 'Severity',
          values: [
            { label: 'Low', value: '1' },
            { label: 'High', value: '3' },
          ],
        },
      ],
    };

    it('lists topics with their current revision and shows both ids of a topic', async () => {
      const list = await viewer.request('GET', '/api/topics');
      expect(list.status).toBe(200);
      const topic = list.body.items.find(
        (i: { historyId: string }) => i.historyId === requirements().historyId,
      );
      expect(topic).toMatchObject({
        currentRevisionId: requirements().currentRevisionId,
        recordCount: requirements().recordIds.length,
        draftRevisionId: null,
      });
      expect(
        (await viewer.request('GET', '/api/topics?q=verif')).body.items.map((i: { name: string }) => i.name),
      ).toEqual(['Verification Tests']);
      const detail = await viewer.request('GET', `/api/topics/${requirements().historyId}`);
      expect(detail.body.historyId).toBe(requirements().historyId);
      expect(detail.body.currentRevisionId).toBe(requirements().currentRevisionId);
      expect(detail.body.revisions.map((r: { id: string }) => r.id)).toEqual([
        requirements().currentRevisionId,
        ...requirements().oldRevisionIds,
      ]);
      expect(detail.body.fields.find((f: { key: string }) => f.key === 'select_vm8x2p')).toMatchObject({
        name: 'verification_method',
        source: 'service-key',
      });
    });

    it('designs, approves and re-approves a topic; its records move to the new revision', async () => {
      const draft = await editor.request('POST', '/api/topics', {
        body: { knowledge_topic_name: 'Risks', type: 'multi_record', knowledge_topic_schema: schema },
      });
      expect(draft.status).toBe(201);
      const signature = { password: users().owner.password, meaning: 'approved' };
      const editorSignature = { password: users().editor.password, meaning: 'approved' };
      expect(
        (await editor.request('POST', `/api/revisions/${draft.body._id}/approve`, { body: editorSignature }))
          .status,
      ).toBe(403);
      const first = await owner.request('POST', `/api/revisions/${draft.body._id}/approve`, {
        body: signature,
      });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ previousRevisionId: null, recordsMoved: 0 });

      const record = await editor.request('POST', '/api/records', {
        body: {
          name: 'RISK-1',
          form: {},
          data: { textfield_h1: 'Burns', select_s1: '3' },
          context: { knowledge_unit_topic_id: draft.body._id },
        },
      });
      expect(record.status).toBe(201);

      const reopened = await editor.request('POST', `/api/revisions/${draft.body._id}/draft`);
      expect(reopened.status).toBe(201);
      const edited = await editor.request('PATCH', `/api/revisions/${reopened.body._id}`, {
        body: {
          knowledge_topic_schema: {
            ...schema,
            components: [...schema.components, { type: 'textarea', key: 'mitigation', label: 'Mitigation' }],
          },
        },
      });
      expect(edited.status).toBe(200);
      const second = await owner.request('POST', `/api/revisions/${reopened.body._id}/approve`, {
        body: signature,
      });
      expect(second.body).toMatchObject({ previousRevisionId: draft.body._id, recordsMoved: 1 });
      const detail = (await viewer.request('GET', `/api/topics/${draft.body.knowledge_topic_history_id}`))
        .body;
      expect(detail.currentRevisionId).toBe(reopened.body._id);
      expect(detail.revisions.map((r: { recordCount: number }) => r.recordCount)).toEqual([1, 0]);
      const moved = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${reopened.body._id}`);
      expect(moved.body.map((r: { _id: string }) => r._id)).toEqual([record.body._id]);
    });

    it('answers 422 with one item per problem, located at the field', async () => {
      const rev = (await owner.request('GET', '/api/topics?q=risks')).body.items[0].currentRevisionId;
      const bad = await editor.request('POST', '/api/records', {
        body: { name: '', form: {}, data: { select_s1: '9' }, context: { knowledge_unit_topic_id: rev } },
      });
      expect(bad.status).toBe(422);
      // Body shape first (the empty name); the form rules once the shape is right.
      expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(['body', 'name']);
      const invalid = await editor.request('POST', '/api/records', {
        body: {
          name: 'RISK-2',
          form: {},
          data: { select_s1: '9' },
          context: { knowledge_unit_topic_id: rev },
        },
      });
      expect(invalid.status).toBe(422);
      expect(invalid.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
        ['body', 'data', 'textfield_h1'],
        ['body', 'data', 'select_s1'],
      ]);
      expect(invalid.body.detail[0].msg).toMatch(/Hazard.*required/);
    });

    it('serves a sorted, filtered, paged table with a column per semantic name', async () => {
      const rev = requirements().currentRevisionId;
      const page = await viewer.request('GET', `/api/revisions/${rev}/records?limit=2&sort=name&dir=desc`);
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(requirements().recordIds.length);
      expect(page.body.rows).toHaveLength(2);
      expect(page.body.rows.map((r: { name: string }) => r.name)).toEqual([
        'Requirements-4',
        'Requirements-3',
      ]);
      expect(page.body.columns.map((c: { name: string }) => c.name)).toContain('verification_method');
      const filtered = await viewer.request(
        'GET',
        `/api/revisions/${rev}/records?filters=${encodeURIComponent(JSON.stringify({ Priority: 'medium' }))}`,
      );
      expect(
        filtered.body.rows.every((r: { values: Record<string, string> }) => r.values.Priority === 'Medium'),
      ).toBe(true);
      expect(filtered.body.total).toBeLessThan(filtered.body.unfilteredTotal);
      const searched = await viewer.request('GET', `/api/revisions/${rev}/records?q=footprint`);
      expect(searched.body.rows.map((r: { name: string }) => r.name)).toEqual(['Requirements-4']);
      expect((await viewer.request('GET', `/api/revisions/${rev}/records?sort=bogus`)).status).toBe(422);
    });

    it('shows, edits and deletes a record; viewers may not change it', async () => {
      const rev = requirements().currentRevisionId;
      // The table is cached per revision; every change below must show in it at once.
      const tableNames = async () =>
        (await viewer.request('GET', `/api/revisions/${rev}/records?limit=100`)).body.rows.map(
          (row: { name: string }) => row.name,
        ) as string[];
      expect(await tableNames()).not.toContain('Temp');
      const created = await editor.request('POST', '/api/records', {
        body: {
          name: 'Temp',
          form: {},
          data: { name: 'Temporary' },
          context: { knowledge_unit_topic_id: rev },
        },
      });
      const id = created.body._id;
      expect(await tableNames()).toContain('Temp');
      const detail = await viewer.request('GET', `/api/records/${id}`);
      expect(detail.body.topic).toMatchObject({ historyId: requirements().historyId, revisionId: rev });
      expect(detail.body.values.find((v: { name: string }) => v.name === 'Name').text).toBe('Temporary');
      expect(detail.body.createdBy).toBe(users().editor.email);
      expect((await viewer.request('PATCH', `/api/records/${id}`, { body: { name: 'x' } })).status).toBe(403);
      expect((await viewer.request('POST', '/api/records', { body: created.body })).status).toBe(403);
      const stale = await editor.request('PATCH', `/api/records/${id}`, {
        body: { name: 'Renamed', version: '9.0' },
      });
      expect(stale.status).toBe(409);
      const renamed = await editor.request('PATCH', `/api/records/${id}`, {
        body: { name: 'Renamed', version: created.body.version },
      });
      expect(renamed.body.name).toBe('Renamed');
      expect(await tableNames()).toEqual(expect.arrayContaining(['Renamed']));
      expect(await tableNames()).not.toContain('Temp');
      expect((await viewer.request('DELETE', `/api/records/${id}`)).status).toBe(403);
      expect((await editor.request('DELETE', `/api/records/${id}`)).status).toBe(204);
      expect((await viewer.request('GET', `/api/records/${id}`)).status).toBe(404);
      expect(await tableNames()).not.toContain('Renamed');
    });

    it('lists, adds and removes the links of a record, found by search', async () => {
      const [first, second, third] = requirements().recordIds as [string, string, string];
      const links = await viewer.request('GET', `/api/records/${second}/links`);
      expect(links.body).toContainEqual(
        expect.objectContaining({
          direction: 'outgoing',
          relationType: 'has_parent',
          node: expect.objectContaining({
            id: first,
            name: 'Requirements-1',
            historyId: requirements().historyId,
          }),
        }),
      );
      const hits = await viewer.request('GET', '/api/records/search?q=requirements-3');
      expect(hits.body.map((h: { id: string }) => h.id)).toEqual([third]);
      expect(hits.body[0].topicName).toBe('System Requirements');
      // A topic's records only, when asked: the link dialog's role searches its other topic.
      const everywhere = await viewer.request('GET', '/api/records/search?q=requirements&limit=50');
      expect(everywhere.body.length).toBeGreaterThan(1);
      const search = async (topic: string) =>
        (await viewer.request('GET', `/api/records/search?q=requirements&limit=50&topic=${topic}`)).body;
      expect(await search(requirements().historyId)).toEqual(everywhere.body);
      const otherTopic = (await viewer.request('GET', '/api/topics')).body.items.find(
        (topic: { historyId: string }) => topic.historyId !== requirements().historyId,
      );
      expect(await search(otherTopic.historyId)).toEqual([]);
      expect((await viewer.request('GET', '/api/records/search?q=e&topic=nope')).status).toBe(422);

      const body = {
        source: { node_id: third, node_type: 'Record' },
        target: { node_id: first, node_type: 'Record' },
        relation_type: 'mentions',
      };
      expect((await viewer.request('POST', '/api/traces', { body })).status).toBe(403);
      const trace = await editor.request('POST', '/api/traces', { body });
      expect(trace.status).toBe(201);
      const incoming = await viewer.request('GET', `/api/records/${first}/links`);
      expect(incoming.body).toContainEqual(
        expect.objectContaining({ traceId: trace.body._id, direction: 'incoming', relationType: 'mentions' }),
      );
      expect((await editor.request('DELETE', `/api/traces/${trace.body._id}`)).status).toBe(204);
      const after = await viewer.request('GET', `/api/records/${first}/links`);
      expect(after.body.map((l: { traceId: string }) => l.traceId)).not.toContain(trace.body._id);
    });
  });

  describe('large topics', () => {
    it('pages, sorts and filters 10 000 records without sending them all', async () => {
      const { techdoc } = t.server.app.services;
      const ownerPrincipal = (await owner.request('GET', '/api/session')).body.user;
      const principal = {
        tenantId: ownerPrincipal.tenantId,
        userId: ownerPrincipal.id,
        role: 'owner' as const,
      };
      const draft = await techdoc.create(principal, {
        knowledge_topic_name: 'Bulk',
        type: 'multi_record',
        knowledge_topic_schema: {
          components: [{ type: 'textfield', key: 'textfield_t', label: 'Title' }],
        },
      });
      const revision = await techdoc.approve(principal, draft._id);
      // Written straight into the table: the subject here is reading them, not 10 000 validations.
      const now = new Date().toISOString();
      const rows = Array.from({ length: 10_000 }, (_, i) => ({
        id: `${(0x6a000000 + i).toString(16)}0000000000000000`,
        tenant_id: principal.tenantId,
        kt_revision_id: revision._id,
        name: `BULK-${i}`,
        form: '{}',
        version: '1.0',
        data: JSON.stringify({ textfield_t: `Title ${i % 97}` }),
        read_only: 0,
        context: '{}',
        created_by: principal.userId,
        created_at: now,
        updated_by: null,
        updated_at: null,
        last_action: 'created',
      }));
      await t.server.storage.db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; i += 500) {
          await trx
            .insertInto('records')
            .values(rows.slice(i, i + 500))
            .execute();
        }
      });

      const path = `/api/revisions/${revision._id}/records`;
      let started = Date.now();
      const first = await viewer.request('GET', `${path}?limit=50&sort=field:Title&dir=desc`);
      const firstMs = Date.now() - started;
      expect(first.body).toMatchObject({ total: 10_000, unfilteredTotal: 10_000 });
      expect(first.body.rows).toHaveLength(50);
      expect(first.body.rows[0].values.Title).toBe('Title 96');
      expect(first.text.length).toBeLessThan(30_000);

      started = Date.now();
      const later = await viewer.request('GET', `${path}?offset=9950&limit=50&sort=name&q=bulk-99`);
      const laterMs = Date.now() - started;
      expect(later.body.total).toBe(111); // BULK-99 and BULK-990..999 and BULK-9900..9999
      expect(later.body.rows).toEqual([]);
      // Generous bounds for a busy CI machine; on a quiet one these take ~500 and ~30 ms.
      expect(firstMs).toBeLessThan(5_000);
      expect(laterMs).toBeLessThan(2_000);
      console.log(`10 000 records: first page ${firstMs} ms, a filtered sorted page ${laterMs} ms`);
    });
  });

  describe('export download', () => {
    it('downloads CSV with semantic-name columns and the traces, produced by the sdk writers', async () => {
      const rev = requirements().currentRevisionId;
      const response = await viewer.request('GET', `/api/export?revisions=${rev}&format=csv&traces=true`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/text\/csv/);
      expect(response.headers.get('content-disposition')).toMatch(
        /attachment; filename="rxs-system-requirements-\d{4}-\d{2}-\d{2}\.csv"/,
      );
      const [header, ...lines] = response.text
        .replace(/^\uFEFF/, '')
        .trim()
        .split(/\r?\n/);
      expect(header).toContain('verification_method');
      expect(header).toContain('links');
      expect(lines).toHaveLength(requirements().recordIds.length);
      expect(response.text).toContain('has_parent:');
    });

    it('writes XLSX, ReqIF and Sphinx-Needs JSON for several topics', async () => {
      const revs = [
        requirements().currentRevisionId,
        t.demo.tenant.topics.verificationTests!.currentRevisionId,
      ];
      const xlsx = await fetch(`${t.url}/api/export?revisions=${revs.join(',')}&format=xlsx`, {
        headers: { cookie: viewer.cookie! },
      });
      expect(xlsx.status).toBe(200);
      expect(
        Buffer.from(await xlsx.arrayBuffer())
          .subarray(0, 2)
          .toString(),
      ).toBe('PK');
      expect(xlsx.headers.get('content-disposition')).toMatch(/rxs-2-topics-/);
      const reqif = await viewer.request('GET', `/api/export?revisions=${revs.join(',')}&format=reqif`);
      expect(reqif.text).toContain('<REQ-IF');
      expect(reqif.text).toContain('Requirements-1');
      const needs = await viewer.request('GET', `/api/export?revisions=${revs[0]}&format=needs`);
      expect(needs.body.versions).toBeDefined();
    });

    it('checks every revision before writing: a history id is 404, garbage is 422', async () => {
      const history = await owner.request(
        'GET',
        `/api/export?revisions=${requirements().historyId}&format=csv`,
      );
      expect(history.status).toBe(404);
      expect(history.body.detail).toMatch(/history id/);
      expect((await owner.request('GET', '/api/export?revisions=nope&format=csv')).status).toBe(422);
      expect(
        (await owner.request('GET', `/api/export?revisions=${requirements().currentRevisionId}&format=doc`))
          .status,
      ).toBe(422);
    });
  });

  describe('tenants and the rest of the server', () => {
    it('never shows another tenant’s data', async () => {
      const other = webClient(t.url);
      await other.signIn(t.demo.otherTenant.users.owner.email, t.demo.otherTenant.users.owner.password);
      expect((await other.request('GET', `/api/topics/${requirements().historyId}`)).status).toBe(404);
      expect((await other.request('GET', `/api/records/${requirements().recordIds[0]}`)).status).toBe(404);
      expect(
        (await other.request('GET', `/api/revisions/${requirements().currentRevisionId}/records`)).status,
      ).toBe(404);
      expect((await other.request('GET', '/api/records/search?q=requirements')).body).toEqual([]);
      const names = (await other.request('GET', '/api/topics')).body.items.map(
        (i: { name: string }) => i.name,
      );
      expect(names).toEqual(['Risk Register']);
      expect(
        (await other.request('GET', '/api/keys')).body.map((k: { user_email: string }) => k.user_email),
      ).toEqual([t.demo.otherTenant.users.owner.email]);
    });

    it('serves the app for browser navigations without shadowing the services, docs or health', async () => {
      const html = { accept: 'text/html,application/xhtml+xml' };
      const app = await fetch(`${t.url}/topics/${requirements().historyId}`, { headers: html });
      expect(app.headers.get('content-type')).toMatch(/text\/html/);
      expect(app.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
      expect([200, 503]).toContain(app.status);
      for (const path of ['/kt/nothing/here', '/records/a/b', '/traces/x/y', '/api/nothing']) {
        const response = await fetch(`${t.url}${path}`, { headers: html });
        expect(response.status, path).toBe(404);
        expect((await response.json()).detail).toMatch(/Not found/);
      }
      expect((await fetch(`${t.url}/healthz`, { headers: html })).status).toBe(200);
      expect((await fetch(`${t.url}/openapi.json`, { headers: html })).headers.get('content-type')).toMatch(
        /json/,
      );
      expect((await fetch(`${t.url}/somewhere`)).status).toBe(404);
      const openapi = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
        paths: Record<string, unknown>;
      };
      expect(Object.keys(openapi.paths).filter((p) => p.startsWith('/api'))).toEqual([]);
    });
  });
});
