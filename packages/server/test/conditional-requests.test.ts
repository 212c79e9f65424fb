import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic as approvedTopicOf, createNoteRecord } from './support/topics.js';

/**
 * Conditional GETs (RFC 9110): `GET /records/` (every filter) and `GET /kt/{id}` answer a strong
 * ETag; If-None-Match with it answers 304 without a body while nothing changed. The listing's tag
 * moves with every change of a record under the listed revisions, and with nothing else.
 */
describe('conditional requests: ETag and 304', () => {
  let t: TestServer;
  let schema: unknown;
  const get = (path: string, etag?: string, key?: string) =>
    t.api('GET', path, { ...(key && { key }), headers: etag ? { 'if-none-match': etag } : {} });
  const listing = (revision: string, extra = '') =>
    `/records/?context__knowledge_unit_topic_id=${revision}${extra}`;

  const approvedTopic = (name: string) => approvedTopicOf(t, name, { schema });
  const create = (revision: string, text: string) => createNoteRecord(t, revision, text);

  beforeAll(async () => {
    t = await startTestServer();
    schema = { components: [{ type: 'textarea', key: 'note', label: 'Note' }] };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers a strong ETag; If-None-Match with it is 304 without a body, also weak or in a list', async () => {
    const revision = await approvedTopic('Conditional basics');
    await create(revision, 'first');
    const first = await get(listing(revision));
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');

    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get(listing(revision), header);
      expect(again.status, header).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
    }
    expect((await get(listing(revision), '"something else"')).status).toBe(200);
    // Every filter has its own tag; each answers 304 to its own.
    for (const extra of [
      '&limit=1',
      '&audit_info__start_date=2020-01-01',
      `&as_of=${new Date().toISOString()}`,
    ]) {
      const filtered = await get(listing(revision, extra));
      expect(filtered.status).toBe(200);
      expect(filtered.headers.get('etag')).not.toBe(etag);
      expect((await get(listing(revision, extra), filtered.headers.get('etag')!)).status).toBe(304);
    }
    // Errors stay errors: a bad filter is 422, whatever the tag.
    expect((await get('/records/?audit_info__start_date=yesterday', etag)).status).toBe(422);
  });

  it('a change under the revision changes the tag; traces, topics, other revisions and other tenants do not', async () => {
    const revision = await approvedTopic('Conditional changes');
    const other = await approvedTopic('Conditional elsewhere');
    const a = await create(revision, 'a');
    const b = await create(revision, 'b');
    const elsewhere = await create(other, 'elsewhere');
    let etag = (await get(listing(revision))).headers.get('etag')!;
    const unchanged = async (what: string) =>
      expect((await get(listing(revision), etag)).status, what).toBe(304);
    const changed = async (what: string) => {
      const now = await get(listing(revision), etag);
      expect(now.status, what).toBe(200);
      expect(now.headers.get('etag'), what).not.toBe(etag);
      etag = now.headers.get('etag')!;
    };

    await t.api('POST', '/traces/', {
      body: {
        source: { node_id: a._id, node_type: 'Record' },
        target: { node_id: b._id, node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    await unchanged('a trace');
    await t.api('PATCH', `/records/${elsewhere._id}`, { body: { data: { note: 'changed elsewhere' } } });
    await create(other, 'more elsewhere');
    await unchanged('records of another revision');
    await t.api('POST', '/kt/', {
      body: { knowledge_topic_name: 'Unrelated', type: 'multi_record', knowledge_topic_schema: schema },
    });
    await unchanged('another topic');
    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    const theirs = await t.api('POST', '/kt/', {
      key: otherKey,
      body: { knowledge_topic_name: 'Theirs', type: 'multi_record', knowledge_topic_schema: schema },
    });
    const theirRevision = (await t.api('POST', `/kt/${theirs.body._id}/approve`, { key: otherKey })).body._id;
    await t.api('POST', '/records/', {
      key: otherKey,
      body: { name: 'theirs', form: {}, data: {}, context: { knowledge_unit_topic_id: theirRevision } },
    });
    await unchanged("another tenant's writes");
    const failed = await t.api('PATCH', `/records/${a._id}`, {
      body: { data: { note: 'x' }, version: '9.9' },
    });
    expect(failed.status).toBe(409);
    await unchanged('a refused change');

    await create(revision, 'c');
    await changed('a create');
    await t.api('PATCH', `/records/${a._id}`, { body: { data: { note: 'a, changed' } } });
    await changed('a change');
    await t.api('DELETE', `/records/${b._id}`);
    await changed('a delete');
    await t.api('POST', `/records/${b._id}/restore`);
    await changed('a restore');

    // A re-approval moves the records: the old revision's listing and the new one's both change.
    const draft = await t.api('POST', `/kt/${revision}/draft`);
    await unchanged('a draft opened');
    const next = (await t.api('POST', `/kt/${draft.body._id}/approve`)).body._id as string;
    await changed('the records moved away');
    expect((await get(listing(revision), etag)).status).toBe(304);
    const moved = await get(listing(next));
    expect(moved.body).toHaveLength(3);
  });

  it("tags never cross tenants: another tenant's tag for the same listing is not honoured", async () => {
    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    const revision = await approvedTopic('Conditional tenants');
    const mine = await get(listing(revision));
    // The same URL with tenant B's key lists nothing (B cannot see the revision), under a tag of its own.
    const theirs = await get(listing(revision), undefined, otherKey);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual([]);
    expect(theirs.headers.get('etag')).not.toBe(mine.headers.get('etag'));
    expect((await get(listing(revision), mine.headers.get('etag')!, otherKey)).status).toBe(200);
    expect((await get(listing(revision), theirs.headers.get('etag')!)).status).toBe(200);
    // No key: 401 before any tag is looked at.
    expect(
      (await t.api('GET', listing(revision), { key: null, headers: { 'if-none-match': '*' } })).status,
    ).toBe(401);
  });

  it("POST /traces/batch/list: 412 while the tenant's traces are unchanged; a trace created or deleted changes the tag", async () => {
    const revision = await approvedTopic('Conditional traces');
    const a = (await create(revision, 'a'))._id as string;
    const b = (await create(revision, 'b'))._id as string;
    const batch = { nodes: [{ node_id: a, node_type: 'Record', version: '1' }], n_hops: 2 };
    const ask = (etag?: string, key?: string) =>
      t.api('POST', '/traces/batch/list', {
        body: batch,
        ...(key && { key }),
        headers: etag ? { 'if-none-match': etag } : {},
      });
    const first = await ask();
    expect(first.status).toBe(200);
    let etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const unchanged = await ask(etag);
    expect(unchanged.status).toBe(412);
    expect(unchanged.body.detail).toMatch(/Not modified/);
    expect(unchanged.text).not.toContain('results');

    // A record write moves it: the answer shows the record's version and audit info.
    await t.api('PATCH', `/records/${a}`, { body: { data: { note: 'changed' } } });
    const afterWrite = await ask(etag);
    expect(afterWrite.status).toBe(200);
    expect(afterWrite.body.results[a].source_node.version).not.toBe(
      first.body.results[a].source_node.version,
    );
    etag = afterWrite.headers.get('etag')!;
    // Another tenant's traces leave it; this tenant's trace changes move it.
    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    const theirs = t.demo.otherTenant.topics.riskRegister!.recordIds;
    expect(
      (
        await t.api('POST', '/traces/', {
          key: otherKey,
          body: {
            source: { node_id: theirs[0], node_type: 'Record' },
            target: { node_id: theirs[1], node_type: 'Record' },
            relation_type: 'mentions',
          },
        })
      ).status,
    ).toBe(201);
    expect((await ask(etag)).status).toBe(412);
    // Their tag for the same body is theirs: never honoured across tenants.
    expect((await ask(etag, otherKey)).status).toBe(200);

    const link = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: a, node_type: 'Record' },
        target: { node_id: b, node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    const linked = await ask(etag);
    expect(linked.status).toBe(200);
    expect(linked.body.results[a].edges.map((e: { _id: string }) => e._id)).toEqual([link.body._id]);
    etag = linked.headers.get('etag')!;
    expect((await t.api('DELETE', `/traces/${link.body._id}`)).status).toBe(204);
    const unlinked = await ask(etag);
    expect(unlinked.status).toBe(200);
    expect(unlinked.body.results[a].edges).toEqual([]);
    // Deleting a record deletes its traces: that changes the tag too.
    etag = unlinked.headers.get('etag')!;
    await t.api('POST', '/traces/', {
      body: {
        source: { node_id: b, node_type: 'Record' },
        target: { node_id: a, node_type: 'Record' },
        relation_type: 'mentions',
      },
    });
    etag = (await ask()).headers.get('etag')!;
    expect((await t.api('DELETE', `/records/${b}`)).status).toBe(204);
    expect((await ask(etag)).status).toBe(200);
  });

  it('with_revision: the listing tag also moves with the revision itself, and only then differs from the plain tag', async () => {
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Conditional with revision',
        type: 'multi_record',
        knowledge_topic_schema: schema,
      },
    });
    const revision = draft.body._id as string;
    const plainPath = listing(revision, '&limit=1');
    const coveredPath = listing(revision, '&limit=1&with_revision=true');
    const tags = async () => [
      (await get(plainPath)).headers.get('etag')!,
      (await get(coveredPath)).headers.get('etag')!,
    ];
    const [plain, covered] = await tags();
    expect(covered).not.toBe(plain);
    expect((await get(coveredPath, covered)).status).toBe(304);
    // An edit of the revision (not of its records): the covering tag moves, the plain one stays.
    expect(
      (await t.api('PATCH', `/kt/${revision}`, { body: { knowledge_topic_name: 'Renamed' } })).status,
    ).toBe(200);
    const [plain2, covered2] = await tags();
    expect(plain2).toBe(plain);
    expect(covered2).not.toBe(covered);
    expect((await get(coveredPath, covered)).status).toBe(200);
    // Its approval too; and a record change moves both.
    expect((await t.api('POST', `/kt/${revision}/approve`)).status).toBe(200);
    const [plain3, covered3] = await tags();
    expect(covered3).not.toBe(covered2);
    await create(revision, 'a record');
    const [plain4, covered4] = await tags();
    expect(plain4).not.toBe(plain3);
    expect(covered4).not.toBe(covered3);
    // Another tenant's key: the revision is not theirs, and their tag is another.
    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    expect((await get(coveredPath, covered4, otherKey)).status).toBe(200);
  });

  it('GET /kt/{id}: 304 while the revision is unchanged, 200 with a new tag after an edit', async () => {
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Conditional topic',
        type: 'multi_record',
        knowledge_topic_schema: schema,
      },
    });
    const path = `/kt/${draft.body._id}`;
    const first = await get(path);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect((await get(path, etag)).status).toBe(304);
    await t.api('PATCH', path, { body: { knowledge_topic_name: 'Conditional topic, renamed' } });
    const edited = await get(path, etag);
    expect(edited.status).toBe(200);
    expect(edited.body.knowledge_topic_name).toBe('Conditional topic, renamed');
    expect(edited.headers.get('etag')).not.toBe(etag);
    await t.api('POST', `${path}/approve`);
    expect((await get(path, edited.headers.get('etag')!)).status).toBe(200);
  });

  it('property: after random changes, the tag changes exactly when the listing’s bytes do', async () => {
    const revision = await approvedTopic('Conditional property');
    const other = await approvedTopic('Conditional property, other');
    const live: string[] = [];
    const deleted: string[] = [];
    type Step =
      | { kind: 'create'; text: string; here: boolean }
      | { kind: 'update'; pick: number; text: string }
      | { kind: 'delete'; pick: number }
      | { kind: 'restore'; pick: number }
      | { kind: 'link'; from: number; to: number }
      | { kind: 'read' };
    const text = fc.string({ unit: fc.constantFrom('a', 'b', '\n', '"', '<', 'é', ' '), maxLength: 12 });
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant('create' as const), text, here: fc.boolean() }),
      fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), text }),
      fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('restore' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('link' as const), from: fc.nat(), to: fc.nat() }),
      fc.record({ kind: fc.constant('read' as const) }),
    );
    const state = async () => {
      const res = await get(listing(revision));
      return { etag: res.headers.get('etag')!, text: res.text };
    };
    let before = await state();
    let transitions = 0;
    let sameBytes = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 25 }), async (steps) => {
        for (const s of steps) {
          if (s.kind === 'create') {
            const created = await create(s.here ? revision : other, s.text);
            if (s.here) live.push(created._id);
          } else if (s.kind === 'update' && live.length) {
            const id = live[s.pick % live.length]!;
            await t.api('PATCH', `/records/${id}`, { body: { data: { note: s.text } } });
          } else if (s.kind === 'delete' && live.length) {
            const [id] = live.splice(s.pick % live.length, 1);
            await t.api('DELETE', `/records/${id}`);
            deleted.push(id!);
          } else if (s.kind === 'restore' && deleted.length) {
            const [id] = deleted.splice(s.pick % deleted.length, 1);
            expect((await t.api('POST', `/records/${id}/restore`)).status).toBe(200);
            live.push(id!);
          } else if (s.kind === 'link' && live.length > 1) {
            await t.api('POST', '/traces/', {
              body: {
                source: { node_id: live[s.from % live.length], node_type: 'Record' },
                target: {
                  node_id: live[(s.from + 1 + (s.to % (live.length - 1))) % live.length],
                  node_type: 'Record',
                },
                relation_type: 'mentions',
              },
            });
          }
          const after = await state();
          // Same tag, same bytes (the guarantee a poller relies on); different bytes, different tag.
          if (after.etag === before.etag) expect(after.text).toBe(before.text);
          else transitions++;
          if (after.text === before.text) {
            sameBytes++;
            expect(after.etag, `${s.kind} left the listing as it was`).toBe(before.etag);
          }
          expect((await get(listing(revision), after.etag)).status).toBe(304);
          before = after;
        }
      }),
      // Enough runs that the steps surely move the listing and leave it alone several times each
      // (with fewer, creates elsewhere and skipped steps can leave too few moves to count).
      { numRuns: 20 },
    );
    expect(transitions).toBeGreaterThan(5);
    expect(sameBytes).toBeGreaterThan(5);
  }, 120_000);
});
