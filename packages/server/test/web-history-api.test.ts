import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/**
 * Record history, signed approvals and baselines in the web app's API: what the pages show, the
 * roles that may act, and tenant isolation.
 */
describe('web app API: history, approvals, baselines', () => {
  let t: TestServer;
  let owner: WebClient;
  let editor: WebClient;
  let viewer: WebClient;
  let other: WebClient;
  const users = () => t.demo.tenant.users;
  const state: { historyId?: string; revisionId?: string; recordId?: string } = {};

  const schema = {
    type: 'default',
    components: [
      {
        type: 'textfield',
        key: 'textfield_f1',
        label: 'Flow rate',
        properties: { 'service-key': 'flow' },
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
      { type: 'textarea', key: 'notes', label: 'Notes' },
    ],
  };

  const approve = (client: WebClient, revisionId: string, body: unknown) =>
    client.request('POST', `/api/revisions/${revisionId}/approve`, { body });

  beforeAll(async () => {
    t = await startTestServer();
    owner = webClient(t.url);
    editor = webClient(t.url);
    viewer = webClient(t.url);
    other = webClient(t.url);
    expect((await owner.signIn(users().owner.email, users().owner.password)).status).toBe(200);
    expect((await editor.signIn(users().editor.email, users().editor.password)).status).toBe(200);
    expect((await viewer.signIn(users().viewer.email, users().viewer.password)).status).toBe(200);
    const foreign = t.demo.otherTenant.users.owner;
    expect((await other.signIn(foreign.email, foreign.password)).status).toBe(200);

    const draft = await editor.request('POST', '/api/topics', {
      body: { knowledge_topic_name: 'Pumps', type: 'multi_record', knowledge_topic_schema: schema },
    });
    expect(draft.status).toBe(201);
    state.revisionId = draft.body._id;
    state.historyId = draft.body.knowledge_topic_history_id;
  });
  afterAll(() => t.close());

  describe('approval with a password signature', () => {
    it('refuses a wrong password and approves nothing; viewers and editors may not approve', async () => {
      const wrong = await approve(owner, state.revisionId!, {
        password: 'not-my-password',
        meaning: 'approved',
      });
      expect(wrong.status).toBe(403);
      expect(wrong.body.detail).toMatch(/password is wrong.*nothing was approved/);
      const missing = await approve(owner, state.revisionId!, { meaning: 'approved' });
      expect(missing.status).toBe(422);
      const badMeaning = await approve(owner, state.revisionId!, {
        password: users().owner.password,
        meaning: 'liked',
      });
      expect(badMeaning.status).toBe(422);
      for (const client of [viewer, editor]) {
        const refused = await approve(client, state.revisionId!, {
          password: client === viewer ? users().viewer.password : users().editor.password,
          meaning: 'approved',
        });
        expect(refused.status).toBe(403);
      }
      const topic = await owner.request('GET', `/api/topics/${state.historyId}`);
      expect(topic.body.currentRevisionId).toBeNull();
      expect(topic.body.approval).toBeNull();
      // The owner's session is still signed in: a wrong password in the dialog is no sign-out.
      expect((await owner.request('GET', '/api/session')).status).toBe(200);
    });

    it('approves with the right password, and the topic shows who, when, the meaning and the reason', async () => {
      const before = Date.now();
      const approved = await approve(owner, state.revisionId!, {
        password: users().owner.password,
        meaning: 'reviewed',
        reason: 'Design review DR-7 passed',
      });
      expect(approved.status).toBe(200);
      const topic = await viewer.request('GET', `/api/topics/${state.historyId}`);
      expect(topic.body.currentRevisionId).toBe(state.revisionId);
      expect(topic.body.approval).toMatchObject({
        revision_id: state.revisionId,
        approved_by_email: users().owner.email,
        meaning: 'reviewed',
        reason: 'Design review DR-7 passed',
        signature: 'password',
      });
      expect(Date.parse(topic.body.approval.approved_at)).toBeGreaterThanOrEqual(before - 1000);
      // The same approval as the service API reports it (and exports carry).
      const api = await t.api('GET', `/kt/${state.revisionId}/approval`);
      expect(api.body).toEqual(topic.body.approval);
      expect((await other.request('GET', `/api/revisions/${state.revisionId}/approval`)).status).toBe(404);
    });

    it('slows password guessing in the dialog like sign-in: 429 after 5 wrong passwords', async () => {
      const admin = { email: 'approver@demo.rxs.local', password: 'approver-password-1' };
      await t.server.app.services.accounts.createUser(t.demo.tenant.id, { ...admin, role: 'admin' });
      const client = webClient(t.url);
      expect((await client.signIn(admin.email, admin.password)).status).toBe(200);
      const draft = await client.request('POST', '/api/topics', {
        body: { knowledge_topic_name: 'Guessed', type: 'multi_record', knowledge_topic_schema: schema },
      });
      for (let i = 0; i < 5; i++) {
        expect(
          (await approve(client, draft.body._id, { password: `guess-${i}`, meaning: 'approved' })).status,
        ).toBe(403);
      }
      const blocked = await approve(client, draft.body._id, {
        password: admin.password,
        meaning: 'approved',
      });
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await t.api('GET', `/kt/${draft.body._id}`)).body.status).toBe('draft');
    });
  });

  describe('record history', () => {
    it('lists every version with who, when, why and the field differences by semantic name', async () => {
      const created = await editor.request('POST', '/api/records', {
        body: {
          name: 'PUMP-1',
          form: {},
          data: { textfield_f1: '10 l/min', select_s1: '1', notes: 'short' },
          context: { knowledge_unit_topic_id: state.revisionId },
          change_reason: 'First measurement',
        },
      });
      expect(created.status).toBe(201);
      state.recordId = created.body._id;
      const long = 'A much longer note. '.repeat(40);
      const updated = await editor.request('PATCH', `/api/records/${state.recordId}`, {
        body: {
          name: 'PUMP-1',
          data: { textfield_f1: '12 l/min', select_s1: '3', notes: long },
          version: created.body.version,
          change_reason: 'Customer feedback CF-12',
        },
      });
      expect(updated.status).toBe(200);

      const history = await viewer.request('GET', `/api/records/${state.recordId}/history`);
      expect(history.status).toBe(200);
      expect(history.body).toMatchObject({
        recordId: state.recordId,
        name: 'PUMP-1',
        deleted: false,
        topic: { historyId: state.historyId, revisionId: state.revisionId, name: 'Pumps' },
        next: null,
      });
      const [second, first] = history.body.versions;
      expect(history.body.versions).toHaveLength(2);
      expect(second).toMatchObject({
        action: 'updated',
        by: users().editor.email,
        via: 'session',
        reason: 'Customer feedback CF-12',
        version: updated.body.version,
      });
      expect(second.changes.name).toBeNull();
      expect(second.changes.fields).toEqual([
        { field: 'flow', change: 'modified', before: '10 l/min', after: '12 l/min' },
        { field: 'Severity', change: 'modified', before: 'Low', after: 'High' },
        { field: 'Notes', change: 'modified', before: 'short', after: long },
      ]);
      expect(first).toMatchObject({
        action: 'created',
        reason: 'First measurement',
        by: users().editor.email,
      });
      expect(
        first.changes.fields.map((f: { field: string; change: string }) => `${f.field}:${f.change}`),
      ).toEqual(['flow:added', 'Severity:added', 'Notes:added']);
      expect(first.n).toBeLessThan(second.n);

      // Paged: one at a time, the older one reachable by `before`, still compared with its predecessor.
      const page = await viewer.request('GET', `/api/records/${state.recordId}/history?limit=1`);
      expect(page.body.versions.map((v: { n: number }) => v.n)).toEqual([second.n]);
      expect(page.body.versions[0].changes.fields).toHaveLength(3);
      expect(page.body.next).toBe(second.n);
      const older = await viewer.request(
        'GET',
        `/api/records/${state.recordId}/history?limit=1&before=${second.n}`,
      );
      expect(older.body.versions.map((v: { n: number }) => v.n)).toEqual([first.n]);
      // Every page describes the record as it is now.
      expect(older.body).toMatchObject({
        name: 'PUMP-1',
        deleted: false,
        topic: { historyId: state.historyId },
      });
      expect(older.body.next).toBeNull();
    });

    it('shows an old version with its values and the form it was filled in with', async () => {
      const history = await viewer.request('GET', `/api/records/${state.recordId}/history`);
      const first = history.body.versions.at(-1);
      const version = await viewer.request('GET', `/api/records/${state.recordId}/versions/${first.n}`);
      expect(version.status).toBe(200);
      expect(version.body.record.data).toEqual({ textfield_f1: '10 l/min', select_s1: '1', notes: 'short' });
      expect(version.body.values).toEqual([
        { name: 'flow', key: 'textfield_f1', text: '10 l/min' },
        { name: 'Severity', key: 'select_s1', text: 'Low' },
        { name: 'Notes', key: 'notes', text: 'short' },
      ]);
      expect(version.body.topic.schema.components).toHaveLength(3);
      expect(version.body.version.reason).toBe('First measurement');
      expect((await viewer.request('GET', `/api/records/${state.recordId}/versions/999`)).status).toBe(404);
    });

    it('deletes with a reason; the history stays readable; restore needs the editor role and a deleted record', async () => {
      expect(
        (await viewer.request('DELETE', `/api/records/${state.recordId}?change_reason=nope`)).status,
      ).toBe(403);
      const deleted = await editor.request(
        'DELETE',
        `/api/records/${state.recordId}?change_reason=${encodeURIComponent('Duplicate of PUMP-2')}`,
      );
      expect(deleted.status).toBe(204);
      expect((await viewer.request('GET', `/api/records/${state.recordId}`)).status).toBe(404);
      const history = await viewer.request('GET', `/api/records/${state.recordId}/history`);
      expect(history.body.deleted).toBe(true);
      expect(history.body.versions[0]).toMatchObject({
        action: 'deleted',
        reason: 'Duplicate of PUMP-2',
        by: users().editor.email,
      });
      expect(history.body.versions[0].changes.fields).toEqual([]);
      const olderPage = await viewer.request(
        'GET',
        `/api/records/${state.recordId}/history?limit=1&before=${history.body.versions[0].n}`,
      );
      expect(olderPage.body.deleted).toBe(true);
      expect(olderPage.body.versions[0].action).toBe('updated');

      const refused = await viewer.request('POST', `/api/records/${state.recordId}/restore`, {
        body: { change_reason: 'x' },
      });
      expect(refused.status).toBe(403);
      const restored = await editor.request('POST', `/api/records/${state.recordId}/restore`, {
        body: { change_reason: 'Not a duplicate after all' },
      });
      expect(restored.status).toBe(200);
      expect(restored.body.data.textfield_f1).toBe('12 l/min');
      const back = await viewer.request('GET', `/api/records/${state.recordId}`);
      expect(back.status).toBe(200);
      const after = await viewer.request('GET', `/api/records/${state.recordId}/history`);
      expect(after.body.deleted).toBe(false);
      expect(after.body.versions[0]).toMatchObject({
        action: 'restored',
        reason: 'Not a duplicate after all',
      });
      const again = await editor.request('POST', `/api/records/${state.recordId}/restore`, { body: {} });
      expect(again.status).toBe(409);
      expect(again.body.detail).toMatch(/not deleted/);
    });

    it('never shows another tenant’s record history', async () => {
      expect((await other.request('GET', `/api/records/${state.recordId}/history`)).status).toBe(404);
      expect((await other.request('GET', `/api/records/${state.recordId}/versions/1`)).status).toBe(404);
      const restore = await other.request('POST', `/api/records/${state.recordId}/restore`, { body: {} });
      expect(restore.status).toBe(404);
      expect((await webClient(t.url).request('GET', `/api/records/${state.recordId}/history`)).status).toBe(
        401,
      );
    });
  });

  describe('baselines', () => {
    const ids: { b1?: string; b2?: string; at1?: string } = {};

    it('creates and lists baselines; viewers may not create them; names are unique', async () => {
      const refused = await viewer.request('POST', '/api/baselines', {
        body: { name: 'v1.0', knowledge_topic_revision_ids: [state.revisionId] },
      });
      expect(refused.status).toBe(403);
      const created = await editor.request('POST', '/api/baselines', {
        body: {
          name: 'v1.0',
          description: 'First release',
          knowledge_topic_revision_ids: [state.revisionId],
        },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        name: 'v1.0',
        description: 'First release',
        createdBy: users().editor.email,
        topics: [{ revisionId: state.revisionId, historyId: state.historyId, name: 'Pumps', version: '1.0' }],
      });
      ids.b1 = created.body.id;
      ids.at1 = created.body.at;
      const twice = await editor.request('POST', '/api/baselines', {
        body: { name: 'v1.0', knowledge_topic_revision_ids: [state.revisionId] },
      });
      expect(twice.status).toBe(409);
      const future = await editor.request('POST', '/api/baselines', {
        body: { name: 'later', knowledge_topic_revision_ids: [state.revisionId], at: '2999-01-01' },
      });
      expect(future.status).toBe(422);
      expect(future.body.detail[0].loc).toEqual(['body', 'at']);

      const list = await viewer.request('GET', '/api/baselines');
      expect(list.body.items.map((b: { name: string }) => b.name)).toEqual(['v1.0']);
      expect((await viewer.request('GET', `/api/baselines/${ids.b1}`)).body.name).toBe('v1.0');
      expect((await other.request('GET', `/api/baselines/${ids.b1}`)).status).toBe(404);
      expect((await other.request('GET', '/api/baselines')).body.items).toEqual([]);
    });

    it('compares two baselines and a baseline with now: records added, removed and changed by field', async () => {
      const second = await editor.request('POST', '/api/records', {
        body: {
          name: 'PUMP-2',
          form: {},
          data: { textfield_f1: '3 l/min' },
          context: { knowledge_unit_topic_id: state.revisionId },
        },
      });
      const current = await editor.request('GET', `/api/records/${state.recordId}`);
      await editor.request('PATCH', `/api/records/${state.recordId}`, {
        body: { data: { ...current.body.record.data, select_s1: '1' }, version: current.body.record.version },
      });
      const b2 = await editor.request('POST', '/api/baselines', {
        body: { name: 'v1.1', knowledge_topic_revision_ids: [state.revisionId] },
      });
      ids.b2 = b2.body.id;

      const compared = await viewer.request('GET', `/api/baselines/compare?from=${ids.b1}&to=${ids.b2}`);
      expect(compared.status).toBe(200);
      expect(compared.body.from).toMatchObject({ id: ids.b1, name: 'v1.0' });
      expect(compared.body.to).toMatchObject({ id: ids.b2, name: 'v1.1' });
      const [topic] = compared.body.topics;
      expect(topic).toMatchObject({
        historyId: state.historyId,
        status: 'present',
        counts: { added: 1, removed: 0, changed: 1, unchanged: 0 },
        omitted: 0,
      });
      const kinds = Object.fromEntries(
        topic.differences.map((d: { name: string; kind: string }) => [d.name, d.kind]),
      );
      expect(kinds).toEqual({ 'PUMP-1': 'changed', 'PUMP-2': 'added' });
      const changed = topic.differences.find((d: { kind: string }) => d.kind === 'changed');
      expect(changed.changes.fields).toEqual([
        { field: 'Severity', change: 'modified', before: 'High', after: 'Low' },
      ]);

      // Against now, after PUMP-2 is deleted again: v1.1 had it, now it is gone.
      await editor.request('DELETE', `/api/records/${second.body._id}`);
      const now = await viewer.request('GET', `/api/baselines/compare?from=${ids.b2}&to=now`);
      expect(now.body.to).toMatchObject({ id: null, name: 'now' });
      expect(now.body.topics[0].counts).toEqual({ added: 0, removed: 1, changed: 0, unchanged: 1 });
      expect(now.body.topics[0].differences).toEqual([
        { id: second.body._id, name: 'PUMP-2', kind: 'removed', changes: null },
      ]);
      expect((await other.request('GET', `/api/baselines/compare?from=${ids.b1}&to=now`)).status).toBe(404);
    });

    it('lists at most the first 500 differences of a comparison and counts the rest', async () => {
      const draft = await editor.request('POST', '/api/topics', {
        body: { knowledge_topic_name: 'Bulk', type: 'multi_record', knowledge_topic_schema: schema },
      });
      const signature = { password: users().owner.password, meaning: 'approved' };
      expect((await approve(owner, draft.body._id, signature)).status).toBe(200);
      const empty = await editor.request('POST', '/api/baselines', {
        body: { name: 'bulk-empty', knowledge_topic_revision_ids: [draft.body._id] },
      });
      expect(empty.status).toBe(201);
      // Records made after the baseline's moment (stored times have millisecond resolution).
      await new Promise((resolve) => setTimeout(resolve, 5));
      const { services } = t.server.app;
      const ownerUser = (await services.accounts.listUsers(t.demo.tenant.id)).find(
        (u) => u.email === users().owner.email,
      )!;
      const principal = { tenantId: t.demo.tenant.id, userId: ownerUser.id, role: 'owner' as const };
      for (let i = 0; i < 520; i++) {
        await services.records.create(principal, {
          name: `BULK-${i}`,
          form: {},
          data: { textfield_f1: `${i} l/min` },
          context: { knowledge_unit_topic_id: draft.body._id },
        });
      }
      const compared = await viewer.request('GET', `/api/baselines/compare?from=${empty.body.id}&to=now`);
      const [topic] = compared.body.topics;
      expect(compared.body.limit).toBe(500);
      expect(topic.counts).toEqual({ added: 520, removed: 0, changed: 0, unchanged: 0 });
      expect(topic.differences).toHaveLength(500);
      expect(topic.omitted).toBe(20);
      // In record id order, the order both sides are streamed in.
      const listed = topic.differences.map((d: { id: string }) => d.id);
      expect(listed).toEqual([...listed].sort());
    });

    it('downloads a baseline’s export, byte for byte the export taken at its moment', async () => {
      const revisions = state.revisionId!;
      const taken = await owner.request('GET', `/api/export?revisions=${revisions}&format=json`);
      expect(taken.status).toBe(200);
      const exportedAt = JSON.parse(taken.text).header?.exportedAt ?? JSON.parse(taken.text).exportedAt;
      expect(exportedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      // Later changes do not reach an export as of that moment.
      const current = await editor.request('GET', `/api/records/${state.recordId}`);
      await editor.request('PATCH', `/api/records/${state.recordId}`, {
        body: {
          data: { ...current.body.record.data, textfield_f1: '99 l/min' },
          version: current.body.record.version,
        },
      });
      const again = await owner.request(
        'GET',
        `/api/export?revisions=${revisions}&format=json&as_of=${encodeURIComponent(exportedAt)}`,
      );
      expect(again.status).toBe(200);
      expect(again.text).toBe(taken.text);

      const baseline = (await viewer.request('GET', `/api/baselines/${ids.b1}`)).body;
      const csv = await viewer.request(
        'GET',
        `/api/export?revisions=${baseline.topics[0].revisionId}&format=csv&as_of=${encodeURIComponent(baseline.at)}`,
      );
      expect(csv.status).toBe(200);
      expect(csv.text).toContain('12 l/min');
      expect(csv.text).not.toContain('PUMP-2');
      expect(csv.text).not.toContain('99 l/min');

      const bad = await viewer.request(
        'GET',
        `/api/export?revisions=${revisions}&format=csv&as_of=yesterday`,
      );
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0].loc).toEqual(['query', 'as_of']);
    });
  });
});
