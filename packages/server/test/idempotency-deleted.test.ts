import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, createClient } from '@rxs/client';
import { RecordDeletedSinceError } from '../../client/src/errors.js';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';
import { webClient } from './web-client.js';

/**
 * A repeat of a keyed write whose record was deleted since never answers as if the record were
 * there: 410, saying which record, when and by whom it was deleted, and what to do; nothing is
 * written. A repeat of a write whose record is there is the first answer, byte for byte.
 */
describe('Idempotency-Key of a record deleted since', () => {
  let t: TestServer;
  let revision: string;
  const count = async () =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body.count as number;
  const post = (idempotencyKey: string, note: string, key?: string, onRevision = revision) =>
    t.api('POST', '/records/', {
      ...(key && { key }),
      headers: { 'idempotency-key': idempotencyKey },
      body: {
        name: `Release ${note}`,
        form: {},
        data: { note },
        context: { knowledge_unit_topic_id: onRevision },
      },
    });
  const remove = (id: string, reason: string, key?: string) =>
    t.api('DELETE', `/records/${id}?change_reason=${encodeURIComponent(reason)}`, { ...(key && { key }) });

  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'Releases deleted since');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a repeated POST after the record was deleted is 410 naming the deletion, writes nothing, and GET agrees', async () => {
    const first = await post('create-then-delete', 'a');
    expect(first.status, first.text).toBe(201);
    const id = first.body._id as string;
    const editor = t.demo.tenant.users.editor;
    expect((await remove(id, 'Duplicate of REL-7', editor.apiKey)).status).toBe(204);
    const before = await count();

    const again = await post('create-then-delete', 'a');
    expect(again.status, again.text).toBe(410);
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(again.body)).toEqual(['detail']);
    const detail = again.body.detail as string;
    expect(detail).toContain(`Record ${id}, which this request created`);
    expect(detail).toContain('nothing was written');
    expect(detail).toContain(editor.email);
    expect(detail).toContain('Duplicate of REL-7');
    expect(detail).toContain(`POST /records/${id}/restore`);
    expect(detail).toMatch(/new Idempotency-Key/);
    // The deletion's moment, as the record's history has it.
    const versions = (await t.api('GET', `/records/${id}/versions`)).body;
    expect(versions[0].action).toBe('deleted');
    expect(detail).toContain(`was deleted on ${versions[0].at} by ${editor.email}`);

    expect((await t.api('GET', `/records/${id}`)).status).toBe(404);
    expect(await count()).toBe(before);
    // Every repeat says so, and another request with the key is still refused as such.
    expect((await post('create-then-delete', 'a')).status).toBe(410);
    const other = await post('create-then-delete', 'b');
    expect(other.status).toBe(422);
    expect(other.body.detail[0].type).toBe('idempotency_key_reused');
    // A new key creates the record anew.
    const anew = await post('create-then-delete-2', 'a');
    expect(anew.status).toBe(201);
    expect(anew.body._id).not.toBe(id);
  });

  it('a restored record is answered again, byte for byte', async () => {
    const first = await post('restored-later', 'r');
    const id = first.body._id as string;
    expect((await remove(id, 'by mistake')).status).toBe(204);
    expect((await post('restored-later', 'r')).status).toBe(410);
    expect((await t.api('POST', `/records/${id}/restore`, { body: {} })).status).toBe(200);
    const again = await post('restored-later', 'r');
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a repeated PATCH after the record was deleted is 410 too', async () => {
    const created = (await post('to-patch', 'p')).body;
    const patch = () =>
      t.api('PATCH', `/records/${created._id}`, {
        headers: { 'idempotency-key': 'patch-then-delete' },
        body: { data: { note: 'changed' }, version: created.version },
      });
    const first = await patch();
    expect(first.status).toBe(200);
    const live = await patch();
    expect(live.status).toBe(200);
    expect(live.text).toBe(first.text);

    expect((await remove(created._id, 'obsolete')).status).toBe(204);
    const again = await patch();
    expect(again.status, again.text).toBe(410);
    expect(again.body.detail).toContain(`Record ${created._id}, which this request changed`);
    expect(again.body.detail).toContain(t.demo.tenant.users.owner.email);
    expect((await t.api('GET', `/records/${created._id}`)).status).toBe(404);
    expect((await t.api('GET', `/records/${created._id}/versions`)).body).toHaveLength(3);
  });

  it("keys are per tenant: one tenant's deletion changes nothing for another's same key", async () => {
    const other = t.demo.otherTenant.users.owner.apiKey;
    const theirRevision = await approvedTopic(t, 'Their releases deleted since', { key: other });
    const mine = await post('shared-deleted-key', 'mine');
    const theirs = await post('shared-deleted-key', 'theirs', other, theirRevision);
    expect(theirs.status, theirs.text).toBe(201);
    expect((await remove(mine.body._id, 'mine only')).status).toBe(204);

    expect((await post('shared-deleted-key', 'mine')).status).toBe(410);
    const theirsAgain = await post('shared-deleted-key', 'theirs', other, theirRevision);
    expect(theirsAgain.status).toBe(201);
    expect(theirsAgain.text).toBe(theirs.text);
    // Their 410 names nothing of mine, and mine nothing of theirs.
    expect((await remove(theirs.body._id, 'theirs too', other)).status).toBe(204);
    const their410 = await post('shared-deleted-key', 'theirs', other, theirRevision);
    expect(their410.status).toBe(410);
    expect(their410.body.detail).toContain(theirs.body._id);
    expect(their410.body.detail).not.toContain(mine.body._id);
    expect(their410.body.detail).not.toContain('mine only');
  });

  it('repeats racing the deletion answer the record or 410, never anything else; afterwards 410', async () => {
    const first = await post('race-delete', 'raced');
    const [answers, deleted] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => post('race-delete', 'raced'))),
      remove(first.body._id, 'raced'),
    ]);
    expect(deleted.status).toBe(204);
    for (const answer of answers) {
      expect([201, 410]).toContain(answer.status);
      if (answer.status === 201) expect(answer.text).toBe(first.text);
    }
    expect((await post('race-delete', 'raced')).status).toBe(410);
  });

  it('the sdk throws RecordDeletedSinceError for a keyed create or change whose record was deleted since', async () => {
    const client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
    });
    const body = {
      name: 'Via sdk',
      form: {},
      data: { note: 'sdk' },
      context: { knowledge_unit_topic_id: revision },
    };
    const created = await client.records.createRecord(body, { idempotencyKey: 'sdk-create' });
    const changed = await client.records.updateRecord(
      created._id,
      { data: { note: 'sdk changed' } },
      { idempotencyKey: 'sdk-change' },
    );
    // Live: the first answers again.
    expect(await client.records.createRecord(body, { idempotencyKey: 'sdk-create' })).toEqual(created);
    await client.records.deleteRecord(created._id, { reason: 'sdk test' });

    const create = await client.records.createRecord(body, { idempotencyKey: 'sdk-create' }).catch((e) => e);
    expect(create).toBeInstanceOf(RecordDeletedSinceError);
    expect(create).not.toBeInstanceOf(ConflictError);
    expect(create).toMatchObject({ status: 410, idempotencyKey: 'sdk-create', method: 'POST' });
    expect(create.message).toContain(created._id);
    expect(create.message).toMatch(/nothing was written/);
    const change = await client.records
      .updateRecord(created._id, { data: { note: 'sdk changed' } }, { idempotencyKey: 'sdk-change' })
      .catch((e) => e);
    expect(change).toBeInstanceOf(RecordDeletedSinceError);
    expect(change).toMatchObject({ status: 410, idempotencyKey: 'sdk-change', method: 'PATCH' });
    expect(changed.version).not.toBe(created.version);
  });

  it("the web app's import run again reports a row whose record was deleted since, not as created", async () => {
    const topic = await approvedTopic(t, 'Web import deleted since');
    const editor = webClient(t.url);
    const users = t.demo.tenant.users;
    expect((await editor.signIn(users.editor.email, users.editor.password)).status).toBe(200);
    const upload = async () => {
      const response = await fetch(
        `${t.url}/api/import?${new URLSearchParams({ revision: topic, name: 'notes.csv' })}`,
        {
          method: 'POST',
          headers: {
            accept: 'application/json',
            'content-type': 'application/octet-stream',
            cookie: editor.cookie!,
            ...(editor.csrfToken && { 'x-csrf-token': editor.csrfToken }),
          },
          body: 'name,Note\r\nGamma,one\r\nDelta,two\r\n',
        },
      );
      expect(response.status).toBe(200);
      return (await response.json()).report;
    };
    expect(await upload()).toMatchObject({ created: 2, complete: true });
    const listed = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}`)).body;
    const gamma = listed.find((r: { name: string }) => r.name === 'Gamma');
    expect((await remove(gamma._id, 'not needed')).status).toBe(204);

    const again = await upload();
    expect(again).toMatchObject({ complete: false, failed: 1, deletedSince: 1 });
    expect(again.created + again.unchanged).toBe(1);
    expect(again.rowProblems[0].problems[0]).toContain(gamma._id);
    expect((await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${topic}`)).body.count).toBe(
      1,
    );
  });

  it('the OpenAPI document declares the 410 of both keyed writes', async () => {
    const paths = (await t.api('GET', '/openapi.json')).body.paths;
    expect(paths['/records/'].post.responses['410']).toBeDefined();
    expect(paths['/records/{id}'].patch.responses['410']).toBeDefined();
  });
});
