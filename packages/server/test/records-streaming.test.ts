import { request } from 'node:http';
import { once } from 'node:events';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonArrayText } from '../src/http/json-array-stream.js';
import type { RecordFilter } from '../src/services/records/service.js';
import { createTextTopic, startTestServer, testDatabase, type TestServer } from './harness.js';

/**
 * The streamed listing (`GET /records/` without `limit`) is built apart from the paged one and from
 * single records (on SQLite, by SQLite itself): these tests hold all of them to the same bytes.
 */
describe('GET /records/ streaming: the same bytes as pages and single records', () => {
  let t: TestServer;
  let topic: string;
  let other: string;
  const principal = () => ({ tenantId: t.demo.tenant.id, userId: 'streaming', role: 'owner' as const });

  /** Awkward text: every kind of character JSON escapes or does not. */
  const awkward = [
    'plain',
    'quotes " and \\ backslashes \\" \\\\',
    'controls \u0001\u0007\b\t\n\u000b\f\r\u001b\u001f end',
    'del \u007f, latin é ß, euro €, cjk 漢字, emoji 😀👍🏽',
    'separators \u2028 \u2029, nbsp \u00a0, bom \ufeff, private \ue000 \uffff',
    "single ' quotes '' and SQL -- comment /* */",
    '',
  ];

  beforeAll(async () => {
    t = await startTestServer();
    const { records } = t.server.app.services;
    const made = (name: string) => createTextTopic(t, name);
    topic = await made('Streaming');
    other = await made('Streaming, other');
    const names = [...awkward];
    // A lone surrogate can only be stored by SQLite (as invalid UTF-8): it must come out as before.
    if (testDatabase === 'sqlite') names.push('lone \ud800 surrogate', 'lone \udfff');
    for (const [i, name] of names.entries()) {
      await records.create(principal(), {
        name,
        form: { awkward: name, nested: { list: [1, 2.5, -0, 1e21, null, true] } },
        data: { text: name },
        read_only: i % 2 === 1,
        context: {
          knowledge_unit_topic_id: i % 3 === 0 ? other : topic,
          ...(i % 2 === 0 ? { linked_product: name, group_id: null } : {}),
        },
      });
    }
    // Records of very different sizes, so SQLite's pages change their row count along the way.
    for (let i = 0; i < 700; i++) {
      await records.create(principal(), {
        name: `sized-${i}`,
        form: {},
        data: { text: `${i} ${'x'.repeat(i % 50 === 0 ? 200_000 : (i * 37) % 3000)} "end"\n` },
        context: { knowledge_unit_topic_id: topic },
      });
    }
    // Updated records carry the other audit fields.
    const listed = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}&limit=20`);
    for (const record of listed.body.filter((r: any) => !r.read_only).slice(0, 5)) {
      const edited = await t.api('PATCH', `/records/${record._id}`, {
        body: { name: `${record.name} ✎ "edited"`, data: { text: 'changed' } },
      });
      expect(edited.status).toBe(200);
    }
  }, 120_000);
  afterAll(() => t.close());

  /** The listing as the JavaScript path writes it: recordJson line by line (the paged mode's code). */
  async function expected(filter: RecordFilter): Promise<string> {
    const lines: string[] = [];
    for await (const line of t.server.app.services.records.streamJsonLines(principal(), filter))
      lines.push(line);
    return jsonArrayText(lines);
  }

  /** Every page of the paged mode, joined into one array. */
  async function paged(query: string, limit: number): Promise<string> {
    const lines: string[] = [];
    let path: string | undefined = `/records/?${query}&limit=${limit}`;
    while (path) {
      const res = await t.api('GET', path);
      expect(res.status).toBe(200);
      const inner = res.text.slice(2, -2);
      if (inner.length > 0) lines.push(inner.slice(0, -1));
      const link = res.headers.get('link');
      path = link ? `/records/${/<([^>]+)>; rel="next"/.exec(link)![1]}` : undefined;
    }
    return jsonArrayText(lines.filter(Boolean));
  }

  it('streams the same bytes as the paged listing and as recordJson, record by record', async () => {
    const streamed = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}`);
    expect(streamed.status).toBe(200);
    const count = streamed.body.length;
    expect(count).toBeGreaterThan(700);
    expect(streamed.text).toBe(await expected({ revisionIds: [topic] }));
    expect(streamed.text).toBe(await paged(`context__knowledge_unit_topic_id=${topic}`, 7));
    expect(streamed.text).toBe(await paged(`context__knowledge_unit_topic_id=${topic}`, 1000));
    expect(streamed.text.split('\n')).toHaveLength(count + 3);
    const ids = streamed.body.map((r: any) => r._id);
    expect([...ids].sort()).toEqual(ids);
  });

  it('each streamed record equals its single-record answer', async () => {
    const streamed = await t.api('GET', `/records/?context__knowledge_unit_topic_id__in=${topic},${other}`);
    const small = streamed.body.filter((r: any) => !r.name.startsWith('sized-') || r.name.endsWith('-1'));
    expect(small.length).toBeGreaterThanOrEqual(awkward.length);
    for (const record of small) {
      const single = await t.api('GET', `/records/${record._id}`);
      expect(single.status).toBe(200);
      expect(single.body).toEqual(record);
    }
    expect(small.some((r: any) => r.name.includes('\u2028'))).toBe(true);
  });

  it('keeps every filter: several revisions, ids, after, dates, none', async () => {
    const all = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}`)).body;
    const some = [all[3]._id, all[1]._id, all[400]._id, all.at(-1)._id];
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const cases: [string, RecordFilter][] = [
      [`context__knowledge_unit_topic_id__in=${topic},${other}`, { revisionIds: [topic, other] }],
      [`context__knowledge_unit_topic_id=${other}`, { revisionIds: [other] }],
      [`id__in=${some.join(',')}`, { ids: some }],
      [
        `context__knowledge_unit_topic_id=${topic}&after=${all[500]._id}`,
        { revisionIds: [topic], after: all[500]._id },
      ],
      [
        `context__knowledge_unit_topic_id=${topic}&audit_info__start_date=${since}&audit_info__include_updated=true`,
        { revisionIds: [topic], startDate: since, includeUpdated: true },
      ],
      [
        `context__knowledge_unit_topic_id=${topic}&audit_info__end_date=2000-01-01`,
        { revisionIds: [topic], endDate: '2000-01-01T23:59:59.999Z' },
      ],
      [
        `context__knowledge_unit_topic_id=0123456789abcdef01234567`,
        { revisionIds: ['0123456789abcdef01234567'] },
      ],
      [
        `context__knowledge_unit_topic_id=${topic}&context__knowledge_unit_topic_id__in=${other}`,
        { revisionIds: [] },
      ],
      [`audit_info__start_date=${since}`, { startDate: since }],
    ];
    for (const [query, filter] of cases) {
      const res = await t.api('GET', `/records/?${query}`);
      expect(res.status, query).toBe(200);
      expect(res.text, query).toBe(await expected(filter));
    }
    expect((await t.api('GET', `/records/?id__in=${some.join(',')}`)).body).toHaveLength(4);
    expect(
      (await t.api('GET', `/records/?context__knowledge_unit_topic_id=0123456789abcdef01234567`)).text,
    ).toBe('[\n]\n');
  });

  it.runIf(testDatabase === 'sqlite')('SQLite json_quote escapes exactly like JSON.stringify', () => {
    const db = new SQLite(':memory:');
    const quote = db.prepare('SELECT json_quote(?) AS q').pluck();
    const bad: string[] = [];
    for (let code = 1; code < 0x10000; code++) {
      if (code >= 0xd800 && code < 0xe000) continue;
      const text = `a${String.fromCharCode(code)}b`;
      if (quote.get(text) !== JSON.stringify(text)) bad.push(code.toString(16));
    }
    for (const text of ['😀', '𝄞x', '', 'null']) if (quote.get(text) !== JSON.stringify(text)) bad.push(text);
    db.close();
    expect(bad).toEqual([]);
  });

  it('a client that stops reading holds the listing: the server does not read ahead', async () => {
    const { records } = t.server.app.services;
    const big = 'y'.repeat(60_000);
    const large = await createTextTopic(t, 'Streaming, large');
    for (let i = 0; i < 1000; i++) {
      await records.create(principal(), {
        name: `large-${i}`,
        form: {},
        data: { text: big },
        context: { knowledge_unit_topic_id: large },
      });
    }
    const total = 1000 * big.length; // about 60 MB of listing
    // Count the bytes the listing has taken from the database so far.
    const source = records.streamJsonChunks.bind(records);
    let produced = 0;
    records.streamJsonChunks = async function* (principal, filter) {
      for await (const chunk of source(principal, filter)) {
        produced += chunk.length;
        yield chunk;
      }
    };
    try {
      const url = new URL(`${t.url}/records/?context__knowledge_unit_topic_id=${large}`);
      const req = request(url, { headers: { 'x-api-key': t.ownerKey } });
      req.end();
      const [res] = (await once(req, 'response')) as [import('node:http').IncomingMessage];
      expect(res.statusCode).toBe(200);
      res.pause();
      // Let the server fill whatever the socket buffers take.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const held = produced;
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(produced).toBe(held);
      expect(held).toBeLessThan(total / 3);
      // Reading on takes the rest, complete.
      let received = 0;
      let tail = '';
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        tail = (tail + chunk.toString('latin1')).slice(-4);
      });
      res.resume();
      await once(res, 'end');
      expect(received).toBeGreaterThan(total);
      expect(tail).toBe('}\n]\n');
      expect(produced).toBeGreaterThan(total);
    } finally {
      records.streamJsonChunks = source;
    }
  }, 120_000);

  it('a listing of records of 2 MB starts with one record: no step of it reads many at once', async () => {
    const { records } = t.server.app.services;
    const large = await createTextTopic(t, 'Streaming, large records');
    for (let i = 0; i < 6; i++)
      await records.create(principal(), {
        name: `LARGE-${i}`,
        form: {},
        data: { text: `${i} ${'x'.repeat(2 * 1024 * 1024)}` },
        context: { knowledge_unit_topic_id: large },
      });
    const sizes: number[] = [];
    for await (const chunk of records.streamJsonChunks(principal(), { revisionIds: [large] }))
      sizes.push(Buffer.byteLength(chunk));
    // On SQLite each chunk is one statement's rows (the event loop waits for it); PostgreSQL's COPY
    // streams in rows as they come. Either way no chunk holds two of these records.
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(6 * 2 * 1024 * 1024);
    for (const size of sizes) expect(size).toBeLessThan(2 * 2 * 1024 * 1024);
  }, 60_000);

  it('data keeps its keys in the order they were written, nested too (PostgreSQL: json, not jsonb)', async () => {
    const data = {
      text: 'order',
      zz: 1,
      a: { long_key_first: true, b: [3, 1e21, 2.5e-7] },
      mm: null,
      b: -1.5,
    };
    const created = await t.api('POST', '/records/', {
      body: { name: 'Key order', form: { z: 1, a: 2 }, data, context: { knowledge_unit_topic_id: other } },
    });
    expect(created.status).toBe(201);
    const listing = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${other}`);
    const line = listing.text.split('\n').find((l) => l.includes(created.body._id))!;
    expect(line).toContain(`"form":{"z":1,"a":2},`);
    expect(line).toContain(`"data":${JSON.stringify(data)},`);
    const single = await t.api('GET', `/records/${created.body._id}`);
    expect(JSON.stringify(single.body.data)).toBe(JSON.stringify(data));
  });

  it('listings cut off by their clients free their database connections', async () => {
    const { records, storage } = t.server.app.services;
    const cut = await createTextTopic(t, 'Streaming, cut off');
    for (let i = 0; i < 300; i++)
      await records.create(principal(), {
        name: `cut-${i}`,
        form: {},
        data: { text: 'z'.repeat(20_000) },
        context: { knowledge_unit_topic_id: cut },
      });
    const url = new URL(`${t.url}/records/?context__knowledge_unit_topic_id=${cut}`);
    // More listings than the PostgreSQL pool has connections, each dropped after its first bytes.
    for (let i = 0; i < 15; i++) {
      const req = request(url, { headers: { 'x-api-key': t.ownerKey } });
      req.end();
      const [res] = (await once(req, 'response')) as [import('node:http').IncomingMessage];
      expect(res.statusCode).toBe(200);
      await once(res, 'data');
      res.destroy();
      req.destroy();
    }
    const whole = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${cut}`);
    expect(whole.status).toBe(200);
    expect(whole.body).toHaveLength(300);
    expect(whole.text).toBe(await expected({ revisionIds: [cut] }));
    if (storage.dialect === 'postgres') {
      // No COPY left running for the clients that went away.
      const copying = async () =>
        Number(
          (
            await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity
              WHERE datname = current_database() AND query LIKE 'COPY (%' AND state <> 'idle'`.execute(
              storage.db,
            )
          ).rows[0]!.n,
        );
      for (let wait = 0; (await copying()) > 0 && wait < 50; wait++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await copying()).toBe(0);
    }
  }, 120_000);

  it('filter values that try to break out of the query are only values (PostgreSQL writes them into a COPY)', async () => {
    const before = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}`);
    const hostile = [
      "x'); DROP TABLE records; --",
      "x\\'); DROP TABLE records; --",
      'x\\',
      "' OR '1'='1",
      '$1',
      'é😀\u0001',
    ];
    for (const value of hostile) {
      const id = encodeURIComponent(value);
      for (const query of [
        `context__knowledge_unit_topic_id=${id}`,
        `context__knowledge_unit_topic_id__in=${id},${id}`,
        `context__knowledge_unit_topic_id=${topic}&after=${id}`,
      ]) {
        const res = await t.api('GET', `/records/?${query}`);
        expect([200, 422], query).toContain(res.status);
        if (res.status === 200 && !query.includes('after')) expect(res.body, query).toEqual([]);
      }
    }
    const after = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}`);
    expect(after.text).toBe(before.text);
  });

  it.runIf(testDatabase === 'postgres')(
    'PostgreSQL to_json escapes text exactly like JSON.stringify',
    async () => {
      const { storage } = t.server.app.services;
      const texts: string[] = [];
      for (let code = 1; code < 0x10000; code++)
        if (code < 0xd800 || code >= 0xe000) texts.push(`a${String.fromCharCode(code)}b`);
      texts.push('😀', '𝄞x', '', 'null', "it's", 'back\\slash "quoted"');
      const { rows } = await sql<{ t: string; q: string }>`
      SELECT t, to_json(t)::text AS q FROM unnest(${texts}::text[]) AS t`.execute(storage.db);
      expect(rows).toHaveLength(texts.length);
      expect(rows.filter((r) => r.q !== JSON.stringify(r.t)).map((r) => r.t)).toEqual([]);
    },
  );

  it.runIf(testDatabase === 'postgres')(
    'PostgreSQL COPY takes hostile parameters as plain values',
    async () => {
      const { storage } = t.server.app.services;
      const hostile = ["'); DROP TABLE records; --", "back\\slash \\' quote", '$1 $2 "name"', 'é 😀 \u2028'];
      for (const value of hostile) {
        const query = sql<{ v: string }>`SELECT ${value}::text AS v, ${7} AS n`.compile(storage.db);
        const chunks: Buffer[] = [];
        for await (const chunk of storage.copyOut!(query)) chunks.push(chunk);
        const copied = Buffer.concat(chunks).toString();
        expect(copied).toBe(`${value.replaceAll('\\', '\\\\')}\t7\n`);
      }
      expect((await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}&limit=1`)).status).toBe(
        200,
      );
    },
  );
});
