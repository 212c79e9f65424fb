import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@rxs/client';
import { startTestServer, type TestServer } from './harness.js';

interface TraceFeed {
  cursor: string;
  more: boolean;
  complete: boolean;
  traces: { _id: string; [key: string]: unknown }[];
  removed: string[];
}

/**
 * The trace changes feed (`GET /traces/changes`): a client that starts without `since` and applies
 * each page holds exactly the tenant's traces, whatever was created or deleted in between (also by
 * deleting a record), and never sees another tenant's.
 */
describe('trace changes feed', () => {
  let t: TestServer;
  let revision: string;
  const path = (since?: string, limit?: number, extra = '') =>
    `/traces/changes?${since === undefined ? '' : `since=${encodeURIComponent(since)}&`}${limit === undefined ? '' : `limit=${limit}&`}${extra}`;

  async function feed(since?: string, limit?: number, key?: string): Promise<TraceFeed> {
    const res = await t.api('GET', path(since, limit), { ...(key && { key }) });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('rxs-next-cursor')).toBe(res.body.cursor);
    const lines = res.text.split('\n').filter((line) => line.startsWith('{"_id"'));
    expect(lines.map((line) => JSON.parse(line.replace(/,$/, '')))).toEqual(res.body.traces);
    return res.body as TraceFeed;
  }
  async function record(name: string): Promise<string> {
    const res = await t.api('POST', '/records/', {
      body: { name, form: {}, data: { note: name }, context: { knowledge_unit_topic_id: revision } },
    });
    expect(res.status, res.text).toBe(201);
    return res.body._id as string;
  }
  /** A new trace; undefined when the same one exists already (409). */
  async function link(from: string, to: string): Promise<{ _id: string } | undefined> {
    const res = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: from, node_type: 'Record' },
        target: { node_id: to, node_type: 'Record' },
        relation_type: 'mentions',
      },
    });
    if (res.status === 409) return undefined;
    expect(res.status, res.text).toBe(201);
    return res.body;
  }

  class Follower {
    copy = new Map<string, unknown>();
    cursor: string | undefined;
    async poll(limit?: number): Promise<void> {
      for (;;) {
        const page = await feed(this.cursor, limit);
        if (page.complete) this.copy.clear();
        for (const trace of page.traces) this.copy.set(trace._id, trace);
        for (const id of page.removed) this.copy.delete(id);
        this.cursor = page.cursor;
        if (!page.more) return;
      }
    }
  }
  const sorted = (map: Map<string, unknown>) => [...map.keys()].sort().map((id) => map.get(id));

  beforeAll(async () => {
    t = await startTestServer();
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Trace feed',
        type: 'multi_record',
        knowledge_topic_schema: { components: [{ type: 'textarea', key: 'note', label: 'Note' }] },
      },
    });
    revision = (await t.api('POST', `/kt/${draft.body._id}/approve`)).body._id as string;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every trace, then only what was created and deleted; deleting a record reports its traces', async () => {
    const start = await feed();
    expect(start.complete).toBe(true);
    // The demo's traces are there; they are the tenant's.
    expect(start.traces.length).toBeGreaterThan(0);
    expect(
      new Set(
        start.traces.map((x) => (x as { tenant_metadata: { tenant_id: string } }).tenant_metadata.tenant_id),
      ).size,
    ).toBe(1);

    const [a, b, c] = [await record('a'), await record('b'), await record('c')];
    const ab = (await link(a, b))!;
    const bc = (await link(b, c))!;
    const ca = (await link(c, a))!;
    expect((await t.api('DELETE', `/traces/${ab._id}`)).status).toBe(204);
    const page = await feed(start.cursor);
    expect(page.traces.map((x) => x._id)).toEqual([bc._id, ca._id]);
    expect(page.traces[0]).toEqual((await t.api('GET', `/traces/${bc._id}`)).body);
    expect(page.removed).toEqual([ab._id]);

    // Deleting c deletes the traces that touch it.
    expect((await t.api('DELETE', `/records/${c}`)).status).toBe(204);
    const after = await feed(page.cursor);
    expect(after.traces).toEqual([]);
    expect(after.removed.sort()).toEqual([bc._id, ca._id].sort());
    expect((await feed(after.cursor)).removed).toEqual([]);

    // from=now: a cursor without the traces.
    const now = await t.api('GET', path(undefined, undefined, 'from=now'));
    expect(now.body).toMatchObject({ cursor: after.cursor, traces: [], removed: [], complete: false });
  });

  it("cursors are the tenant's: another tenant's, a records feed's or a made-up one is 422; another tenant's traces never show", async () => {
    const mine = await feed();
    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    const borrowed = await t.api('GET', path(mine.cursor), { key: otherKey });
    expect(borrowed.status).toBe(422);
    expect(borrowed.body.detail[0].msg).toMatch(/another feed/);
    const recordsCursor = (
      await t.api('GET', `/records/changes?context__knowledge_unit_topic_id=${revision}`)
    ).body.cursor as string;
    expect((await t.api('GET', path(recordsCursor))).status).toBe(422);
    expect((await t.api('GET', path('garbage'))).status).toBe(422);

    const theirs = t.demo.otherTenant.topics.riskRegister!.recordIds;
    const created = await t.api('POST', '/traces/', {
      key: otherKey,
      body: {
        source: { node_id: theirs[0], node_type: 'Record' },
        target: { node_id: theirs[1], node_type: 'Record' },
        relation_type: 'mentions',
      },
    });
    expect(created.status).toBe(201);
    expect((await feed(mine.cursor)).traces).toEqual([]);
    expect((await feed()).traces.map((x) => x._id)).not.toContain(created.body._id);
    expect((await feed(undefined, undefined, otherKey)).traces.map((x) => x._id)).toContain(created.body._id);
    expect((await t.api('GET', path(), { key: null })).status).toBe(401);
    expect((await t.api('GET', path(undefined, undefined, 'from=now&since=x'))).status).toBe(422);
  });

  it('property: a follower applying pages after random links, unlinks and record deletions holds exactly the traces', async () => {
    const follower = new Follower();
    await follower.poll();
    const records: string[] = [];
    for (let i = 0; i < 6; i++) records.push(await record(`p${i}`));
    const traces = new Map<string, [string, string]>();
    type Step =
      | { kind: 'link'; from: number; to: number }
      | { kind: 'unlink'; pick: number }
      | { kind: 'delete-record'; pick: number }
      | { kind: 'poll'; limit: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({ kind: fc.constant('link' as const), from: fc.nat(), to: fc.nat() }),
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('unlink' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete-record' as const), pick: fc.nat() }) },
      {
        weight: 2,
        arbitrary: fc.record({ kind: fc.constant('poll' as const), limit: fc.integer({ min: 1, max: 3 }) }),
      },
    );
    let checks = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 20 }), async (steps) => {
        for (const s of steps) {
          if (s.kind === 'link' && records.length > 1) {
            const from = records[s.from % records.length]!;
            const to = records[(s.from + 1 + (s.to % (records.length - 1))) % records.length]!;
            const made = await link(from, to);
            if (made) traces.set(made._id, [from, to]);
          } else if (s.kind === 'unlink' && traces.size) {
            const id = [...traces.keys()][s.pick % traces.size]!;
            expect((await t.api('DELETE', `/traces/${id}`)).status).toBe(204);
            traces.delete(id);
          } else if (s.kind === 'delete-record' && records.length > 2) {
            const [gone] = records.splice(s.pick % records.length, 1);
            expect((await t.api('DELETE', `/records/${gone}`)).status).toBe(204);
            for (const [id, ends] of traces) if (ends.includes(gone!)) traces.delete(id);
            records.push(await record(`p${Math.random()}`));
          } else if (s.kind === 'poll') {
            await follower.poll(s.limit);
            const whole = await feed();
            expect(sorted(follower.copy)).toEqual(whole.traces);
            for (const id of traces.keys()) expect(follower.copy.has(id)).toBe(true);
            checks++;
          }
        }
        await follower.poll();
        expect(sorted(follower.copy)).toEqual((await feed()).traces);
        checks++;
      }),
      { numRuns: 8 },
    );
    expect(checks).toBeGreaterThan(8);
  }, 180_000);

  it("the SDK's traceChanges follows the feed", async () => {
    const client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
      retries: 0,
    });
    const start = await client.tracer.traceChanges({ fromNow: true });
    const x = await record('sdk x');
    const y = await record('sdk y');
    const made = (await link(x, y))!;
    const page = await client.tracer.traceChanges({ since: start.cursor, limit: 5 });
    expect(page.traces.map((trace) => trace._id)).toEqual([made._id]);
    expect(page.removed).toEqual([]);
    expect(page.more).toBe(false);
  });
});
