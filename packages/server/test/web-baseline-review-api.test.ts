import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BaselineSignerChoices, BaselineView } from '@rxs/web-api';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/**
 * Baseline review in the web app's API: a proposal made with signers, signed and refused by the
 * signers' sessions with their password again, through the same service as `/baselines/...` of
 * the API. Turned-down decisions record nothing but the security log; CSRF and tenants hold.
 */
describe('web app API: baseline review and release', () => {
  let t: TestServer;
  let owner: WebClient;
  let editor: WebClient;
  let viewer: WebClient;
  let other: WebClient;
  let revision: string;
  const users = () => t.demo.tenant.users;

  const propose = async (name: string, signers: { user: string; meaning?: string }[]) => {
    const res = await owner.request<BaselineView>('POST', '/api/baselines', {
      body: { name, knowledge_topic_revision_ids: [revision], signers },
    });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  const baseline = async (id: string) => {
    const res = await owner.request<BaselineView>('GET', `/api/baselines/${id}`);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const securityLog = () => t.server.app.services.accounts.audit.list(t.demo.tenant.id, { limit: 500 });

  beforeAll(async () => {
    t = await startTestServer();
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    [owner, editor, viewer, other] = [0, 1, 2, 3].map(() => webClient(t.url)) as WebClient[];
    expect((await owner!.signIn(users().owner.email, users().owner.password)).status).toBe(200);
    expect((await editor!.signIn(users().editor.email, users().editor.password)).status).toBe(200);
    expect((await viewer!.signIn(users().viewer.email, users().viewer.password)).status).toBe(200);
    const foreign = t.demo.otherTenant.users.owner;
    expect((await other!.signIn(foreign.email, foreign.password)).status).toBe(200);
  });
  afterAll(() => t.close());

  it('offers the tenant’s users as signers, saying who may approve, to those who may create baselines', async () => {
    const res = await owner.request<BaselineSignerChoices>('GET', '/api/baselines/signers');
    expect(res.status, res.text).toBe(200);
    const byEmail = new Map(res.body.users.map((u) => [u.email, u]));
    expect(byEmail.get(users().owner.email)).toMatchObject({ role: 'owner', mayApprove: true });
    expect(byEmail.get(users().editor.email)).toMatchObject({ role: 'editor', mayApprove: false });
    expect(res.text).not.toContain(t.demo.otherTenant.users.owner.email);
    expect((await viewer.request('GET', '/api/baselines/signers')).status).toBe(403);
  });

  it('shows a plain baseline as released at once, without signers', async () => {
    const res = await owner.request<BaselineView>('POST', '/api/baselines', {
      body: { name: 'web-plain', knowledge_topic_revision_ids: [revision] },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'released', signers: [], supersedes: null });
    expect(res.body.releasedAt).toBeTruthy();
  });

  it('proposes with two signers, shows each one’s state, and releases at the last signature', async () => {
    const proposed = await propose('web-v1', [
      { user: users().owner.email, meaning: 'approved' },
      { user: users().editor.email, meaning: 'reviewed' },
    ]);
    expect(proposed).toMatchObject({ status: 'proposed', releasedAt: null });
    expect(proposed.signers.map((s) => [s.email, s.meaning, s.state])).toEqual([
      [users().owner.email, 'approved', 'waiting'],
      [users().editor.email, 'reviewed', 'waiting'],
    ]);

    const signed = await editor.request<BaselineView>('POST', `/api/baselines/${proposed.id}/signatures`, {
      body: { meaning: 'reviewed', password: users().editor.password, reason: 'review minutes 12' },
    });
    expect(signed.status, signed.text).toBe(201);
    expect(signed.body.status).toBe('proposed');
    expect(signed.body.signers[1]).toMatchObject({ state: 'signed', reason: 'review minutes 12' });
    expect(signed.body.signers[1]!.at).toBeTruthy();
    expect(signed.body.signers[0]!.state).toBe('waiting');

    const released = await owner.request<BaselineView>('POST', `/api/baselines/${proposed.id}/signatures`, {
      body: { meaning: 'approved', password: users().owner.password },
    });
    expect(released.status, released.text).toBe(201);
    expect(released.body.status).toBe('released');
    expect(released.body.releasedAt).toBe(released.body.signers[0]!.at);

    // The same service as the API: its history has the web's steps, via the web app.
    const history = await t.api('GET', `/baselines/${proposed.id}/history`);
    expect(history.body.map((e: { action: string }) => e.action)).toEqual([
      'proposed',
      'signed',
      'signed',
      'released',
    ]);
    const again = await editor.request('POST', `/api/baselines/${proposed.id}/signatures`, {
      body: { meaning: 'reviewed', password: users().editor.password },
    });
    expect(again.status, again.text).toBe(409);
  });

  it('refuses with a reason, which ends the proposal, and names the refused one in a superseding proposal', async () => {
    const proposed = await propose('web-v2', [
      { user: users().owner.email },
      { user: users().editor.email, meaning: 'reviewed' },
    ]);
    const noReason = await editor.request('POST', `/api/baselines/${proposed.id}/refusals`, {
      body: { reason: '  ', password: users().editor.password },
    });
    expect(noReason.status, noReason.text).toBe(422);
    expect(noReason.body.detail[0].loc).toEqual(['body', 'reason']);

    const refused = await editor.request<BaselineView>('POST', `/api/baselines/${proposed.id}/refusals`, {
      body: { reason: 'test evidence missing', password: users().editor.password },
    });
    expect(refused.status, refused.text).toBe(201);
    expect(refused.body).toMatchObject({ status: 'refused', releasedAt: null });
    expect(refused.body.signers[1]).toMatchObject({ state: 'refused', reason: 'test evidence missing' });

    const closed = await owner.request('POST', `/api/baselines/${proposed.id}/signatures`, {
      body: { meaning: 'approved', password: users().owner.password },
    });
    expect(closed.status, closed.text).toBe(409);
    expect(closed.body.detail).toMatch(/refused/);

    const next = await owner.request<BaselineView>('POST', '/api/baselines', {
      body: {
        name: 'web-v2-2',
        knowledge_topic_revision_ids: [revision],
        signers: [{ user: users().owner.email }],
        supersedes: proposed.id,
      },
    });
    expect(next.status, next.text).toBe(201);
    expect(next.body.supersedes).toEqual({ id: proposed.id, name: 'web-v2' });
  });

  it('turns down a wrong password, recording nothing but the security log', async () => {
    const proposed = await propose('web-v3', [{ user: users().editor.email, meaning: 'reviewed' }]);
    const wrong = await editor.request('POST', `/api/baselines/${proposed.id}/signatures`, {
      body: { meaning: 'reviewed', password: 'not the password' },
    });
    expect(wrong.status, wrong.text).toBe(403);
    expect(wrong.body.detail).toMatch(/password is wrong/);
    expect((await baseline(proposed.id)).signers[0]!.state).toBe('waiting');
    const logged = (await securityLog()).filter((e) => e.action === 'baseline-signature-refused');
    expect(logged.some((e) => e.detail.includes(proposed.id) && e.detail.includes('password'))).toBe(true);
  });

  it('makes a signer who keeps guessing wait, with a 429 and its Retry-After', async () => {
    const guesser = {
      email: 'web-guesser@example.com',
      password: 'a long guesser password 1',
      role: 'admin',
    };
    expect((await owner.request('POST', '/api/users', { body: guesser })).status).toBe(201);
    const session = webClient(t.url);
    expect((await session.signIn(guesser.email, guesser.password)).status).toBe(200);
    const proposed = await propose('web-guessing', [{ user: guesser.email }]);
    const path = `/api/baselines/${proposed.id}/signatures`;
    let answer = await session.request('POST', path, { body: { meaning: 'approved', password: 'guess' } });
    for (let i = 0; i < 10 && answer.status === 403; i++) {
      answer = await session.request('POST', path, { body: { meaning: 'approved', password: `guess-${i}` } });
    }
    expect(answer.status, answer.text).toBe(429);
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(answer.body.detail).toMatch(/Try again in \d+ seconds/);
    const right = await session.request('POST', path, {
      body: { meaning: 'approved', password: guesser.password },
    });
    expect(right.status, right.text).toBe(429);
    expect((await baseline(proposed.id)).status).toBe('proposed');
  });

  it('turns down one who was not asked to sign, whatever their password', async () => {
    const proposed = await propose('web-v4', [{ user: users().owner.email }]);
    const res = await viewer.request('POST', `/api/baselines/${proposed.id}/signatures`, {
      body: { meaning: 'reviewed', password: users().viewer.password },
    });
    expect(res.status, res.text).toBe(403);
    const refusal = await viewer.request('POST', `/api/baselines/${proposed.id}/refusals`, {
      body: { reason: 'no', password: users().viewer.password },
    });
    expect(refusal.status, refusal.text).toBe(403);
    expect((await baseline(proposed.id)).status).toBe('proposed');
  });

  it('needs the CSRF token to sign or refuse', async () => {
    const proposed = await propose('web-v5', [{ user: users().editor.email, meaning: 'reviewed' }]);
    for (const [path, body] of [
      ['signatures', { meaning: 'reviewed', password: users().editor.password }],
      ['refusals', { reason: 'no', password: users().editor.password }],
    ] as const) {
      const res = await editor.request('POST', `/api/baselines/${proposed.id}/${path}`, { body, csrf: null });
      expect(res.status, res.text).toBe(403);
      expect(res.body.detail).toMatch(/CSRF/);
    }
    expect((await baseline(proposed.id)).signers[0]!.state).toBe('waiting');
  });

  it('keeps tenants apart: another tenant neither sees nor decides on the baseline', async () => {
    const proposed = await propose('web-v6', [{ user: users().owner.email }]);
    expect((await other.request('GET', `/api/baselines/${proposed.id}`)).status).toBe(404);
    const sign = await other.request('POST', `/api/baselines/${proposed.id}/signatures`, {
      body: { meaning: 'approved', password: t.demo.otherTenant.users.owner.password },
    });
    expect(sign.status, sign.text).toBe(404);
    const refuse = await other.request('POST', `/api/baselines/${proposed.id}/refusals`, {
      body: { reason: 'no', password: t.demo.otherTenant.users.owner.password },
    });
    expect(refuse.status, refuse.text).toBe(404);
    const list = await other.request('GET', '/api/baselines');
    expect(list.text).not.toContain(proposed.id);
    // Nor may a proposal ask another tenant's user to sign.
    const foreignSigner = await owner.request('POST', '/api/baselines', {
      body: {
        name: 'web-v7',
        knowledge_topic_revision_ids: [revision],
        signers: [{ user: t.demo.otherTenant.users.owner.email }],
      },
    });
    expect(foreignSigner.status, foreignSigner.text).toBe(422);
    expect((await baseline(proposed.id)).status).toBe('proposed');
  });
});
