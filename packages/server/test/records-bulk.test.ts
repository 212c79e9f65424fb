import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeActor, insertRecords } from '@rxs/server';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, NOTE_SCORE_SCHEMA, reapprove } from './support/topics.js';

/**
 * `POST /records/bulk`: every item checked as its single write is, then one transaction writes
 * them all with their history, or a 4xx names the refused items and nothing is written.
 */
describe('POST /records/bulk', () => {
  let t: TestServer;
  let revision: string;
  let topicCount = 0;
  const create = (note: string, extra: Record<string, unknown> = {}, on = revision) => ({
    name: note,
    form: {},
    data: { note },
    context: { knowledge_unit_topic_id: on },
    ...extra,
  });
  const bulk = (records: unknown[], options: { key?: string; idempotencyKey?: string } = {}) =>
    t.api('POST', '/records/bulk', {
      ...(options.key && { key: options.key }),
      ...(options.idempotencyKey && { headers: { 'idempotency-key': options.idempotencyKey } }),
      body: { records },
    });
  const single = async (note: string, extra: Record<string, unknown> = {}) => {
    const created = await t.api('POST', '/records/', { body: create(note, extra) });
    expect(created.status, created.text).toBe(201);
    return created.body as { _id: string; version: string };
  };
  const count = async (on = revision) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${on}`)).body.count as number;
  const versions = async (id: string) => (await t.api('GET', `/records/${id}/versions`)).body as unknown[];
  /** The topic's state as a reader sees it: its listing's tag and every record. */
  const snapshot = async (on = revision) => {
    const listing = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${on}`);
    return { etag: listing.headers.get('etag'), records: listing.body };
  };

  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'Bulk notes', { schema: NOTE_SCORE_SCHEMA });
  });
  afterAll(() => t?.close());

  it('writes creates and changes in one transaction, with their history, answering in item order', async () => {
    const a = await single('a');
    const b = await single('b');
    const before = await t.api(
      'GET',
      `/records/changes?context__knowledge_unit_topic_id=${revision}&from=now`,
    );
    const res = await bulk([
      create('c1', { change_reason: 'bulk import' }),
      { _id: a._id, version: '1.0', data: { note: 'a changed', score: 3 } },
      create('c2'),
      { _id: b._id, name: 'b renamed', change_reason: 'rename' },
      create('c3', { context: { knowledge_unit_topic_id: revision, global_element_id: 'SRC-3' } }),
    ]);
    expect(res.status, res.text).toBe(200);
    const results = res.body.records as {
      _id: string;
      version: string;
      created: boolean;
      replayed: boolean;
    }[];
    expect(results.map((r) => [r.version, r.created, r.replayed])).toEqual([
      ['1.0', true, false],
      ['2.0', false, false],
      ['1.0', true, false],
      ['2.0', false, false],
      ['1.0', true, false],
    ]);
    expect(results[1]!._id).toBe(a._id);
    expect(results[3]!._id).toBe(b._id);

    const read = await Promise.all(results.map((r) => t.api('GET', `/records/${r._id}`)));
    expect(read.map((r) => r.body.name)).toEqual(['c1', 'a', 'c2', 'b renamed', 'c3']);
    expect(read[1]!.body.data).toEqual({ note: 'a changed', score: 3 });
    expect(read[4]!.body.context.global_element_id).toBe('SRC-3');
    // One transaction, one moment: every write of it carries the same time.
    const moments = new Set([
      read[0]!.body.audit_info.timestamp_created,
      read[1]!.body.audit_info.timestamp_last_updated,
      read[2]!.body.audit_info.timestamp_created,
      read[3]!.body.audit_info.timestamp_last_updated,
    ]);
    expect(moments.size).toBe(1);

    // History as the single writes make it, with the reasons given.
    const c1 = (await versions(results[0]!._id)) as { action: string; reason: string | null }[];
    expect(c1.map((v) => [v.action, v.reason])).toEqual([['created', 'bulk import']]);
    const bVersions = (await versions(b._id)) as { action: string; reason: string | null }[];
    expect(bVersions.map((v) => [v.action, v.reason])).toEqual([
      ['updated', 'rename'],
      ['created', null],
    ]);
    // The listing's changes feed sees every write.
    const changes = await t.api(
      'GET',
      `/records/changes?context__knowledge_unit_topic_id=${revision}&since=${encodeURIComponent(before.body.cursor)}`,
    );
    expect(changes.status).toBe(200);
    expect(new Set(changes.body.records.map((r: { _id: string }) => r._id))).toEqual(
      new Set(results.map((r) => r._id)),
    );
  });

  it('one refused item refuses the whole request: nothing is written, the 422 names the item and why', async () => {
    const target = await single('target');
    const frozen = await single('frozen', { read_only: true });
    const stale = await single('stale');
    expect((await t.api('PATCH', `/records/${stale._id}`, { body: { name: 'moved on' } })).status).toBe(200);
    const old = await approvedTopic(t, `Superseded ${++topicCount}`);
    await reapprove(t, old);
    const foreign = t.demo.otherTenant.topics.riskRegister!.recordIds[0]!;

    const cases: [string, unknown, { loc: unknown[]; type: string; msg?: RegExp }][] = [
      [
        'a value of the wrong type',
        create('bad', { data: { note: 'x', score: 'high' } }),
        { loc: ['body', 'records', 2, 'data', 'score'], type: expect.any(String) },
      ],
      [
        'a value the form does not allow',
        { _id: target._id, data: { note: 'x', score: 11 } },
        { loc: ['body', 'records', 2, 'data', 'score'], type: expect.any(String) },
      ],
      [
        'an unknown property',
        create('bad', { colour: 'red' }),
        { loc: ['body', 'records', 2, 'colour'], type: 'extra_forbidden' },
      ],
      [
        'a read-only record',
        { _id: frozen._id, name: 'thaw' },
        { loc: ['body', 'records', 2], type: 'conflict', msg: /read-only/ },
      ],
      [
        'a stale version',
        { _id: stale._id, version: '1.0', name: 'late' },
        { loc: ['body', 'records', 2], type: 'conflict', msg: /is at version 2\.0, not 1\.0/ },
      ],
      [
        'a superseded revision',
        create('late', {}, old),
        { loc: ['body', 'records', 2], type: 'conflict', msg: /superseded/ },
      ],
      [
        "another tenant's record",
        { _id: foreign, name: 'mine now' },
        {
          loc: ['body', 'records', 2],
          type: 'not_found',
          msg: new RegExp(`Record ${foreign} was not found`),
        },
      ],
    ];
    for (const [what, bad, expected] of cases) {
      const before = await snapshot();
      const res = await bulk([create('good'), { _id: target._id, name: 'good change' }, bad]);
      expect(res.status, `${what}: ${res.text}`).toBe(422);
      expect(res.body.detail, what).toContainEqual(
        expect.objectContaining({
          loc: expected.loc,
          type: expected.type,
          ...(expected.msg && { msg: expect.stringMatching(expected.msg) }),
        }),
      );
      for (const item of res.body.detail) expect(item.loc.slice(0, 3), what).toEqual(['body', 'records', 2]);
      expect(await snapshot(), what).toEqual(before);
    }
    expect(await versions(target._id)).toHaveLength(1);
    // The foreign record is untouched in its own tenant.
    const theirs = await t.api('GET', `/records/${foreign}`, { key: t.demo.otherTenant.users.owner.apiKey });
    expect(theirs.body.name).not.toBe('mine now');
  });

  it('names every refused item, a shape and its form problems together, and two changes of one record', async () => {
    const one = await single('one');
    const before = await snapshot();
    const res = await bulk([
      create('', { data: { note: 'x', score: 99 } }),
      create('fine'),
      { _id: one._id, name: 'first' },
      { _id: one._id, name: 'second' },
      { name: 'no form', data: {}, context: { knowledge_unit_topic_id: revision } },
    ]);
    expect(res.status).toBe(422);
    const named = res.body.detail.map((item: { loc: unknown[]; type: string }) => [item.loc, item.type]);
    expect(named).toEqual([
      [['body', 'records', 0, 'name'], 'string_too_short'],
      [['body', 'records', 0, 'data', 'score'], expect.any(String)],
      [['body', 'records', 3, '_id'], 'duplicate_record'],
      [['body', 'records', 4, 'form'], 'missing'],
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it('an Idempotency-Key makes a repeat answer the first answer and write nothing', async () => {
    const target = await single('keyed target');
    const items = [create('keyed 1'), { _id: target._id, version: '1.0', name: 'keyed change' }];
    const first = await bulk(items, { idempotencyKey: 'bulk-key-1' });
    expect(first.status, first.text).toBe(200);
    const after = await snapshot();
    const again = await bulk(items, { idempotencyKey: 'bulk-key-1' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await snapshot()).toEqual(after);

    const other = await bulk([create('keyed 2')], { idempotencyKey: 'bulk-key-1' });
    expect(other.status).toBe(422);
    expect(other.body.detail[0]).toMatchObject({ type: 'idempotency_key_reused' });

    // Records the request wrote, deleted since: 410 naming them; nothing is written.
    const created = first.body.records[0]._id as string;
    expect((await t.api('DELETE', `/records/${created}`)).status).toBe(204);
    const deleted = await snapshot();
    const gone = await bulk(items, { idempotencyKey: 'bulk-key-1' });
    expect(gone.status).toBe(410);
    expect(gone.body.detail).toMatch(new RegExp(`Record ${created} \\(item 0\\) on .* was deleted since`));
    expect(await snapshot()).toEqual(deleted);
  });

  it("an item's own idempotency_key is its single write's: answered from it, or refused as deleted_since", async () => {
    const body = create('item keyed');
    const alone = await t.api('POST', '/records/', { body, headers: { 'idempotency-key': 'item-key-1' } });
    expect(alone.status).toBe(201);
    const before = await snapshot();
    const res = await bulk([{ ...body, idempotency_key: 'item-key-1' }]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.records).toEqual([
      { _id: alone.body._id, version: '1.0', created: true, replayed: true },
    ]);
    expect(await snapshot()).toEqual(before);

    // Written by a bulk request, the key answers a single write alike.
    const fresh = create('item keyed 2');
    const viaBulk = await bulk([{ ...fresh, idempotency_key: 'item-key-2' }]);
    const viaSingle = await t.api('POST', '/records/', {
      body: fresh,
      headers: { 'idempotency-key': 'item-key-2' },
    });
    expect(viaSingle.status).toBe(201);
    expect(viaSingle.body._id).toBe(viaBulk.body.records[0]._id);

    expect((await t.api('DELETE', `/records/${alone.body._id}`)).status).toBe(204);
    const refused = await bulk([create('other'), { ...body, idempotency_key: 'item-key-1' }]);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'records', 1], type: 'deleted_since' }),
    ]);
    const reused = await bulk([{ ...create('not the same'), idempotency_key: 'item-key-2' }]);
    expect(reused.body.detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'records', 0, 'idempotency_key'],
        type: 'idempotency_key_reused',
      }),
    ]);
  });

  it("keeps tenants apart: another tenant's key writes nothing here and replays nothing of ours", async () => {
    const theirs = t.demo.otherTenant.users.owner.apiKey;
    const ours = await bulk([create('ours')], { idempotencyKey: 'shared-key' });
    expect(ours.status).toBe(200);
    const before = await snapshot();
    const res = await bulk([create('theirs')], { key: theirs, idempotencyKey: 'shared-key' });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'records', 0], type: 'not_found' });
    expect(await snapshot()).toEqual(before);
    const viewer = await bulk([create('viewer')], { key: t.demo.tenant.users.viewer.apiKey });
    expect(viewer.status).toBe(403);
  });

  it('bounds: more than 1,000 items is 422 naming the limit, a body over the limit 413, fast and never 500', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => create(`n${i}`));
    const before = await snapshot();
    let started = performance.now();
    const tooMany = await bulk(many);
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'records'],
        type: 'too_long',
        msg: expect.stringMatching(/1000/),
      }),
    ]);
    expect(performance.now() - started).toBeLessThan(5_000);

    const huge = JSON.stringify({ records: [create('x', { data: { note: 'x'.repeat(20 * 2 ** 20) } })] });
    started = performance.now();
    const tooBig = await t.api('POST', '/records/bulk', { rawBody: huge });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.detail).toMatch(/larger than the limit of \d+ bytes/);
    expect(performance.now() - started).toBeLessThan(5_000);

    for (const body of [
      '[]',
      '{"records":{}}',
      '{}',
      '{"records":[1,null,"x"]}',
      '{"records":[{"_id":"nope"}]}',
    ]) {
      const res = await t.api('POST', '/records/bulk', { rawBody: body });
      expect(res.status, `${body}: ${res.text}`).toBe(422);
    }
    expect(await snapshot()).toEqual(before);

    const full = await bulk(Array.from({ length: 1000 }, (_, i) => create(`full ${i}`)));
    expect(full.status, full.text.slice(0, 500)).toBe(200);
    expect(full.body.records).toHaveLength(1000);
  });

  it("a record inserted again under a deleted record's id continues its version numbers", async () => {
    const gone = await single('gone');
    expect((await t.api('DELETE', `/records/${gone._id}`)).status).toBe(204);
    const userId = ((await t.api('GET', `/records/${gone._id}/versions/1`)).body as { user_id: string })
      .user_id;
    const { storage } = t.server;
    const row = {
      id: gone._id,
      tenant_id: t.demo.tenant.id,
      kt_revision_id: revision,
      name: 'again',
      form: '{}',
      version: '1.0',
      data: '{"note":"again"}',
      read_only: 0,
      context: '{}',
      created_by: userId,
      created_at: new Date().toISOString(),
      updated_by: null,
      updated_at: null,
      last_action: 'created',
    };
    await storage.db
      .transaction()
      .execute((trx) => insertRecords(trx, [row], changeActor({ userId, via: 'local' })));
    const history = (await versions(gone._id)) as { n: number; action: string }[];
    expect(history.map((v) => [v.n, v.action])).toEqual([
      [3, 'created'],
      [2, 'deleted'],
      [1, 'created'],
    ]);
  });

  it('is in the OpenAPI document', async () => {
    const doc = await t.api('GET', '/openapi.json', { key: null });
    const operation = doc.body.paths['/records/bulk'].post;
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining(['200', '410', '413', '422', '429']),
    );
    expect(operation.requestBody.content['application/json'].schema.properties.records.maxItems).toBe(1000);
  });
});
