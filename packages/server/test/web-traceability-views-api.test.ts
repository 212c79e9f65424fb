import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SavedView, TraceabilityView } from '@rxs/web-api';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/**
 * The traceability page's saved views in the web app's API (`/api/traceability/views`): everyone
 * signed in lists their own tenant's views, editors and up save and delete them with the CSRF token,
 * another tenant neither sees nor touches them; and the page's coverage of the trace model by
 * default, or of some of its roles, each rule naming its role and each record its id and title.
 */
describe('web app API: traceability views', () => {
  let t: TestServer;
  let owner: WebClient;
  let editor: WebClient;
  let viewer: WebClient;
  let other: WebClient;
  const topics = () => t.demo.tenant.topics;

  beforeAll(async () => {
    t = await startTestServer();
    const users = t.demo.tenant.users;
    [owner, editor, viewer, other] = [0, 1, 2, 3].map(() => webClient(t.url)) as WebClient[];
    expect((await owner!.signIn(users.owner.email, users.owner.password)).status).toBe(200);
    expect((await editor!.signIn(users.editor.email, users.editor.password)).status).toBe(200);
    expect((await viewer!.signIn(users.viewer.email, users.viewer.password)).status).toBe(200);
    const foreign = t.demo.otherTenant.users.owner;
    expect((await other!.signIn(foreign.email, foreign.password)).status).toBe(200);
  });
  afterAll(() => t.close());

  it('lets editors save, replace and delete views with the CSRF token, and everyone list them', async () => {
    const body = { roles: ['verifies'] };
    const noCsrf = await editor.request('PUT', '/api/traceability/views/Tests', { body, csrf: null });
    expect(noCsrf.status).toBe(403);
    const refused = await viewer.request('PUT', '/api/traceability/views/Tests', { body });
    expect(refused.status, refused.text).toBe(403);

    const saved = await editor.request<SavedView>('PUT', '/api/traceability/views/Tests', { body });
    expect(saved.status, saved.text).toBe(201);
    expect(saved.body).toMatchObject({ name: 'Tests', roles: ['verifies'], revisions: null });
    const revisions = [
      topics().systemRequirements!.currentRevisionId,
      topics().verificationTests!.currentRevisionId,
    ];
    const replaced = await owner.request<SavedView>('PUT', '/api/traceability/views/Tests', {
      body: { revisions },
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ roles: null, revisions });
    expect(
      (
        await owner.request('PUT', '/api/traceability/views/Both', {
          body: { roles: ['verifies'], revisions },
        })
      ).status,
    ).toBe(422);
    expect((await owner.request('PUT', '/api/traceability/views/%20Padded', { body })).status).toBe(422);

    for (const client of [owner, editor, viewer]) {
      const list = await client.request<SavedView[]>('GET', '/api/traceability/views');
      expect(list.status, list.text).toBe(200);
      expect(list.body.map((view) => [view.name, view.revisions])).toEqual([['Tests', revisions]]);
    }

    expect((await viewer.request('DELETE', '/api/traceability/views/Tests')).status).toBe(403);
    expect((await editor.request('DELETE', '/api/traceability/views/Tests', { csrf: null })).status).toBe(
      403,
    );
    expect((await editor.request('DELETE', '/api/traceability/views/Tests')).status).toBe(204);
    expect((await editor.request('DELETE', '/api/traceability/views/Tests')).status).toBe(404);
    expect((await viewer.request<SavedView[]>('GET', '/api/traceability/views')).body).toEqual([]);
  });

  it('keeps tenants apart: another tenant neither lists, replaces nor deletes a view', async () => {
    expect(
      (await owner.request('PUT', '/api/traceability/views/Mine', { body: { roles: ['verifies'] } })).status,
    ).toBe(201);
    expect((await other.request<SavedView[]>('GET', '/api/traceability/views')).body).toEqual([]);
    expect((await other.request('DELETE', '/api/traceability/views/Mine')).status).toBe(404);
    const theirs = await other.request('PUT', '/api/traceability/views/Mine', { body: { roles: ['other'] } });
    expect(theirs.status, theirs.text).toBe(201);
    const mine = await viewer.request<SavedView[]>('GET', '/api/traceability/views');
    expect(mine.body.map((view) => view.roles)).toEqual([['verifies']]);
    expect((await webClient(t.url).request('GET', '/api/traceability/views')).status).toBe(401);
  });

  it('covers the whole trace model by default, or the roles named, each rule naming its role', async () => {
    const whole = await viewer.request<TraceabilityView>('GET', '/api/traceability');
    expect(whole.status, whole.text).toBe(200);
    expect(whole.body.ruleRoles).toContain('verifies');
    expect(whole.body.ruleRoles).not.toContain(null);
    const some = await viewer.request<TraceabilityView>('GET', '/api/traceability?roles=verifies');
    expect(some.status, some.text).toBe(200);
    expect(some.body.ruleRoles).toEqual(['verifies']);
    const rule = some.body.report.rules[0]!;
    expect(rule.rule.linkType).toBe('verified by');
    const requirements = some.body.records[rule.rule.source.revisionId]!;
    for (const readableId of [...rule.uncovered, ...rule.links.map(([source]) => source)])
      expect(requirements[readableId]?.id).toMatch(/^[0-9a-f]{24}$/);

    const unknown = await viewer.request('GET', '/api/traceability?roles=no-such-role');
    expect(unknown.status).toBe(422);
    expect(unknown.text).toContain('no-such-role');
    const none = await other.request<TraceabilityView>('GET', '/api/traceability');
    expect(none.status, none.text).toBe(200);
    expect(none.body.report.rules).toEqual([]);
  });
});
