import { setTimeout as tick } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, createNote } from './support/topics.js';
import * as suspectTraces from '../src/storage/migrations/009_suspect_traces.js';

/** A moment strictly between what happened before and what happens after. */
const moment = async () => {
  await tick(5);
  const at = new Date().toISOString();
  await tick(5);
  return at;
};

/**
 * Suspect links: a trace whose record changed since it was made or last reviewed is `outdated`
 * everywhere it is answered (the trace, the batch listing, the trace feed, as of a past moment),
 * until `POST /traces/{id}/review`; every step is in the trace's history.
 */
describe('suspect traces and their review', () => {
  let t: TestServer;
  let requirements: string;
  let tests: string;

  beforeAll(async () => {
    t = await startTestServer();
    requirements = await approvedTopic(t, 'Suspect requirements');
    tests = await approvedTopic(t, 'Suspect tests');
  });
  afterAll(() => t.close());

  async function link(source: string, target: string, targetType = 'Record'): Promise<string> {
    const res = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: source, node_type: 'Record' },
        target: { node_id: target, node_type: targetType },
        relation_type: 'is_related',
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.outdated).toBe(false);
    return res.body._id as string;
  }
  const edit = async (id: string, note: string, reason?: string) => {
    const res = await t.api('PATCH', `/records/${id}`, {
      body: { data: { note }, ...(reason && { change_reason: reason }) },
    });
    expect(res.status, res.text).toBe(200);
  };
  const suspect = async (trace: string) => {
    const res = await t.api('GET', `/traces/${trace}`);
    expect(res.status, res.text).toBe(200);
    return res.body.outdated as boolean;
  };
  const batch = async (record: string, asOf?: string) => {
    const res = await t.api('POST', '/traces/batch/list', {
      body: { nodes: [{ node_id: record, node_type: 'Record', version: '' }], ...(asOf && { as_of: asOf }) },
    });
    expect(res.status, res.text).toBe(200);
    const result = res.body.results[record];
    const edges = Object.fromEntries(result.edges.map((e: any) => [e._id, e.outdated]));
    const connected = Object.fromEntries(
      Object.values(result.target_node_map)
        .flat()
        .map((n: any) => [n.trace_id, n.outdated]),
    );
    expect(connected).toEqual(edges);
    return edges as Record<string, boolean>;
  };
  const history = async (trace: string) => {
    const res = await t.api('GET', `/traces/${trace}/history`);
    expect(res.status, res.text).toBe(200);
    return res.body as {
      action: string;
      reason: string | null;
      source_version: string | null;
      target_version: string | null;
      user_email: string | null;
    }[];
  };

  it('a change of either record makes a trace suspect once; a review clears it and is kept with its comment', async () => {
    const requirement = await createNote(t, requirements, 'The pump stops within 2 s');
    const test = await createNote(t, tests, 'Stop the pump, time it');
    const other = await createNote(t, tests, 'Unrelated test');
    const trace = await link(requirement, test);
    const untouched = await link(requirement, other);
    expect(await suspect(trace)).toBe(false);
    expect(await batch(requirement)).toEqual({ [trace]: false, [untouched]: false });

    await edit(test, 'Stop the pump, time it with a stopwatch', 'more precise procedure');
    const changed = await moment();
    expect(await suspect(trace)).toBe(true);
    expect(await suspect(untouched)).toBe(false);
    expect(await batch(requirement)).toEqual({ [trace]: true, [untouched]: false });
    expect(await batch(test)).toEqual({ [trace]: true });

    // Further changes keep it suspect without another event.
    await edit(test, 'Stop the pump; time it with a calibrated stopwatch');
    expect((await history(trace)).map((e) => e.action)).toEqual(['created', 'suspect']);
    expect((await history(trace))[1]!.reason).toBe('more precise procedure');

    const reviewed = await t.api('POST', `/traces/${trace}/review`, {
      body: { comment: 'Procedure still verifies the 2 s stop' },
    });
    expect(reviewed.status, reviewed.text).toBe(200);
    expect(reviewed.body).toMatchObject({ _id: trace, outdated: false });
    const afterReview = await moment();
    expect(await suspect(trace)).toBe(false);
    expect(await batch(requirement)).toEqual({ [trace]: false, [untouched]: false });
    const events = await history(trace);
    expect(events.map((e) => e.action)).toEqual(['created', 'suspect', 'reviewed']);
    const testNow = (await t.api('GET', `/records/${test}`)).body.version;
    const requirementNow = (await t.api('GET', `/records/${requirement}`)).body.version;
    expect(events[2]).toMatchObject({
      reason: 'Procedure still verifies the 2 s stop',
      source_version: requirementNow,
      target_version: testNow,
      user_email: t.demo.tenant.users.owner.email,
    });

    // The other end counts too; and the past stays as it was.
    await edit(requirement, 'The pump stops within 1 s');
    expect(await batch(requirement)).toEqual({ [trace]: true, [untouched]: true });
    expect(await batch(requirement, changed)).toEqual({ [trace]: true, [untouched]: false });
    expect(await batch(requirement, afterReview)).toEqual({ [trace]: false, [untouched]: false });

    // A review without a body is a review too.
    expect((await t.api('POST', `/traces/${untouched}/review`)).status).toBe(200);
    expect(await suspect(untouched)).toBe(false);
  });

  it('the trace feed lists a trace again when it becomes suspect and when it is reviewed', async () => {
    const a = await createNote(t, requirements, 'Alarm sounds at 80 dB');
    const b = await createNote(t, tests, 'Measure the alarm');
    const trace = await link(a, b);
    const start = await t.api('GET', '/traces/changes?from=now');
    let cursor = start.body.cursor as string;
    const next = async () => {
      const page = await t.api('GET', `/traces/changes?since=${encodeURIComponent(cursor)}`);
      expect(page.status, page.text).toBe(200);
      cursor = page.body.cursor;
      return page.body.traces.map((x: any) => [x._id, x.outdated]);
    };
    expect(await next()).toEqual([]);
    await edit(a, 'Alarm sounds at 85 dB');
    expect(await next()).toEqual([[trace, true]]);
    await edit(a, 'Alarm sounds at 85 dB(A)');
    expect(await next()).toEqual([]);
    await t.api('POST', `/traces/${trace}/review`, { body: {} });
    expect(await next()).toEqual([[trace, false]]);
    // Every trace of a first page carries its status as well.
    const all = await t.api('GET', '/traces/changes');
    const listed = all.body.traces.find((x: any) => x._id === trace);
    expect(listed.outdated).toBe(false);
  });

  it('only records make a trace suspect; a deleted trace keeps its history', async () => {
    const a = await createNote(t, requirements, 'Battery lasts 8 h');
    const document = await link(a, 'DOC-4711', 'Document');
    await edit(a, 'Battery lasts 10 h');
    // The record end changed: suspect, whatever the document did (its versions are not ours).
    expect(await suspect(document)).toBe(true);
    const b = await createNote(t, tests, 'Run down the battery');
    const trace = await link(a, b);
    expect((await t.api('DELETE', `/traces/${trace}`)).status).toBe(204);
    expect((await history(trace)).map((e) => e.action)).toEqual(['created', 'deleted']);
    expect((await history(document))[0]).toMatchObject({ action: 'created', target_version: null });
  });

  it('the upgrade counts the traces it finds as reviewed at their records as they are', async () => {
    const a = await createNote(t, requirements, 'Housing withstands a 1 m drop');
    const b = await createNote(t, tests, 'Drop test from 1 m');
    const trace = await link(a, b);
    await edit(a, 'Housing withstands a 1.2 m drop');
    // As an installation before suspect links had them: no versions kept.
    const db = t.server.storage.db;
    await db
      .updateTable('traces')
      .set({ source_version: null, target_version: null })
      .where('id', '=', trace)
      .execute();
    // Without versions nothing can be judged: not suspect.
    expect(await suspect(trace)).toBe(false);
    await sql`ALTER TABLE traces DROP COLUMN source_version`.execute(db);
    await sql`ALTER TABLE traces DROP COLUMN target_version`.execute(db);
    await sql`ALTER TABLE trace_events DROP COLUMN source_version`.execute(db);
    await sql`ALTER TABLE trace_events DROP COLUMN target_version`.execute(db);
    await suspectTraces.up(db as never);
    const kept = await db.selectFrom('traces').selectAll().where('id', '=', trace).executeTakeFirstOrThrow();
    expect(kept.source_version).toBe((await t.api('GET', `/records/${a}`)).body.version);
    expect(kept.target_version).toBe((await t.api('GET', `/records/${b}`)).body.version);
    expect(await suspect(trace)).toBe(false);
    await edit(b, 'Drop test from 1.2 m');
    expect(await suspect(trace)).toBe(true);
  });

  it('refuses what it must: unknown, other tenants, readers, long comments, extra fields', async () => {
    const a = await createNote(t, requirements, 'Display is readable at 1 m');
    const b = await createNote(t, tests, 'Read the display at 1 m');
    const trace = await link(a, b);
    const missing = '0123456789abcdef01234567';
    expect((await t.api('POST', `/traces/${missing}/review`)).status).toBe(404);
    expect((await t.api('GET', `/traces/${missing}/history`)).status).toBe(404);
    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    expect((await t.api('POST', `/traces/${trace}/review`, { key: otherKey })).status).toBe(404);
    expect((await t.api('GET', `/traces/${trace}/history`, { key: otherKey })).status).toBe(404);
    const viewer = t.demo.tenant.users.viewer.apiKey;
    expect((await t.api('GET', `/traces/${trace}/history`, { key: viewer })).status).toBe(200);
    expect((await t.api('POST', `/traces/${trace}/review`, { key: viewer })).status).toBe(403);
    const long = await t.api('POST', `/traces/${trace}/review`, { body: { comment: 'x'.repeat(2001) } });
    expect(long.status).toBe(422);
    const extra = await t.api('POST', `/traces/${trace}/review`, { body: { comment: 'ok', approved: true } });
    expect(extra.status).toBe(422);
    expect((await t.api('POST', '/traces/not-an-id/review')).status).toBe(422);
    // Nothing of that reached the history.
    expect((await history(trace)).map((e) => e.action)).toEqual(['created']);
  });
});
