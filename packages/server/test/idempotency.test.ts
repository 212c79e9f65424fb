import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';

/**
 * `Idempotency-Key` on `POST /records/` and `PATCH /records/{id}`: a retry with the same key and the
 * same request gets the first answer again and writes nothing; never a duplicate, also when the
 * retries race each other.
 */
describe('Idempotency-Key', () => {
  let t: TestServer;
  let revision: string;
  const count = async (key?: string) =>
    (
      await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`, {
        ...(key && { key }),
      })
    ).body.count as number;
  const post = (idempotencyKey: string, note: string, key?: string) =>
    t.api('POST', '/records/', {
      ...(key && { key }),
      headers: { 'idempotency-key': idempotencyKey },
      body: {
        name: `Release ${note}`,
        form: {},
        data: { note },
        context: { knowledge_unit_topic_id: revision },
      },
    });

  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'Idempotent releases');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a repeated POST answers the first record again, byte for byte, and creates nothing', async () => {
    const before = await count();
    const first = await post('run-512', 'a');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post('run-512', 'a');
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await count()).toBe(before + 1);
    // The answer is the record as GET shows it.
    expect((await t.api('GET', `/records/${first.body._id}`)).body).toEqual(first.body);
  });

  it('the same key for another request is 422, and writes nothing', async () => {
    await post('run-600', 'first');
    const before = await count();
    const other = await post('run-600', 'second');
    expect(other.status).toBe(422);
    expect(other.body.detail[0]).toMatchObject({
      loc: ['header', 'idempotency-key'],
      type: 'idempotency_key_reused',
    });
    expect(other.body.detail[0].msg).toMatch(/Use a new key/);
    expect(await count()).toBe(before);
  });

  it('a repeated PATCH changes the record once', async () => {
    const created = (await post('run-700', 'to change')).body;
    const patch = () =>
      t.api('PATCH', `/records/${created._id}`, {
        headers: { 'idempotency-key': 'patch-700' },
        body: { data: { note: 'changed' }, version: created.version },
      });
    const first = await patch();
    expect(first.status).toBe(200);
    const again = await patch();
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    const now = (await t.api('GET', `/records/${created._id}`)).body;
    expect(now.version).toBe(first.body.version);
    expect((await t.api('GET', `/records/${created._id}/versions`)).body).toHaveLength(2);
    // The key of the POST is not the PATCH's: another request.
    const crossed = await t.api('PATCH', `/records/${created._id}`, {
      headers: { 'idempotency-key': 'run-700' },
      body: { data: { note: 'x' } },
    });
    expect(crossed.status).toBe(422);
  });

  it('racing retries with one key create exactly one record, and all get its answer', async () => {
    const before = await count();
    const answers = await Promise.all(Array.from({ length: 12 }, () => post('race-1', 'raced')));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(await count()).toBe(before + 1);
  });

  it('keys are per tenant, refused when malformed, and an error answer is not kept', async () => {
    const other = t.demo.otherTenant;
    const theirRevision = await approvedTopic(t, 'Their releases', { key: other.users.owner.apiKey });
    const mine = await post('shared-key', 'mine');
    expect(mine.status).toBe(201);
    // Another tenant's same key is another key: it writes its own record.
    const theirs = await t.api('POST', '/records/', {
      key: other.users.owner.apiKey,
      headers: { 'idempotency-key': 'shared-key' },
      body: { name: 'theirs', form: {}, data: {}, context: { knowledge_unit_topic_id: theirRevision } },
    });
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.body._id).not.toBe(mine.body._id);
    expect(theirs.text).not.toContain('mine');

    for (const bad of ['has space', 'x'.repeat(256), 'é']) {
      const res = await post(bad, 'bad key');
      expect(res.status, bad).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['header', 'idempotency-key']);
    }
    // A refused write keeps nothing: the same key works once the request is right.
    const refused = await t.api('POST', '/records/', {
      headers: { 'idempotency-key': 'fix-me' },
      body: { name: '', form: {}, data: {}, context: { knowledge_unit_topic_id: revision } },
    });
    expect(refused.status).toBe(422);
    const again = await t.api('POST', '/records/', {
      headers: { 'idempotency-key': 'fix-me' },
      body: { name: '', form: {}, data: {}, context: { knowledge_unit_topic_id: revision } },
    });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect((await post('fix-me', 'fixed')).status).toBe(201);
  });

  it('after 24 hours a key is free again', async () => {
    const first = await post('old-key', 'yesterday');
    expect(first.status).toBe(201);
    await t.server.storage.db
      .updateTable('idempotency_keys')
      .set({ created_at: new Date(Date.now() - 25 * 3_600_000).toISOString() })
      .where('key', '=', 'old-key')
      .execute();
    const reused = await post('old-key', 'today');
    expect(reused.status).toBe(201);
    expect(reused.body._id).not.toBe(first.body._id);
    expect(reused.headers.get('idempotent-replayed')).toBeNull();
  });
});
