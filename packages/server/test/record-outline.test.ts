import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@rxs/client';
import { MAX_OUTLINE_ENTRIES } from '@rxs/contract';
import { exportParts, exportSourceOf } from '@rxs/exchange/export';
import { copyDatabase, DEFAULT_BODY_LIMIT, openStorage } from '@rxs/server';
import { createTestPostgresDatabase, startTestServer, testDatabase, type TestServer } from './harness.js';
import { approvedTopic, createNote, reapprove } from './support/topics.js';

type Entry = { record_id: string; level: number };
const entry = (record_id: string, level: number): Entry => ({ record_id, level });
const neverId = '0123456789abcdef01234567';

/**
 * A topic's document outline (`/records/outline/{knowledge_topic_history_id}`): the order and the
 * levels of its records, read by whoever reads records, replaced whole by whoever writes them,
 * checked entry by entry, per topic (across re-approvals) and per tenant.
 */
describe(`the document outline of a topic, on ${testDatabase}`, () => {
  let t: TestServer;
  let revision: string;
  let topic: string;
  /** Records of the topic: a chapter, two sections, a paragraph, another chapter. */
  let records: string[];
  let otherTopicRecord: string;

  const path = (id: string) => `/records/outline/${id}`;
  const read = async (id = topic, key?: string) => {
    const res = await t.api('GET', path(id), { key });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const put = (entries: unknown, options: { key?: string; id?: string; extra?: object } = {}) =>
    t.api('PUT', path(options.id ?? topic), { key: options.key, body: { entries, ...options.extra } });

  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'Outlined Specification');
    topic = (await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id;
    records = [];
    for (const text of ['1 Scope', '1.1 Purpose', '1.2 Terms', '1.2.1 Glossary', '2 Requirements'])
      records.push(await createNote(t, revision, text));
    otherTopicRecord = t.demo.tenant.topics.systemRequirements!.recordIds[0]!;
  });
  afterAll(() => t.close());

  it('before the first PUT: no entries, nulls; a viewer may read it', async () => {
    expect(await read(topic, t.demo.tenant.users.viewer.apiKey)).toEqual({
      knowledge_topic_history_id: topic,
      entries: [],
      updated_at: null,
      updated_by: null,
    });
  });

  it('is 404 for an id that is no topic of the tenant, and says so for a revision id', async () => {
    const never = await t.api('GET', path(neverId));
    expect(never.status).toBe(404);
    expect(never.body.detail).toBe(`No knowledge topic has the history id ${neverId} in your tenant.`);
    const byRevision = await t.api('GET', path(revision));
    expect(byRevision.status).toBe(404);
    expect(byRevision.body.detail).toContain(`${revision} is a revision id`);
    expect(byRevision.body.detail).toContain(`history id ${topic}`);
    expect((await put([], { id: neverId })).status).toBe(404);
    expect((await t.api('GET', '/records/outline/not-an-id')).status).toBe(422);
  });

  it('round trip: what is put is read back, with who and when; the answer can be put back as it is', async () => {
    const entries = [
      entry(records[0]!, 1),
      entry(records[1]!, 2),
      entry(records[2]!, 2),
      entry(records[3]!, 3),
      entry(records[4]!, 1),
    ];
    const res = await put(entries);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      knowledge_topic_history_id: topic,
      entries,
      updated_at: expect.any(String),
      updated_by: expect.any(String),
    });
    expect(await read()).toEqual(res.body);
    const again = await t.api('PUT', path(topic), { body: res.body });
    expect(again.status, again.text).toBe(200);
    expect(again.body.entries).toEqual(entries);
    // Another topic's path with this outline's topic in the body: refused, not silently moved.
    const elsewhere = await put(entries, {
      id: t.demo.tenant.topics.systemRequirements!.historyId,
      extra: { knowledge_topic_history_id: topic },
    });
    expect(elsewhere.status, elsewhere.text).toBe(422);
    expect(elsewhere.body.detail[0].loc).toEqual(['body', 'knowledge_topic_history_id']);
  });

  it('every problem of an outline is one 422 item naming its entry; nothing changes', async () => {
    const before = await read();
    const deleted = await createNote(t, revision, 'soon deleted');
    expect((await t.api('DELETE', `/records/${deleted}`)).status).toBe(204);
    const theirs = t.demo.otherTenant.topics.riskRegister!.recordIds[0]!;
    const res = await put([
      entry(records[0]!, 2),
      entry(records[1]!, 1),
      entry(records[2]!, 3),
      entry(records[1]!, 1),
      entry(neverId, 1),
      entry(otherTopicRecord, 1),
      entry(theirs, 1),
      entry(deleted, 1),
    ]);
    expect(res.status, res.text).toBe(422);
    const problems = res.body.detail.map((d: { loc: unknown[]; msg: string; type: string }) => [
      d.loc.join('.'),
      d.msg,
    ]);
    expect(problems.map(([loc]: string[]) => loc)).toEqual([
      'body.entries.0.level',
      'body.entries.2.level',
      'body.entries.3.record_id',
      'body.entries.4.record_id',
      'body.entries.5.record_id',
      'body.entries.6.record_id',
      'body.entries.7.record_id',
    ]);
    const msg = (loc: string) => problems.find(([l]: string[]) => l === loc)[1];
    expect(msg('body.entries.0.level')).toMatch(/starts at level 1/);
    expect(msg('body.entries.2.level')).toMatch(/^Level 3 follows level 1/);
    expect(msg('body.entries.3.record_id')).toBe(
      `Record ${records[1]} is already entries[1]; an outline names each record once.`,
    );
    expect(msg('body.entries.5.record_id')).toContain('a record of another knowledge topic');
    // Another tenant's record and a deleted one read as one that never existed.
    for (const [loc, id] of [
      ['body.entries.4.record_id', neverId],
      ['body.entries.6.record_id', theirs],
      ['body.entries.7.record_id', deleted],
    ] as const)
      expect(msg(loc)).toBe(
        `No record has the id ${id} in your tenant (a deleted record is in no outline until it is restored).`,
      );
    expect(await read()).toEqual(before);
  });

  it('refuses malformed outlines by their schema: ids, levels, extra keys, size', async () => {
    const big = Array.from({ length: MAX_OUTLINE_ENTRIES + 1 }, (_, i) =>
      entry(i.toString(16).padStart(24, '0'), 1),
    );
    const cases: [unknown, string][] = [
      [[entry('not-an-id', 1)], 'body.entries.0.record_id'],
      [[entry(records[0]!, 0)], 'body.entries.0.level'],
      [[entry(records[0]!, 33)], 'body.entries.0.level'],
      [[entry(records[0]!, 1.5)], 'body.entries.0.level'],
      [[{ ...entry(records[0]!, 1), heading: true }], 'body.entries.0.heading'],
      [big, 'body.entries'],
    ];
    for (const [entries, loc] of cases) {
      const res = await put(entries);
      expect(res.status, `${loc}: ${res.text.slice(0, 300)}`).toBe(422);
      expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc.join('.'))).toContain(loc);
    }
    expect((await t.api('PUT', path(topic), { body: {} })).status).toBe(422);
    // The largest outline, as compact JSON at the deepest level, fits the default request limit.
    const largest = JSON.stringify({
      entries: Array.from({ length: MAX_OUTLINE_ENTRIES }, () => entry(neverId, 32)),
    });
    expect(Buffer.byteLength(largest)).toBeLessThan(DEFAULT_BODY_LIMIT);
  });

  it("leaves a deleted record's entry out, its children one level up; a restore puts it back", async () => {
    const entries = [
      entry(records[0]!, 1),
      entry(records[1]!, 2),
      entry(records[2]!, 2),
      entry(records[3]!, 3),
      entry(records[4]!, 1),
    ];
    expect((await put(entries)).status).toBe(200);
    expect((await t.api('DELETE', `/records/${records[2]}`)).status).toBe(204);
    expect((await read()).entries).toEqual([
      entry(records[0]!, 1),
      entry(records[1]!, 2),
      entry(records[3]!, 2),
      entry(records[4]!, 1),
    ]);
    expect((await t.api('POST', `/records/${records[2]}/restore`)).status).toBe(200);
    expect((await read()).entries).toEqual(entries);
  });

  it('stays through a re-approval: the records moved, the outline is still theirs', async () => {
    const before = await read();
    revision = await reapprove(t, revision);
    expect((await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id).toBe(topic);
    expect(await read()).toEqual(before);
  });

  it('viewers may not change it (403, nothing changes); editors may', async () => {
    const before = await read();
    const viewer = await put([], { key: t.demo.tenant.users.viewer.apiKey });
    expect(viewer.status).toBe(403);
    expect(viewer.body.detail).toMatch(/lacks the permission "records:write"/);
    expect(await read()).toEqual(before);
    const editor = await put(before.entries.slice(0, 2), { key: t.demo.tenant.users.editor.apiKey });
    expect(editor.status, editor.text).toBe(200);
    expect(editor.body.updated_by).not.toBe(before.updated_by);
    expect(editor.body.entries).toHaveLength(2);
  });

  it("is the tenant's own: another tenant's topic is 404 as one that never existed", async () => {
    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    const risks = t.demo.otherTenant.topics.riskRegister!;
    const ours = await t.api('GET', path(topic), { key: otherKey });
    expect(ours.status).toBe(404);
    expect(ours.body.detail).toBe(`No knowledge topic has the history id ${topic} in your tenant.`);
    const theirs = await t.api('PUT', path(risks.historyId), {
      key: otherKey,
      body: { entries: [entry(risks.recordIds[0]!, 1)] },
    });
    expect(theirs.status, theirs.text).toBe(200);
    expect((await t.api('GET', path(risks.historyId))).status).toBe(404);
  });

  it('two changes at once: each answers 200, and the outline is one of them whole', async () => {
    const first = records.map((id) => entry(id, 1));
    const second = [...records].reverse().map((id, i) => entry(id, i === 0 ? 1 : 2));
    const answers = await Promise.all([put(first), put(second)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect([first, second]).toContainEqual((await read()).entries);
  });

  it('holds thousands of entries (several batches each way), in order', async () => {
    const many: string[] = [];
    for (let batch = 0; batch < 3; batch++) {
      const res = await t.api('POST', '/records/bulk', {
        body: {
          records: Array.from({ length: 1000 }, (_, i) => ({
            name: `bulk ${batch}.${i}`,
            form: {},
            data: { note: `${batch}.${i}` },
            context: { knowledge_unit_topic_id: revision },
          })),
        },
      });
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      many.push(...res.body.records.map((r: { _id: string }) => r._id));
    }
    const entries = [...many].reverse().map((id, i) => entry(id, i % 3 === 0 ? 1 : 2));
    const res = await put(entries);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect((await read()).entries).toEqual(entries);
  }, 120_000);

  it('reaches the export: the client reads it once per topic, and the topic part carries it', async () => {
    const outline = await read();
    const client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
    });
    expect(await client.records.getOutline(topic)).toEqual(outline);
    const topics: unknown[] = [];
    for await (const part of exportParts(exportSourceOf(client), { revisionIds: [revision] }))
      if (part.kind === 'topic') topics.push(part.outline);
    expect(topics).toEqual([{ entries: outline.entries, updatedAt: outline.updated_at }]);
  });

  it('is copied with the database, row for row', async () => {
    const target =
      testDatabase === 'postgres'
        ? await createTestPostgresDatabase()
        : (() => {
            const dir = mkdtempSync(join(tmpdir(), 'rxs-outline-copy-'));
            return {
              url: join(dir, 'rxs.db'),
              drop: async () => rmSync(dir, { recursive: true, force: true }),
            };
          })();
    const destination = await openStorage({ url: target.url });
    try {
      const reports = await copyDatabase(t.server.app.services.storage, destination);
      for (const table of ['record_outlines', 'record_outline_entries']) {
        const report = reports.find((r) => r.table === table)!;
        expect(report.sourceRows, table).toBeGreaterThan(0);
        expect(report.targetRows, table).toBe(report.sourceRows);
        expect(report.targetChecksum, table).toBe(report.sourceChecksum);
      }
    } finally {
      await destination.close();
      await target.drop();
    }
  }, 120_000);
});
