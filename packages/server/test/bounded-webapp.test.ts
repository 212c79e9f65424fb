import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FormSchema, ServiceRecord } from '@rxs/contract';
import { buildFieldMap } from '@rxs/exchange/export';
import { MappedRowsCache, mapRecordRows, TABLE_CELL_CHARS } from '../src/webapp/record-table.js';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

const MB = 1024 * 1024;
const schema: FormSchema = {
  components: [
    { type: 'textarea', key: 'text', label: 'Text' },
    { type: 'textfield', key: 'a', label: 'A' },
    { type: 'textfield', key: 'b', label: 'B' },
    { type: 'textfield', key: 'c', label: 'C' },
    { type: 'textfield', key: 'd', label: 'D' },
  ],
} as FormSchema;

/** An approved topic with the five fields above: its revision id. */
async function approvedTopic(t: TestServer, name: string): Promise<string> {
  const draft = await t.api('POST', '/kt/', {
    body: { knowledge_topic_name: name, type: 'multi_record', knowledge_topic_schema: schema },
  });
  expect(draft.status).toBe(201);
  const approved = await t.api('POST', `/kt/${draft.body._id}/approve`);
  expect(approved.status).toBe(200);
  return approved.body._id;
}

const recordId = (n: number) => n.toString(16).padStart(24, '0');

/**
 * Inserts `count` records whose `text` is `chars` characters, built by the database itself: the
 * test's own memory stays out of the server's measurements.
 */
async function insertLargeRecords(
  t: TestServer,
  revision: string,
  first: number,
  count: number,
  chars: number,
) {
  const { storage } = t.server;
  const text =
    storage.dialect === 'sqlite'
      ? sql<string>`hex(zeroblob(${Math.floor(chars / 2)}))`
      : sql<string>`repeat('0', ${chars})`;
  // PostgreSQL's columns are json: the text is cast (SQLite keeps it as it is).
  const data =
    storage.dialect === 'sqlite'
      ? sql`'{"text":"' || ${text} || '"}'`
      : sql`('{"text":"' || ${text} || '"}')::json`;
  const now = new Date().toISOString();
  for (let i = first; i < first + count; i++) {
    await sql`INSERT INTO records (id, tenant_id, kt_revision_id, name, form, version, data, read_only, context, created_by, created_at, updated_by, updated_at, last_action)
      VALUES (${recordId(i)}, ${t.demo.tenant.id}, ${revision}, ${`BIG-${i}`}, '{}', '1.0', ${data}, 0, '{}', 'bulk', ${now}, NULL, NULL, 'created')`.execute(
      storage.db,
    );
  }
}

/** The server's highest RSS while `work` runs (sampled whenever the event loop is free), and its result. */
async function peakRss<T>(work: () => Promise<T>): Promise<{ peak: number; result: T }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { peak, result };
  } finally {
    clearInterval(timer);
  }
}

describe('the web app bounds what one request costs the others', () => {
  let t: TestServer;
  let owner: WebClient;
  let editor: WebClient;
  let viewer: WebClient;

  beforeAll(async () => {
    t = await startTestServer();
    const { users } = t.demo.tenant;
    owner = webClient(t.url);
    editor = webClient(t.url);
    viewer = webClient(t.url);
    expect((await owner.signIn(users.owner.email, users.owner.password)).status).toBe(200);
    expect((await editor.signIn(users.editor.email, users.editor.password)).status).toBe(200);
    expect((await viewer.signIn(users.viewer.email, users.viewer.password)).status).toBe(200);
  }, 60_000);
  afterAll(() => t?.close(), 20_000);

  it('a table page over records of 2 MB reads them a few at a time and keeps only clipped cells', async () => {
    const revision = await approvedTopic(t, 'Large records');
    await insertLargeRecords(t, revision, 0x7a0000, 60, 2 * MB);
    const before = process.memoryUsage().rss;
    const { peak, result: page } = await peakRss(() =>
      viewer.request('GET', `/api/revisions/${revision}/records?limit=25`),
    );
    expect(page.status).toBe(200);
    expect(page.body.unfilteredTotal).toBe(60);
    expect(page.body.rows).toHaveLength(25);
    const text: string = page.body.rows[0].values.Text;
    expect(text.length).toBe(TABLE_CELL_CHARS + 1);
    expect(text.endsWith('…')).toBe(true);
    // 120 MB of records, read a few MB at a time with only clipped cells kept: RSS grows by little more
    // than garbage not yet collected. Whole texts kept, or batches of 256 records, would pass the bound.
    expect((peak - before) / MB).toBeLessThan(250);
    // The record's own page still shows the whole value.
    const record = await viewer.request('GET', `/api/records/${recordId(0x7a0000)}`);
    expect(record.body.record.data.text).toHaveLength(2 * MB);
  }, 60_000);

  it('the table cache stays within its bound in bytes, and a table of large records is small in it', async () => {
    const big = 'x'.repeat(MB);
    async function* records(count: number): AsyncGenerator<ServiceRecord> {
      for (let i = 0; i < count; i++) {
        yield {
          _id: recordId(i + 1),
          name: `R-${i}`,
          version: '1.0',
          form: {},
          data: { text: big, a: `a${i}` },
          context: { knowledge_unit_topic_id: null },
          audit_info: { timestamp_created: '2024-01-01T00:00:00Z' },
        } as unknown as ServiceRecord;
      }
    }
    const mapped = await mapRecordRows(schema, records(20));
    // 20 MB of values become a few KB of table.
    expect(mapped.bytes).toBeLessThan(40_000);
    expect(mapped.rows.every((row) => row.values.Text!.length <= TABLE_CELL_CHARS + 1)).toBe(true);
    const cache = new MappedRowsCache(1_000_000, 3 * mapped.bytes);
    for (const key of ['a', 'b', 'c', 'd', 'e']) {
      cache.set(key, 'f', mapped);
      expect(cache.bytes).toBeLessThanOrEqual(cache.maxBytes);
    }
    expect(cache.get('a', 'f')).toBeUndefined();
    expect(cache.get('e', 'f')).toBe(mapped);
    // A table larger than the whole bound is not kept at all.
    const tiny = new MappedRowsCache(1_000_000, mapped.bytes - 1);
    tiny.set('a', 'f', mapped);
    expect(tiny.get('a', 'f')).toBeUndefined();
    expect(tiny.bytes).toBe(0);
    expect(() => MappedRowsCache.fromEnv({ RXS_WEB_TABLE_CACHE_MB: 'lots' })).toThrow(
      /RXS_WEB_TABLE_CACHE_MB/,
    );
    expect(MappedRowsCache.fromEnv({ RXS_WEB_TABLE_CACHE_MB: '0.5' }).maxBytes).toBe(MB / 2);
  });

  it('a comparison lists its differences a page at a time, with clipped values, and the pages add up', async () => {
    const revision = await approvedTopic(t, 'Compared');
    const long = (tag: string, i: number) => `${tag}${i} ${'v'.repeat(1_200)}`;
    const created: string[] = [];
    const numbers = Array.from({ length: 150 }, (_, i) => i);
    for (let start = 0; start < numbers.length; start += 10) {
      const responses = await Promise.all(
        numbers.slice(start, start + 10).map((i) =>
          t.api('POST', '/records/', {
            body: {
              name: `C-${String(i).padStart(3, '0')}`,
              form: {},
              data: {
                text: long('t', i),
                a: long('a', i),
                b: long('b', i),
                c: long('c', i),
                d: long('d', i),
              },
              context: { knowledge_unit_topic_id: revision },
            },
          }),
        ),
      );
      for (const response of responses) {
        expect(response.status).toBe(201);
        created.push(response.body._id);
      }
    }
    const baseline = await editor.request('POST', '/api/baselines', {
      body: { name: 'before-changes', knowledge_topic_revision_ids: [revision] },
    });
    expect(baseline.status).toBe(201);
    for (let start = 0; start < created.length; start += 10) {
      const updates = created.slice(start, start + 10).map((id, j) => {
        const i = start + j;
        const data = {
          text: long('T', i),
          a: long('A', i),
          b: long('B', i),
          c: long('C', i),
          d: long('D', i),
        };
        return t.api('PATCH', `/records/${id}`, { body: { data } });
      });
      for (const response of await Promise.all(updates)) expect(response.status).toBe(200);
    }
    const compared = (offset: number) =>
      viewer.request('GET', `/api/baselines/compare?from=${baseline.body.id}&to=now&offset=${offset}`);
    const listed: string[] = [];
    let offset = 0;
    let pages = 0;
    for (;;) {
      const answer = await compared(offset);
      expect(answer.status).toBe(200);
      // Each answer stays within the size limit (1 MB of differences) whatever the records hold.
      expect(answer.text.length).toBeLessThan(1.2 * MB);
      const topic = answer.body.topics[0];
      expect(topic.counts).toEqual({ added: 0, removed: 0, changed: 150, unchanged: 0 });
      expect(topic.omitted).toBe(150 - topic.differences.length);
      for (const difference of topic.differences) {
        expect(difference.kind).toBe('changed');
        for (const field of difference.changes.fields) {
          expect(field.before.length).toBeLessThanOrEqual(1_001);
          expect(field.after.endsWith('…')).toBe(true);
        }
        listed.push(difference.id);
      }
      pages++;
      expect(answer.body.offset).toBe(offset);
      if (answer.body.next === null) break;
      expect(answer.body.next).toBe(offset + topic.differences.length);
      offset = answer.body.next;
    }
    expect(pages).toBeGreaterThan(1);
    expect(listed).toEqual([...created].sort());
  }, 60_000);

  it('an import check matched against records of 2 MB reads them a few at a time', async () => {
    const revision = await approvedTopic(t, 'Large records to match');
    await insertLargeRecords(t, revision, 0x7c0000, 40, 2 * MB);
    const { records } = t.server.app.services;
    const limits: (number | undefined)[] = [];
    const read = records.streamJsonLines.bind(records);
    records.streamJsonLines = (principal, filter) => {
      limits.push(filter.limit);
      return read(principal, filter);
    };
    try {
      // Rows naming records by readable id: the check reads the topic's records to match them.
      const csv = `name,Text\nBIG-${0x7c0000},changed\nNEW-1,new\n`;
      const before = process.memoryUsage().rss;
      const { peak, result: checked } = await peakRss(() =>
        fetch(`${t.url}/api/import/check?${new URLSearchParams({ revision, name: 'match.csv' })}`, {
          method: 'POST',
          headers: {
            accept: 'application/json',
            'content-type': 'text/csv',
            cookie: editor.cookie!,
            'x-csrf-token': editor.csrfToken!,
          },
          body: csv,
        }).then(async (response) => ({ status: response.status, body: await response.json() })),
      );
      expect(checked.status, JSON.stringify(checked.body).slice(0, 500)).toBe(200);
      expect(checked.body.report.planned).toEqual({ created: 1, updated: 1 });
      // 80 MB of records, read in pages of a few MB each: never the whole topic in one statement.
      expect(limits.length).toBeGreaterThan(1);
      for (const limit of limits) expect(limit).toBeLessThanOrEqual(4);
      expect((peak - before) / MB).toBeLessThan(250);
    } finally {
      records.streamJsonLines = read;
    }
  }, 60_000);

  it("a record's links to 60 records of 2 MB read them one at a time, with their titles", async () => {
    const revision = await approvedTopic(t, 'Large linked records');
    await insertLargeRecords(t, revision, 0x7d0000, 60, 2 * MB);
    const hub = recordId(0x7d0000);
    for (let i = 1; i < 60; i++) {
      const trace = await t.api('POST', '/traces/', {
        body: {
          source: { node_id: hub, node_type: 'Record' },
          target: { node_id: recordId(0x7d0000 + i), node_type: 'Record' },
          relation_type: 'is_related',
        },
      });
      expect(trace.status).toBe(201);
    }
    const before = process.memoryUsage().rss;
    const { peak, result: links } = await peakRss(() => viewer.request('GET', `/api/records/${hub}/links`));
    expect(links.status).toBe(200);
    expect(links.body).toHaveLength(59);
    const names = links.body.map((link: { node: { name: string } }) => link.node.name);
    expect(new Set(names).size).toBe(59);
    expect(names).toContain(`BIG-${0x7d0000 + 59}`);
    // 120 MB of linked records, of which only names, readable ids and titles are kept.
    expect((peak - before) / MB).toBeLessThan(250);
  }, 120_000);

  it('comparisons, impact checks and exports share the slots: a fifth at once is 429 with Retry-After', async () => {
    const revision = await approvedTopic(t, 'Slow to read');
    const now = new Date().toISOString();
    for (let start = 0; start < 20_000; start += 1000) {
      const rows = Array.from({ length: 1000 }, (_, i) => ({
        id: recordId(0x7b000000 + start + i),
        tenant_id: t.demo.tenant.id,
        kt_revision_id: revision,
        name: `S-${start + i}`,
        form: '{}',
        version: '1.0',
        data: JSON.stringify({ text: `Requirement ${start + i}: ${'text, '.repeat(40)}` }),
        read_only: 0,
        context: '{}',
        created_by: 'bulk',
        created_at: now,
        updated_by: null,
        updated_at: null,
        last_action: 'created',
      }));
      await t.server.storage.db.insertInto('records').values(rows).execute();
    }
    const baseline = await editor.request('POST', '/api/baselines', {
      body: { name: 'slow', knowledge_topic_revision_ids: [revision] },
    });
    const compare = (client: WebClient) =>
      client.request('GET', `/api/baselines/compare?from=${baseline.body.id}&to=now`);
    const impact = (client: WebClient) =>
      client.request('POST', `/api/revisions/${revision}/impact`, { body: {} });
    const download = (client: WebClient) =>
      fetch(`${t.url}/api/export?revisions=${revision}&format=csv`, {
        headers: { cookie: client.cookie! },
      }).then(async (response) => ({ status: response.status, text: await response.text() }));
    // Four long reads: two users, two each (the most per user), four in all (the most per server).
    const running = [compare(owner), download(owner), compare(editor), download(editor)];
    // Each of them takes a slot once the server gets to it; each reads 20 000 records, which takes
    // seconds.
    const slots = t.server.app.services.history.expensiveReads.slots;
    for (let waited = 0; slots.inUse < 4 && waited < 20_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(slots.inUse).toBe(4);
    const fifth = await compare(viewer);
    expect(fifth.status).toBe(429);
    expect(fifth.headers.get('retry-after')).toBe('5');
    expect(fifth.body.detail).toMatch(/the most at once \(RXS_WEB_EXPORTS\)\. Try again/);
    // Another client is answered meanwhile: the reads give the event loop back as they go.
    const health = performance.now();
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    expect(performance.now() - health).toBeLessThan(1000);
    const third = await impact(owner);
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(third.body.detail).toMatch(/^You have 2 expensive reads/);
    const answers = await Promise.all(running);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect((answers[0] as { body: any }).body.topics[0].counts.added).toBe(20_000);
    // The slots are given back.
    const checked = await impact(viewer);
    expect(checked.status).toBe(200);
    expect(checked.body.checked).toBe(20_000);
  }, 120_000);
});
