import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

/** Timestamps have millisecond resolution: a pause makes "before" and "after" distinct moments. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));
const moment = async () => {
  await tick();
  const at = new Date().toISOString();
  await tick();
  return at;
};
const ids = (records: { _id: string }[]) => records.map((r) => r._id).sort();

describe('record history: versions, as_of, restore, approvals, baselines', () => {
  let t: TestServer;
  let revision: string;
  let testsRevision: string;
  const body = (data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    name: 'REQ-H',
    form: {},
    data,
    context: { knowledge_unit_topic_id: revision },
    ...extra,
  });
  const list = async (query: string) => {
    const res = await t.api('GET', `/records/?${query}`);
    expect(res.status, res.text).toBe(200);
    return res.body as any[];
  };

  beforeAll(async () => {
    t = await startTestServer();
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    testsRevision = t.demo.tenant.topics.verificationTests!.currentRevisionId;
  });
  afterAll(() => t.close());

  it('keeps every version of a record with who, when and why, newest first and paged', async () => {
    const created = await t.api('POST', '/records/', {
      body: body({ name: 'Pump pressure' }, { change_reason: 'new requirement' }),
    });
    expect(created.status).toBe(201);
    const id = created.body._id;
    const editorKey = t.demo.tenant.users.editor.apiKey;
    for (const [i, reason] of ['typo', 'review finding 12', 'customer request'].entries()) {
      const res = await t.api('PATCH', `/records/${id}`, {
        key: editorKey,
        body: { data: { name: `Pump pressure v${i + 2}` }, change_reason: reason },
      });
      expect(res.status).toBe(200);
    }

    const first = await t.api('GET', `/records/${id}/versions?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.map((v: any) => v.n)).toEqual([4, 3]);
    expect(first.body[0]).toMatchObject({
      record_id: id,
      action: 'updated',
      reason: 'customer request',
      user_email: t.demo.tenant.users.editor.email,
      via: 'api-key',
      record: { _id: id, version: '4.0', data: { name: 'Pump pressure v4' } },
    });
    expect(first.body[0].key_id).toMatch(/\S/);
    const link = first.headers.get('link');
    expect(link).toMatch(/before=3/);
    const next = await t.api('GET', `/records/${id}/versions${link!.slice(1, link!.indexOf('>'))}`);
    expect(next.body.map((v: any) => v.n)).toEqual([2, 1]);
    expect(next.body[1]).toMatchObject({ action: 'created', reason: 'new requirement' });
    expect(next.body[1].record).toEqual(created.body);

    const one = await t.api('GET', `/records/${id}/versions/2`);
    expect(one.body).toMatchObject({ n: 2, reason: 'typo', record: { data: { name: 'Pump pressure v2' } } });
    expect((await t.api('GET', `/records/${id}/versions/9`)).status).toBe(404);
  });

  it('a deleted record keeps its history, and a restore brings it back as it was', async () => {
    const created = await t.api('POST', '/records/', { body: body({ name: 'Alarm volume' }) });
    const id = created.body._id;
    const deleted = await t.api(
      'DELETE',
      `/records/${id}?change_reason=${encodeURIComponent('duplicate of REQ-7')}`,
    );
    expect(deleted.status).toBe(204);
    expect((await t.api('GET', `/records/${id}`)).status).toBe(404);
    const history = await t.api('GET', `/records/${id}/versions`);
    expect(history.body.map((v: any) => [v.n, v.action, v.reason])).toEqual([
      [2, 'deleted', 'duplicate of REQ-7'],
      [1, 'created', null],
    ]);
    expect(history.body[0].record.data).toEqual({ name: 'Alarm volume' });

    const viewer = await t.api('POST', `/records/${id}/restore`, { key: t.demo.tenant.users.viewer.apiKey });
    expect(viewer.status).toBe(403);
    const restored = await t.api('POST', `/records/${id}/restore`, {
      body: { change_reason: 'not a duplicate' },
    });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ _id: id, data: { name: 'Alarm volume' }, version: '2.0' });
    expect((await t.api('GET', `/records/${id}`)).body).toEqual(restored.body);
    expect((await t.api('POST', `/records/${id}/restore`)).status).toBe(409);
    const last = await t.api('GET', `/records/${id}/versions?limit=1`);
    expect(last.body[0]).toMatchObject({ n: 3, action: 'restored', reason: 'not a duplicate' });
  });

  it('as_of lists the records exactly as they were, with every filter of the listing', async () => {
    const a = (await t.api('POST', '/records/', { body: body({ name: 'A' }) })).body;
    const b = (await t.api('POST', '/records/', { body: body({ name: 'B' }) })).body;
    const before = await moment();
    const beforeAll = await list(`context__knowledge_unit_topic_id=${revision}`);
    await t.api('PATCH', `/records/${a._id}`, { body: { data: { name: 'A changed' } } });
    await t.api('DELETE', `/records/${b._id}`);
    const c = (await t.api('POST', '/records/', { body: body({ name: 'C' }) })).body;

    const then = await list(`context__knowledge_unit_topic_id=${revision}&as_of=${before}`);
    expect(then).toEqual(beforeAll);
    expect(then.find((r) => r._id === a._id)).toEqual(a);
    expect(then.find((r) => r._id === b._id)).toEqual(b);
    expect(then.some((r) => r._id === c._id)).toBe(false);

    const byIds = await list(`id__in=${a._id},${b._id},${c._id}&as_of=${before}`);
    expect(byIds).toEqual([a, b]);
    const byList = await list(
      `context__knowledge_unit_topic_id__in=${revision},${testsRevision}&as_of=${before}`,
    );
    expect(ids(byList)).toEqual(
      ids([
        ...beforeAll,
        ...(await list(`context__knowledge_unit_topic_id=${testsRevision}&as_of=${before}`)),
      ]),
    );
    const createdSince = await list(
      `context__knowledge_unit_topic_id=${revision}&audit_info__start_date=${a.audit_info.timestamp_created}&as_of=${before}`,
    );
    expect(ids(createdSince)).toEqual(ids([a, b]));

    // Paging with limit/after walks the same listing.
    const paged: any[] = [];
    let after = '';
    for (;;) {
      const page = await list(
        `context__knowledge_unit_topic_id=${revision}&as_of=${before}&limit=2${after ? `&after=${after}` : ''}`,
      );
      paged.push(...page);
      if (page.length < 2) break;
      after = page[page.length - 1]._id;
    }
    expect(paged).toEqual(beforeAll);

    // The record itself, then and now.
    expect((await t.api('GET', `/records/${a._id}?as_of=${before}`)).body).toEqual(a);
    expect((await t.api('GET', `/records/${c._id}?as_of=${before}`)).status).toBe(404);
    expect((await t.api('GET', `/records/${b._id}?as_of=${before}`)).body).toEqual(b);
  });

  it('as_of across a re-approval: the old revision id gives the records as approved then', async () => {
    const before = await moment();
    const recordsThen = await list(`context__knowledge_unit_topic_id=${revision}`);
    const topicThen = (await t.api('GET', `/kt/${revision}`)).body;
    const draft = await t.api('POST', `/kt/${revision}/draft`);
    expect(draft.status).toBe(201);
    const approved = await t.api('POST', `/kt/${draft.body._id}/approve`, {
      body: { meaning: 'reviewed', reason: 'design review 3' },
    });
    expect(approved.status).toBe(200);
    const after = await moment();
    const newRevision = approved.body._id as string;

    // Now the records live under the new revision; the old id lists nothing.
    expect(await list(`context__knowledge_unit_topic_id=${revision}`)).toEqual([]);
    // As of before the re-approval, the old id lists them exactly as they were then.
    expect(await list(`context__knowledge_unit_topic_id=${revision}&as_of=${before}`)).toEqual(recordsThen);
    expect(await list(`context__knowledge_unit_topic_id=${revision}&as_of=${after}`)).toEqual([]);
    expect(ids(await list(`context__knowledge_unit_topic_id=${newRevision}&as_of=${after}`))).toEqual(
      ids(recordsThen),
    );
    expect(await list(`context__knowledge_unit_topic_id=${newRevision}&as_of=${before}`)).toEqual([]);
    // The topic as it was: the old revision was then the current one.
    const topicAsOf = await t.api('GET', `/kt/${revision}?as_of=${before}`);
    expect(topicAsOf.body).toEqual(topicThen);
    expect((await t.api('GET', `/kt/${revision}`)).body.latest_revision_id).toBe(newRevision);
    expect((await t.api('GET', `/kt/${newRevision}?as_of=${before}`)).status).toBe(404);
    // The move is a version of each record.
    const moved = await t.api('GET', `/records/${recordsThen[0]._id}/versions?limit=1`);
    expect(moved.body[0]).toMatchObject({ action: 'moved' });
    expect(moved.body[0].record.context.knowledge_unit_topic_id).toBe(newRevision);

    const approval = await t.api('GET', `/kt/${newRevision}/approval`);
    expect(approval.body).toMatchObject({
      revision_id: newRevision,
      meaning: 'reviewed',
      reason: 'design review 3',
      signature: 'api-key',
      approved_by_email: t.demo.tenant.users.owner.email,
    });
    const opened = await t.api('POST', `/kt/${newRevision}/draft`);
    expect((await t.api('GET', `/kt/${opened.body._id}/approval`)).status).toBe(404);
    revision = newRevision;
  });

  it('traces as_of: created and deleted ones as they were', async () => {
    const source = (await t.api('POST', '/records/', { body: body({ name: 'S' }) })).body._id;
    const target = (await t.api('POST', '/records/', { body: body({ name: 'T' }) })).body._id;
    const trace = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: source, node_type: 'Record' },
        target: { node_id: target, node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    expect(trace.status).toBe(201);
    const withTrace = await moment();
    expect((await t.api('DELETE', `/traces/${trace.body._id}`)).status).toBe(204);
    const edgesAt = async (asOf?: string) => {
      const res = await t.api('POST', '/traces/batch/list', {
        body: {
          nodes: [{ node_id: source, node_type: 'Record', version: '' }],
          ...(asOf && { as_of: asOf }),
        },
      });
      expect(res.status, res.text).toBe(200);
      return res.body.results[source].edges.map((e: any) => e._id);
    };
    expect(await edgesAt()).toEqual([]);
    expect(await edgesAt(withTrace)).toEqual([trace.body._id]);
  });

  it('baselines: created once, listed, read, never renamed over', async () => {
    const at = await moment();
    const created = await t.api('POST', '/baselines/', {
      body: {
        name: 'v1.0',
        description: 'Design freeze',
        knowledge_topic_revision_ids: [revision, testsRevision],
        at,
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'v1.0',
      at,
      knowledge_topic_revision_ids: [revision, testsRevision],
    });
    const again = await t.api('POST', '/baselines/', {
      body: { name: 'v1.0', knowledge_topic_revision_ids: [revision] },
    });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already exists/);
    expect((await t.api('GET', `/baselines/${created.body._id}`)).body).toEqual(created.body);
    expect((await t.api('GET', '/baselines/?name=v1.0')).body).toEqual([created.body]);
    const viewer = t.demo.tenant.users.viewer.apiKey;
    expect((await t.api('GET', '/baselines/', { key: viewer })).status).toBe(200);
    expect(
      (
        await t.api('POST', '/baselines/', {
          key: viewer,
          body: { name: 'v2', knowledge_topic_revision_ids: [revision] },
        })
      ).status,
    ).toBe(403);
    const unknown = await t.api('POST', '/baselines/', {
      body: {
        name: 'v3',
        knowledge_topic_revision_ids: [t.demo.tenant.topics.systemRequirements!.historyId],
      },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0].msg).toMatch(/not a KT revision/);
  });

  it("another tenant's record history, versions and baselines are 404", async () => {
    const other = t.demo.otherTenant.users.owner.apiKey;
    const id = t.demo.tenant.topics.systemRequirements!.recordIds[0]!;
    expect((await t.api('GET', `/records/${id}/versions`, { key: other })).status).toBe(404);
    expect((await t.api('GET', `/records/${id}/versions/1`, { key: other })).status).toBe(404);
    expect((await t.api('POST', `/records/${id}/restore`, { key: other })).status).toBe(404);
    const baseline = (await t.api('GET', '/baselines/?name=v1.0')).body[0];
    expect((await t.api('GET', `/baselines/${baseline._id}`, { key: other })).status).toBe(404);
    expect((await t.api('GET', '/baselines/', { key: other })).body).toEqual([]);
    expect((await t.api('GET', `/kt/${revision}/approval`, { key: other })).status).toBe(404);
    expect((await t.api('GET', `/records/${id}/versions`, { key: null })).status).toBe(401);
  });

  it('refuses an as_of that is not ISO 8601, in the future or before the tenant existed, never with a 500', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const bad = [
      'yesterday',
      '2026-13-01',
      '1e9',
      '2026-11-01T25:00',
      'x'.repeat(41),
      '2026-02-30',
      future,
      '2001-01-01',
    ];
    for (const value of bad) {
      for (const [method, path, asBody] of [
        ['GET', `/records/?as_of=${encodeURIComponent(value)}`, false],
        [
          'GET',
          `/records/${t.demo.tenant.topics.systemRequirements!.recordIds[0]}?as_of=${encodeURIComponent(value)}`,
          false,
        ],
        ['GET', `/kt/${revision}?as_of=${encodeURIComponent(value)}`, false],
        ['POST', '/traces/batch/list', true],
        ['POST', '/baselines/', true],
      ] as const) {
        const res = await t.api(method, path, {
          body: !asBody
            ? undefined
            : path === '/baselines/'
              ? { name: `b-${Math.random()}`, knowledge_topic_revision_ids: [revision], at: value }
              : { nodes: [{ node_id: revision, node_type: 'Record', version: '' }], as_of: value },
        });
        expect(res.status, `${method} ${path} ${value}: ${res.text}`).toBe(422);
        expect(res.body.detail[0].msg, `${method} ${path}`).toMatch(
          /ISO 8601|at most|future|before your tenant|no such/i,
        );
      }
    }
    const reason = await t.api('POST', '/records/', {
      body: body({ name: 'R' }, { change_reason: 'x'.repeat(2001) }),
    });
    expect(reason.status).toBe(422);
    for (const n of ['0', '-1', '1e30', 'abc', '99999999999']) {
      const res = await t.api(
        'GET',
        `/records/${t.demo.tenant.topics.systemRequirements!.recordIds[0]}/versions/${n}`,
      );
      expect(res.status, `${n}: ${res.text}`).toBe(422);
    }
    for (const query of ['limit=0', 'limit=abc', 'limit=100000', 'before=0', 'before=x']) {
      const res = await t.api(
        'GET',
        `/records/${t.demo.tenant.topics.systemRequirements!.recordIds[0]}/versions?${query}`,
      );
      expect(res.status, `${query}: ${res.text}`).toBe(422);
    }
    const many = await t.api('POST', '/baselines/', {
      body: { name: 'too many', knowledge_topic_revision_ids: Array.from({ length: 101 }, () => revision) },
    });
    expect(many.status).toBe(422);
    for (const name of ['', ' ', 'n'.repeat(201)]) {
      const res = await t.api('POST', '/baselines/', {
        body: { name, knowledge_topic_revision_ids: [revision] },
      });
      expect(res.status, JSON.stringify(name)).toBe(422);
    }
  });

  it('history is append-only in the database itself', async () => {
    const db = t.server.storage.db;
    const version = await db
      .selectFrom('record_versions')
      .select(['record_id', 'n'])
      .limit(1)
      .executeTakeFirstOrThrow();
    await expect(
      db
        .updateTable('record_versions')
        .set({ reason: 'rewritten' })
        .where('record_id', '=', version.record_id)
        .execute(),
    ).rejects.toThrow();
    await expect(
      db.deleteFrom('record_versions').where('record_id', '=', version.record_id).execute(),
    ).rejects.toThrow();
    await expect(db.deleteFrom('trace_events').execute()).rejects.toThrow();
    await expect(db.deleteFrom('kt_revision_versions').execute()).rejects.toThrow();
    await expect(db.deleteFrom('baselines').execute()).rejects.toThrow();
  });
});
