import { request } from 'node:http';
import { once } from 'node:events';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonArrayText } from '../src/http/json-array-stream.js';
import type { RecordFilter } from '../src/services/records/service.js';
import { startTestServer, testDatabase, type TestServer } from './harness.js';

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
    const made = async (name: string) => {
      const created = await t.api('POST', '/kt/', {
        body: {
          knowledge_topic_name: name,
          type: 'multi_record',
          knowledge_topic_schema: { components: [{ type: 'textfield', key: 'text', label: 'Text' }] },
        },
      });
      expect(created.status).toBe(201);
      return created.body._id as string;
    };
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
    const created = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Streaming, large',
        type: 'multi_record',
        knowledge_topic_schema: { components: [{ type: 'textfield', key: 'text', label: 'Text' }] },
      },
    });
    const large = created.body._id as string;
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
});
