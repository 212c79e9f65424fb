import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, recordText, RxsApiError } from '@rxs/client';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic as approvedTopicOf, createNote, reapprove as reapproveOf } from './support/topics.js';

interface Feed {
  revision_id: string;
  superseded_by: string | null;
  cursor: string;
  more: boolean;
  complete: boolean;
  records: { _id: string; [key: string]: unknown }[];
  removed: string[];
}

/**
 * The records changes feed (`GET /records/changes`): a client that starts without `since` and then
 * applies each page (records put in place, removed ids dropped) holds exactly the listing of
 * `GET /records/`, whatever happened in between: creates, changes, deletions, restores, re-approvals,
 * and pages that end inside a re-approval's move.
 */
describe('records changes feed', () => {
  let t: TestServer;
  const schema = { components: [{ type: 'textarea', key: 'note', label: 'Note' }] };
  const feedPath = (revision: string, since?: string, limit?: number) =>
    `/records/changes?context__knowledge_unit_topic_id=${revision}` +
    (since === undefined ? '' : `&since=${encodeURIComponent(since)}`) +
    (limit === undefined ? '' : `&limit=${limit}`);

  const approvedTopic = (name: string, key?: string) => approvedTopicOf(t, name, { key, schema });
  const reapprove = (revision: string) => reapproveOf(t, revision);
  const create = (revision: string, text: string) => createNote(t, revision, text);
  async function feed(revision: string, since?: string, limit?: number, key?: string): Promise<Feed> {
    const res = await t.api('GET', feedPath(revision, since, limit), { ...(key && { key }) });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('rxs-next-cursor')).toBe(res.body.cursor);
    // One record per line, as listings are: each line parses on its own.
    const lines = res.text.split('\n');
    const recordLines = lines.slice(1).filter((line) => line.startsWith('{"_id"'));
    expect(recordLines.map((line) => JSON.parse(line.replace(/,$/, '')))).toEqual(res.body.records);
    return res.body as Feed;
  }
  async function listing(revision: string): Promise<unknown[]> {
    const res = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    expect(res.status).toBe(200);
    return res.body as unknown[];
  }

  /** A client of the feed: its copy of one revision's listing, kept by applying pages. */
  class Follower {
    copy = new Map<string, unknown>();
    cursor: string | undefined;
    pages = 0;
    constructor(public revision: string) {}
    async poll(limit?: number): Promise<void> {
      for (;;) {
        const page = await feed(this.revision, this.cursor, limit);
        this.pages++;
        if (page.complete) this.copy.clear();
        for (const record of page.records) this.copy.set(record._id, record);
        for (const id of page.removed) this.copy.delete(id);
        this.cursor = page.cursor;
        if (!page.more) return;
      }
    }
    listing(): unknown[] {
      return [...this.copy.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
    }
  }

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('without since: the whole listing and a cursor; then only what changed, each record once', async () => {
    const revision = await approvedTopic('Feed basics');
    const other = await approvedTopic('Feed basics, elsewhere');
    const a = await create(revision, 'a');
    const b = await create(revision, 'b "quoted"\nsecond line');
    await create(other, 'elsewhere');

    const first = await feed(revision);
    expect(first).toMatchObject({
      revision_id: revision,
      superseded_by: null,
      more: false,
      complete: true,
      removed: [],
    });
    expect(first.records).toEqual(await listing(revision));

    // `from=now`: where the feed stands, without the listing (for a client that lists by itself).
    const now = await t.api('GET', `${feedPath(revision)}&from=now`);
    expect(now.body).toMatchObject({ cursor: first.cursor, records: [], removed: [], complete: false });
    expect((await t.api('GET', `${feedPath(revision, first.cursor)}&from=now`)).status).toBe(422);

    // Nothing changed: an empty page, the same place.
    const idle = await feed(revision, first.cursor);
    expect(idle).toMatchObject({ records: [], removed: [], more: false, complete: false });

    // Changes elsewhere (another revision, traces) are not changes of this listing.
    await create(other, 'more elsewhere');
    await t.api('POST', '/traces/', {
      body: {
        source: { node_id: a, node_type: 'Record' },
        target: { node_id: b, node_type: 'Record' },
        relation_type: 'mentions',
      },
    });
    expect((await feed(revision, idle.cursor)).records).toEqual([]);

    // Two changes of a, a delete of b and a new c: a once (as it is now), then c; b removed.
    await t.api('PATCH', `/records/${a}`, { body: { data: { note: 'a1' } } });
    await t.api('PATCH', `/records/${a}`, { body: { data: { note: 'a2' } } });
    expect((await t.api('DELETE', `/records/${b}`)).status).toBe(204);
    const c = await create(revision, 'c "quoted" \\ \t\u2028 ü 😀 </script>');
    const changed = await feed(revision, idle.cursor);
    expect(changed.records.map((r) => r._id)).toEqual([a, c]);
    // Each record's line is the listing's, byte for byte.
    const lineOf = (text: string, id: string) =>
      text
        .split('\n')
        .find((line) => line.startsWith(`{"_id":"${id}"`))
        ?.replace(/,$/, '');
    const listed = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).text;
    const fed = (await t.api('GET', feedPath(revision, idle.cursor))).text;
    for (const id of [a, c]) expect(lineOf(fed, id)).toBe(lineOf(listed, id));
    expect(lineOf(fed, c)).toBeDefined();
    expect((changed.records[0] as { data: unknown }).data).toEqual({ note: 'a2' });
    expect(changed.removed).toEqual([b]);

    // A restore brings b back; a refused change (wrong version) changes nothing.
    expect((await t.api('POST', `/records/${b}/restore`)).status).toBe(200);
    expect(
      (await t.api('PATCH', `/records/${a}`, { body: { data: { note: 'x' }, version: '9.9' } })).status,
    ).toBe(409);
    const restored = await feed(revision, changed.cursor);
    expect(restored.records.map((r) => r._id)).toEqual([b]);
    expect(restored.removed).toEqual([]);
  });

  it("Python's json module reads a page whole, and each record line on its own, as the service meant it", async () => {
    const revision = await approvedTopic('Feed read by Python');
    const start = await feed(revision);
    const ugly = 'a\nb\r\n"q" \\ \u2028\u2029 </script> 😀 \t\u0001\u007f ]},{';
    const id = await create(revision, ugly);
    const res = await t.api('GET', feedPath(revision, start.cursor));
    const script = `
import json, sys
text = sys.stdin.buffer.read().decode('utf-8')
whole = json.loads(text)
lines = [json.loads(l.rstrip(',')) for l in text.split('\\n') if l.startswith('{"_id"')]
print(json.dumps({'whole': whole, 'lines': lines}))`;
    const run = spawnSync('/usr/bin/python3', ['-c', script], { input: res.text });
    expect(run.status, run.stderr?.toString()).toBe(0);
    const read = JSON.parse(run.stdout.toString('utf8'));
    expect(read.whole).toEqual(res.body);
    expect(read.lines).toEqual(res.body.records);
    expect(read.whole.records[0]).toMatchObject({ _id: id, data: { note: ugly } });
  });

  it('a re-approval: the old revision reports its records removed and names the new one; pages may end inside the move', async () => {
    const revision = await approvedTopic('Feed re-approval');
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await create(revision, `r${i}`));
    const start = await feed(revision);
    const next = await reapprove(revision);

    const follower = new Follower(revision);
    follower.cursor = start.cursor;
    // One record a page: the move is one counted step for five records, the cursor goes through it.
    const pages: Feed[] = [];
    let cursor = start.cursor;
    for (;;) {
      const page = await feed(revision, cursor, 1);
      pages.push(page);
      cursor = page.cursor;
      if (!page.more) break;
    }
    expect(pages.flatMap((p) => p.removed).sort()).toEqual([...ids].sort());
    expect(pages.flatMap((p) => p.records)).toEqual([]);
    expect(pages.every((p) => p.superseded_by === next)).toBe(true);
    expect((await feed(revision, cursor)).removed).toEqual([]);

    // The new revision's feed starts with the moved records; its cursor does not fit the old one.
    const moved = await feed(next);
    expect(moved.records.map((r) => r._id).sort()).toEqual([...ids].sort());
    expect(moved.superseded_by).toBeNull();
    const wrong = await t.api('GET', feedPath(revision, moved.cursor));
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail[0].msg).toMatch(/another revision/);
  });

  it('bad cursors are 422 with what to do; cursors and feeds never cross tenants', async () => {
    const revision = await approvedTopic('Feed cursors');
    await create(revision, 'mine');
    const mine = await feed(revision);
    const otherKey = t.demo.otherTenant.users.owner.apiKey;

    for (const since of [
      '',
      'garbage',
      'not a cursor!',
      Buffer.from('c1.99999999.x.y').toString('base64url'),
      'A'.repeat(300),
    ]) {
      const res = await t.api('GET', feedPath(revision, since));
      expect(res.status, since).toBe(422);
      expect(JSON.stringify(res.body.detail), since).toMatch(/since/);
    }
    // A cursor past the revision's newest change was not made by this database.
    const [version, , after, bound] = Buffer.from(mine.cursor, 'base64url').toString().split('.');
    const future = Buffer.from([version, '999999', after, bound].join('.')).toString('base64url');
    const ahead = await t.api('GET', feedPath(revision, future));
    expect(ahead.status).toBe(422);
    expect(ahead.body.detail[0].msg).toMatch(/past the newest change/);

    // Another tenant sees nothing of the revision, and cannot use this tenant's cursor.
    const theirs = await feed(revision, undefined, undefined, otherKey);
    expect(theirs.records).toEqual([]);
    const borrowed = await t.api('GET', feedPath(revision, mine.cursor), { key: otherKey });
    expect(borrowed.status).toBe(422);
    expect(borrowed.body.detail[0].msg).toMatch(/another tenant/);
    expect(borrowed.text).not.toContain('mine');

    // The revision is required; no key is 401; a viewer may read.
    expect((await t.api('GET', '/records/changes')).status).toBe(422);
    expect((await t.api('GET', feedPath(revision), { key: null })).status).toBe(401);
    const viewer = t.demo.tenant.users.viewer?.apiKey;
    if (viewer) expect((await t.api('GET', feedPath(revision), { key: viewer })).status).toBe(200);
    expect((await t.api('GET', feedPath(revision, undefined, 0))).status).toBe(422);
    expect((await t.api('GET', feedPath(revision, undefined, 100_001))).status).toBe(422);
  });

  it('property: a follower applying the feed after random changes holds exactly the listing', async () => {
    let revision = await approvedTopic('Feed property');
    const other = await approvedTopic('Feed property, other');
    let follower = new Follower(revision);
    await follower.poll();
    const live: string[] = [];
    const deleted: string[] = [];
    type Step =
      | { kind: 'create'; text: string; here: boolean }
      | { kind: 'update'; pick: number; text: string }
      | { kind: 'delete'; pick: number }
      | { kind: 'restore'; pick: number }
      | { kind: 'reapprove' }
      | { kind: 'poll'; limit: number };
    const text = fc.string({
      unit: fc.constantFrom('a', 'b', '\n', '"', '<', 'é', ' ', '\u2028'),
      maxLength: 12,
    });
    const step: fc.Arbitrary<Step> = fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('create' as const), text, here: fc.boolean() }) },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), text }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('restore' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('reapprove' as const) }) },
      {
        weight: 3,
        arbitrary: fc.record({ kind: fc.constant('poll' as const), limit: fc.integer({ min: 1, max: 4 }) }),
      },
    );
    let checks = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 20 }), async (steps) => {
        for (const s of steps) {
          if (s.kind === 'create') {
            const id = await create(s.here ? revision : other, s.text);
            if (s.here) live.push(id);
          } else if (s.kind === 'update' && live.length) {
            await t.api('PATCH', `/records/${live[s.pick % live.length]}`, {
              body: { data: { note: s.text } },
            });
          } else if (s.kind === 'delete' && live.length) {
            const [id] = live.splice(s.pick % live.length, 1);
            expect((await t.api('DELETE', `/records/${id}`)).status).toBe(204);
            deleted.push(id!);
          } else if (s.kind === 'restore' && deleted.length) {
            const [id] = deleted.splice(s.pick % deleted.length, 1);
            expect((await t.api('POST', `/records/${id}/restore`)).status).toBe(200);
            live.push(id!);
          } else if (s.kind === 'reapprove') {
            // The follower learns of it from the feed, and follows the topic to its new revision.
            const next = await reapprove(revision);
            await follower.poll();
            expect(follower.copy.size).toBe(0);
            expect((await feed(revision, follower.cursor)).superseded_by).toBe(next);
            revision = next;
            follower = new Follower(revision);
            await follower.poll();
          } else if (s.kind === 'poll') {
            await follower.poll(s.limit);
            expect(follower.listing()).toEqual(await listing(revision));
            checks++;
          }
        }
        await follower.poll();
        expect(follower.listing()).toEqual(await listing(revision));
        checks++;
      }),
      { numRuns: 10 },
    );
    expect(checks).toBeGreaterThan(10);
  }, 180_000);

  it("the SDK's recordChanges follows the feed; a refused cursor is an error the caller can read", async () => {
    const client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
      retries: 0,
    });
    const revision = await approvedTopic('Feed through the SDK');
    const a = await create(revision, 'a');
    const start = await client.records.recordChanges(revision, { fromNow: true });
    expect(start.records).toEqual([]);
    const b = await create(revision, 'b');
    await t.api('DELETE', `/records/${a}`);
    const page = await client.records.recordChanges(revision, { since: start.cursor, limit: 10 });
    expect(page.records.map((r) => r._id)).toEqual([b]);
    expect(page.removed).toEqual([a]);
    const whole = await client.records.recordChanges(revision);
    expect(whole.complete).toBe(true);
    expect(whole.records).toEqual(await listing(revision));
    // The service writes one record a line: each record's text is known as it came, the same JSON.
    for (const record of [...page.records, ...whole.records]) {
      const text = recordText(record);
      expect(text, record._id).toBeDefined();
      expect(JSON.parse(text!)).toEqual(record);
    }
    const refused = await client.records
      .recordChanges(revision, { since: 'nonsense' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RxsApiError);
    expect((refused as RxsApiError).status).toBe(422);
    expect(String((refused as Error).message)).toMatch(/since/);
  });
});
