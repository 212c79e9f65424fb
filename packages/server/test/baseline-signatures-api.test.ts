import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

/** The detail of an error answer as one text: the sentence, or the 422 problems' messages. */
const detailText = (detail: string | { msg: string }[]) =>
  typeof detail === 'string' ? detail : detail.map((d) => d.msg).join('; ');

interface Signer {
  id: string;
  email: string;
  password: string;
  key: string;
}

describe('baseline review and release: propose, sign, refuse, supersede', () => {
  let t: TestServer;
  let revision: string;
  let owner: Signer;
  let editor: Signer;
  let viewer: Signer;
  let admin: Signer;

  /** A user of the demo tenant made for these tests, with a password and an API key. */
  async function addUser(email: string, role: string): Promise<Signer> {
    const { accounts } = t.server.app.services;
    const password = `pw-${email}-0123456789`;
    const user = await accounts.createUser(t.demo.tenant.id, { email, role, password });
    const key = await accounts.createApiKey(t.demo.tenant.id, { userId: user.id, name: 'tests' });
    return { id: user.id, email: user.email, password, key: key.key };
  }

  async function demoUser(role: 'owner' | 'editor' | 'viewer'): Promise<Signer> {
    const { email, password, apiKey } = t.demo.tenant.users[role];
    const user = await t.server.app.services.accounts.findUserByEmail(email, t.demo.tenant.id);
    return { id: user!.id, email, password, key: apiKey };
  }

  const propose = (name: string, signers: unknown, extra: Record<string, unknown> = {}) =>
    t.api('POST', '/baselines/', {
      body: { name, knowledge_topic_revision_ids: [revision], signers, ...extra },
    });
  const sign = (id: string, who: Signer, body: Record<string, unknown>) =>
    t.api('POST', `/baselines/${id}/signatures`, { key: who.key, body });
  const refuse = (id: string, who: Signer, body: Record<string, unknown>) =>
    t.api('POST', `/baselines/${id}/refusals`, { key: who.key, body });
  const history = async (id: string) => {
    const res = await t.api('GET', `/baselines/${id}/history`);
    expect(res.status, res.text).toBe(200);
    return res.body as { n: number; action: string; user_email: string; meaning: string | null }[];
  };
  const securityLog = () => t.server.app.services.accounts.audit.list(t.demo.tenant.id, { limit: 500 });

  beforeAll(async () => {
    t = await startTestServer();
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    owner = await demoUser('owner');
    editor = await demoUser('editor');
    viewer = await demoUser('viewer');
    admin = await addUser('admin-signer@example.com', 'admin');
  });
  afterAll(() => t.close());

  it('a baseline made without signers is released at once, as before, with one step', async () => {
    const res = await t.api('POST', '/baselines/', {
      body: { name: 'plain', knowledge_topic_revision_ids: [revision] },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      status: 'released',
      released_at: res.body.created_at,
      supersedes: null,
      required_signers: [],
      signatures: [],
      refusal: null,
    });
    expect((await history(res.body._id)).map((e) => e.action)).toEqual(['released']);
    const signed = await sign(res.body._id, owner, { meaning: 'approved', password: owner.password });
    expect(signed.status).toBe(409);
    expect(signed.body.detail).toMatch(/released when it was made, without signers/);
  });

  it('is proposed with its signers, signed by each with the meaning asked, then released', async () => {
    const proposed = await propose('v1.0', [
      { user: owner.email.toUpperCase() },
      { user: editor.id, meaning: 'reviewed' },
    ]);
    expect(proposed.status, proposed.text).toBe(201);
    const id = proposed.body._id;
    expect(proposed.body).toMatchObject({
      status: 'proposed',
      released_at: null,
      required_signers: [
        { user_id: owner.id, email: owner.email, meaning: 'approved' },
        { user_id: editor.id, email: editor.email, meaning: 'reviewed' },
      ],
      signatures: [],
      refusal: null,
    });

    const reviewed = await sign(id, editor, {
      meaning: 'reviewed',
      password: editor.password,
      reason: 'matches the review minutes',
    });
    expect(reviewed.status, reviewed.text).toBe(201);
    expect(reviewed.body.status).toBe('proposed');
    expect(reviewed.body.signatures).toEqual([
      {
        user_id: editor.id,
        email: editor.email,
        meaning: 'reviewed',
        reason: 'matches the review minutes',
        signed_at: expect.any(String),
      },
    ]);

    const approved = await sign(id, owner, { meaning: 'approved', password: owner.password });
    expect(approved.status, approved.text).toBe(201);
    expect(approved.body.status).toBe('released');
    expect(approved.body.released_at).toBe(approved.body.signatures[1].signed_at);
    expect(approved.body.signatures.map((s: any) => [s.email, s.meaning])).toEqual([
      [editor.email, 'reviewed'],
      [owner.email, 'approved'],
    ]);
    expect((await t.api('GET', `/baselines/${id}`)).body).toEqual(approved.body);
    expect((await t.api('GET', '/baselines/?name=v1.0')).body).toEqual([approved.body]);

    const steps = await history(id);
    expect(steps.map((e) => [e.n, e.action, e.user_email, e.meaning])).toEqual([
      [1, 'proposed', owner.email, null],
      [2, 'signed', editor.email, 'reviewed'],
      [3, 'signed', owner.email, 'approved'],
      [4, 'released', owner.email, null],
    ]);

    // Released: it never changes.
    const again = await sign(id, owner, { meaning: 'approved', password: owner.password });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/was released at .*never changes/);
    const late = await refuse(id, editor, { reason: 'too late', password: editor.password });
    expect(late.status).toBe(409);
    expect((await history(id)).length).toBe(4);
  });

  it('turns down bad proposals with a 4xx naming the problem', async () => {
    const cases: [unknown, number, RegExp][] = [
      [[{ user: 'nobody@example.com' }], 422, /not a user of your tenant/],
      [[{ user: t.demo.otherTenant.users.owner.email }], 422, /not a user of your tenant/],
      [[{ user: owner.email }, { user: owner.id }], 422, /asked to sign twice/],
      [[{ user: editor.email }], 422, /only owners and admins may sign as "approved"/],
      [[], 422, /./],
      [[{ user: owner.email, meaning: 'blessed' }], 422, /./],
      [[{ user: owner.email, extra: 1 }], 422, /./],
    ];
    for (const [signers, status, detail] of cases) {
      const res = await propose(`bad-${Math.random()}`, signers);
      expect(res.status, `${JSON.stringify(signers)}: ${res.text}`).toBe(status);
      expect(detailText(res.body.detail)).toMatch(detail);
    }
    const viewerProposes = await t.api('POST', '/baselines/', {
      key: viewer.key,
      body: { name: 'by-viewer', knowledge_topic_revision_ids: [revision], signers: [{ user: owner.email }] },
    });
    expect(viewerProposes.status).toBe(403);
    const unknown = await propose('bad-supersedes', [{ user: owner.email }], {
      supersedes: '0123456789abcdef01234567',
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ['body', 'supersedes'], type: 'unknown_baseline' });
    // A proposal that cannot end (its only signer has left) is superseded by another.
    const leaving = await addUser('leaving@example.com', 'admin');
    const stuck = await propose('stuck', [{ user: leaving.email }]);
    await t.server.app.services.accounts.deleteUser(t.demo.tenant.id, leaving.id);
    const replacement = await propose('unstuck', [{ user: owner.email }], { supersedes: stuck.body._id });
    expect(replacement.status, replacement.text).toBe(201);
    expect(replacement.body.supersedes).toBe(stuck.body._id);
    expect((await t.api('GET', `/baselines/${stuck.body._id}`)).body.status).toBe('proposed');
  });

  it('turns down bad signatures with a 4xx naming why, recording nothing but the security log entry', async () => {
    const proposed = await propose('v2.0', [
      { user: owner.email },
      { user: editor.email, meaning: 'reviewed' },
    ]);
    const id = proposed.body._id;
    const logBefore = (await securityLog()).length;
    const cases: [Signer, Record<string, unknown>, number, RegExp][] = [
      [
        owner,
        { meaning: 'approved', password: 'not the password' },
        403,
        /password is wrong, so nothing was signed/,
      ],
      [viewer, { meaning: 'reviewed', password: viewer.password }, 403, /not asked to sign.*signers are/],
      [editor, { meaning: 'approved', password: editor.password }, 422, /asked to sign .* as "reviewed"/],
    ];
    for (const [who, body, status, detail] of cases) {
      const res = await sign(id, who, body);
      expect(res.status, res.text).toBe(status);
      expect(detailText(res.body.detail)).toMatch(detail);
    }
    const wrongRefusal = await refuse(id, owner, { reason: 'no', password: 'wrong' });
    expect(wrongRefusal.status).toBe(403);
    expect(wrongRefusal.body.detail).toMatch(/nothing was refused/);
    // Bodies the schema refuses never reach the service.
    for (const body of [
      { meaning: 'approved' },
      { password: owner.password },
      { meaning: 'approved', password: '' },
      { meaning: 'approved', password: owner.password, extra: true },
    ]) {
      expect((await sign(id, owner, body)).status, JSON.stringify(body)).toBe(422);
    }
    for (const body of [{ password: owner.password }, { reason: '   ', password: owner.password }]) {
      expect((await refuse(id, owner, body)).status, JSON.stringify(body)).toBe(422);
    }

    const after = await t.api('GET', `/baselines/${id}`);
    expect(after.body).toMatchObject({ status: 'proposed', signatures: [], refusal: null });
    expect((await history(id)).map((e) => e.action)).toEqual(['proposed']);
    const logged = (await securityLog()).slice(0, (await securityLog()).length - logBefore);
    expect(logged.map((e) => e.action)).toEqual(Array(4).fill('baseline-signature-refused'));
    expect(logged.map((e) => e.detail).join('\n')).toMatch(/password is wrong/);
    expect(logged.every((e) => e.detail!.includes(id))).toBe(true);
    expect(logged.some((e) => e.actor === viewer.email)).toBe(true);

    expect((await sign(id, editor, { meaning: 'reviewed', password: editor.password })).status).toBe(201);
    const twice = await sign(id, editor, { meaning: 'reviewed', password: editor.password });
    expect(twice.status).toBe(409);
    expect(twice.body.detail).toMatch(/already signed/);
    expect((await securityLog())[0]).toMatchObject({
      action: 'baseline-signature-refused',
      actor: editor.email,
    });
  });

  it('a refusal ends the proposal; a new proposal supersedes it, and a later one supersedes a release', async () => {
    const proposed = await propose('v3.0', [{ user: owner.email }, { user: admin.email }]);
    const id = proposed.body._id;
    expect((await sign(id, owner, { meaning: 'approved', password: owner.password })).status).toBe(201);
    const refused = await refuse(id, admin, {
      reason: ' test report TR-7 is missing ',
      password: admin.password,
    });
    expect(refused.status, refused.text).toBe(201);
    expect(refused.body).toMatchObject({
      status: 'refused',
      released_at: null,
      refusal: { user_id: admin.id, email: admin.email, reason: 'test report TR-7 is missing' },
    });
    const late = await sign(id, admin, { meaning: 'approved', password: admin.password });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatch(/was refused by admin-signer@example.com .* a refused proposal is over/);
    const other = await refuse(id, owner, { reason: 'me too', password: owner.password });
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/was refused by admin-signer@example.com/);
    expect((await history(id)).map((e) => e.action)).toEqual(['proposed', 'signed', 'refused']);

    const next = await propose('v3.1', [{ user: admin.email }], { supersedes: id });
    expect(next.status, next.text).toBe(201);
    expect(next.body).toMatchObject({ status: 'proposed', supersedes: id });
    const released = await sign(next.body._id, admin, { meaning: 'approved', password: admin.password });
    expect(released.body.status).toBe('released');
    const later = await t.api('POST', '/baselines/', {
      body: { name: 'v3.2', knowledge_topic_revision_ids: [revision], supersedes: next.body._id },
    });
    expect(later.status, later.text).toBe(201);
    expect(later.body).toMatchObject({ status: 'released', supersedes: next.body._id });
  });

  it('two signatures at once release the baseline once', async () => {
    const second = await addUser('second-signer@example.com', 'admin');
    const proposed = await propose('concurrent', [{ user: owner.email }, { user: second.email }]);
    const id = proposed.body._id;
    const answers = await Promise.all([
      sign(id, owner, { meaning: 'approved', password: owner.password }),
      sign(id, second, { meaning: 'approved', password: second.password }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
    const steps = await history(id);
    expect(steps.map((e) => e.action).sort()).toEqual(['proposed', 'released', 'signed', 'signed']);
    expect(steps.map((e) => e.n)).toEqual([1, 2, 3, 4]);
    expect((await t.api('GET', `/baselines/${id}`)).body.status).toBe('released');
  });

  it('slows down password guessing with a signer key, with a 429', async () => {
    const guessed = await addUser('guessed@example.com', 'admin');
    const proposed = await propose('guessing', [{ user: guessed.email }]);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      statuses.push(
        (await sign(proposed.body._id, guessed, { meaning: 'approved', password: `guess-${i}` })).status,
      );
    }
    expect(statuses.slice(0, 5)).toEqual([403, 403, 403, 403, 403]);
    const throttled = await sign(proposed.body._id, guessed, {
      meaning: 'approved',
      password: guessed.password,
    });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await t.api('GET', `/baselines/${proposed.body._id}`)).body.signatures).toEqual([]);
  });

  it("another tenant's baselines are 404 to sign, refuse or read", async () => {
    const proposed = await propose('isolated', [{ user: owner.email }]);
    const id = proposed.body._id;
    const stranger: Signer = {
      id: '',
      email: t.demo.otherTenant.users.owner.email,
      password: t.demo.otherTenant.users.owner.password,
      key: t.demo.otherTenant.users.owner.apiKey,
    };
    expect((await sign(id, stranger, { meaning: 'approved', password: stranger.password })).status).toBe(404);
    expect((await refuse(id, stranger, { reason: 'x', password: stranger.password })).status).toBe(404);
    expect((await t.api('GET', `/baselines/${id}`, { key: stranger.key })).status).toBe(404);
    expect((await t.api('GET', `/baselines/${id}/history`, { key: stranger.key })).status).toBe(404);
    expect((await t.api('GET', `/baselines/${id}/history`, { key: null })).status).toBe(401);
  });

  it('shows the flow in /docs, and keeps the steps append-only in the database', async () => {
    const spec = (await t.api('GET', '/openapi.json')).body;
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining([
        '/baselines/{baseline_id}/signatures',
        '/baselines/{baseline_id}/refusals',
        '/baselines/{baseline_id}/history',
      ]),
    );
    const db = t.server.storage.db;
    await expect(db.deleteFrom('baseline_events').execute()).rejects.toThrow();
    await expect(db.updateTable('baseline_events').set({ reason: 'rewritten' }).execute()).rejects.toThrow();
  });
});
