import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordVersion } from '@rxs/contract';
import { createClient } from '@rxs/client';
import { createTextTopic, startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/**
 * Reads of history are bounded in bytes as well as rows. Records of about 1 MB each and
 * pages of 2 MiB (RXS_PAGE_BYTES) stand for records of several MB and the 8 MiB default; one slot
 * for expensive reads (RXS_WEB_EXPORTS) stands for a busy server.
 */
const PAGE_BYTES = 1024 * 1024;
const RECORD_BYTES = 500_000;
const VERSIONS = 8;
const RECORDS = 40;
/** The records changed after `asOf`. */
const CHANGED = ['R0', 'R7', 'R39'];

/** Timestamps have millisecond resolution: a pause makes "before" and "after" distinct moments. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));
const text = (seed: string) => seed.repeat(Math.ceil(RECORD_BYTES / seed.length)).slice(0, RECORD_BYTES);
/** A full garbage collection, on demand (the flag can be set at run time; vm then sees `gc`). */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
const digest = (json: string) => createHash('sha256').update(json).digest('hex');
const nextTarget = (link: string | null) => (link ? link.slice(1, link.indexOf('>')) : undefined);

describe('bounded history: versions, web history, as-of listings and feeds by bytes', () => {
  let t: TestServer;
  let web: WebClient;
  let revision: string;
  /** The record with VERSIONS versions of RECORD_BYTES. */
  let recordId: string;
  /** The moment the RECORDS records were all created, before any changed. */
  let asOf: string;
  /** The records as they were at `asOf`, by id. */
  const then = new Map<string, string>();
  /** A cursor of the topic's changes feed taken before the RECORDS records were created. */
  let cursor: string;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const name of ['RXS_PAGE_BYTES', 'RXS_WEB_EXPORTS']) saved[name] = process.env[name];
    process.env.RXS_PAGE_BYTES = String(PAGE_BYTES);
    process.env.RXS_WEB_EXPORTS = '1';
    t = await startTestServer();
    web = webClient(t.url);
    const owner = t.demo.tenant.users.owner;
    expect((await web.signIn(owner.email, owner.password)).status).toBe(200);
    revision = await createTextTopic(t, 'Large records');

    const created = await t.api('POST', '/records/', {
      body: {
        name: 'Big',
        form: {},
        data: { text: text('v1 ') },
        context: { knowledge_unit_topic_id: revision },
      },
    });
    expect(created.status, created.text).toBe(201);
    recordId = created.body._id;
    for (let n = 2; n <= VERSIONS; n++) {
      const res = await t.api('PATCH', `/records/${recordId}`, {
        body: { data: { text: text(`v${n} `) }, change_reason: `change ${n}` },
      });
      expect(res.status, res.text).toBe(200);
    }

    const start = await t.api(
      'GET',
      `/records/changes?context__knowledge_unit_topic_id=${revision}&from=now`,
    );
    cursor = start.body.cursor;
    for (let i = 0; i < RECORDS; i++) {
      const res = await t.api('POST', '/records/', {
        body: {
          name: `R${i}`,
          form: {},
          data: { text: text(`r${i} `) },
          context: { knowledge_unit_topic_id: revision },
        },
      });
      expect(res.status, res.text).toBe(201);
    }
    await tick();
    asOf = new Date().toISOString();
    await tick();
    const present = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    for (const record of present.body) then.set(record._id, digest(JSON.stringify(record)));
    // The present differs from `asOf` afterwards: some records changed since.
    for (const record of present.body.filter((r: any) => CHANGED.includes(r.name)))
      expect(
        (
          await t.api('PATCH', `/records/${record._id}`, {
            body: { data: { text: text(`${record.name} now `) } },
          })
        ).status,
      ).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });

  it('pages a history of large versions by bytes; the SDK still reads every version', async () => {
    const seen: number[] = [];
    let target: string | undefined = `/records/${recordId}/versions?limit=50`;
    let pages = 0;
    while (target) {
      const res = await t.api(
        'GET',
        target.startsWith('?') ? `/records/${recordId}/versions${target}` : target,
      );
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      pages++;
      // At most a page's bytes, or one version when one alone is larger.
      expect(res.body.length === 1 || res.text.length <= PAGE_BYTES).toBe(true);
      for (const version of res.body as RecordVersion[]) {
        seen.push(version.n);
        expect(version.record.data).toEqual({ text: text(`v${version.n} `) });
      }
      target = nextTarget(res.headers.get('link'));
    }
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(Array.from({ length: VERSIONS }, (_, i) => VERSIONS - i));

    const client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: t.ownerKey,
    });
    const versions: RecordVersion[] = [];
    for await (const version of client.records.listRecordVersions(recordId)) versions.push(version);
    expect(versions.map((v) => v.n)).toEqual(seen);
    expect(versions[VERSIONS - 1]).toMatchObject({
      n: 1,
      action: 'created',
      record: { data: { text: text('v1 ') } },
    });
    expect(versions[0]).toMatchObject({ n: VERSIONS, reason: `change ${VERSIONS}` });
  });

  it("the web app's history of large versions comes a page of bytes at a time, with older ones after", async () => {
    const seen: number[] = [];
    let before: number | null | undefined;
    let pages = 0;
    do {
      const query: string = before ? `?limit=50&before=${before}` : '?limit=50';
      const res = await web.request('GET', `/api/records/${recordId}/history${query}`);
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      pages++;
      expect(res.body.name).toBe('Big');
      expect(res.body.versions.length === 1 || res.text.length <= PAGE_BYTES).toBe(true);
      for (const version of res.body.versions) {
        seen.push(version.n);
        const changed = version.changes.fields.find((f: any) => f.after !== undefined);
        if (version.n > 1) expect(changed?.before?.startsWith(`v${version.n - 1} `)).toBe(true);
      }
      before = res.body.next;
    } while (before !== null);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(Array.from({ length: VERSIONS }, (_, i) => VERSIONS - i));
  });

  it('an as-of listing streams a page at a time: the same records, pages by bytes, server memory flat', async () => {
    // Whole, streamed: the records as they were, read as they come. What the process holds is
    // measured after a full collection every few records read: the server's part of it is a page.
    const gc = collector();
    gc();
    const baseline = process.memoryUsage().heapUsed;
    let held = 0;
    const res = await fetch(`${t.url}/records/?context__knowledge_unit_topic_id=${revision}&as_of=${asOf}`, {
      headers: { 'x-api-key': t.ownerKey },
    });
    expect(res.status).toBe(200);
    const listed = new Map<string, string>();
    let rest = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      rest += decoder.decode(chunk as Uint8Array, { stream: true });
      const lines = rest.split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const json = line.replace(/,$/, '');
        if (!json.startsWith('{')) continue;
        listed.set(JSON.parse(json)._id, digest(json));
        if (listed.size % 5 === 0) {
          gc();
          held = Math.max(held, process.memoryUsage().heapUsed - baseline);
        }
      }
    }
    expect(listed).toEqual(then);
    // The listing is RECORDS records; the server held the rows of one fetch from the database and
    // a chunk or two of lines at a time.
    expect(held).toBeLessThan((t.server.storage.largeRowsPerFetch + 4) * RECORD_BYTES);

    // Paged with limit: pages of at most a page's bytes, together the same records.
    const paged = new Map<string, string>();
    let target: string | undefined = `?context__knowledge_unit_topic_id=${revision}&as_of=${asOf}&limit=50`;
    let pages = 0;
    while (target) {
      const page = await t.api('GET', `/records/${target}`);
      expect(page.status, page.text.slice(0, 300)).toBe(200);
      pages++;
      expect(page.body.length === 1 || page.text.length <= PAGE_BYTES).toBe(true);
      for (const record of page.body) paged.set(record._id, digest(JSON.stringify(record)));
      target = nextTarget(page.headers.get('link'));
    }
    expect(pages).toBeGreaterThan(RECORDS / 3);
    expect(paged).toEqual(then);
  });

  it('a changes feed page ends at a page of bytes, whatever its limit; limit is capped', async () => {
    const url = (since: string, limit: number) =>
      `/records/changes?context__knowledge_unit_topic_id=${revision}&since=${since}&limit=${limit}`;
    expect((await t.api('GET', url(cursor, 100_001))).status).toBe(422);
    const records = new Map<string, unknown>();
    let since = cursor;
    let pages = 0;
    for (;;) {
      const res = await t.api('GET', url(since, 100_000));
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      pages++;
      expect(res.body.records.length === 1 || res.text.length <= PAGE_BYTES).toBe(true);
      for (const record of res.body.records) records.set(record._id, record);
      since = res.body.cursor;
      if (!res.body.more) break;
    }
    expect(pages).toBeGreaterThan(RECORDS / 3);
    expect(records.size).toBe(RECORDS);
    for (const record of records.values() as Iterable<any>)
      expect(record.data).toEqual({
        text: text(CHANGED.includes(record.name) ? `${record.name} now ` : `${record.name.toLowerCase()} `),
      });
  });

  it('a trace feed page holds no more traces than a page of bytes takes', async () => {
    const start = await t.api('GET', '/traces/changes?from=now');
    const ids = [...then.keys()];
    const made = new Set<string>();
    for (let i = 1; i <= 10; i++) {
      const res = await t.api('POST', '/traces/', {
        body: {
          source: { node_id: ids[0], node_type: 'Record' },
          target: { node_id: ids[i], node_type: 'Record' },
          relation_type: 'mentions',
        },
      });
      expect(res.status, res.text).toBe(201);
      made.add(res.body._id);
    }
    process.env.RXS_PAGE_BYTES = '4096';
    try {
      const seen = new Set<string>();
      let since = start.body.cursor as string;
      let pages = 0;
      for (;;) {
        const res = await t.api('GET', `/traces/changes?since=${since}&limit=100000`);
        expect(res.status, res.text).toBe(200);
        pages++;
        // 4096 bytes take 5 traces of at most 768 bytes each.
        expect(res.body.traces.length).toBeLessThanOrEqual(5);
        for (const trace of res.body.traces) seen.add(trace._id);
        since = res.body.cursor;
        if (!res.body.more) break;
      }
      expect(pages).toBeGreaterThanOrEqual(2);
      expect(seen).toEqual(made);
    } finally {
      process.env.RXS_PAGE_BYTES = String(PAGE_BYTES);
    }
  });

  it('expensive reads take a server-wide slot: 429 with Retry-After while one runs, served once it ends', async () => {
    // A whole as-of listing of RECORDS MB, left unread: it holds its slot.
    const holding = await fetch(
      `${t.url}/records/?context__knowledge_unit_topic_id=${revision}&as_of=${asOf}`,
      {
        headers: { 'x-api-key': t.ownerKey },
      },
    );
    expect(holding.status).toBe(200);
    // Another user, another key: the slot is the server's.
    const editorKey = t.demo.tenant.users.editor.apiKey;
    const refused = await t.api('GET', `/records/${recordId}/versions`, { key: editorKey });
    expect(refused.status, refused.text.slice(0, 300)).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body.detail).toMatch(/at once/);
    const webRefused = await web.request('GET', `/api/records/${recordId}/history?limit=20`);
    expect(webRefused.status).toBe(429);
    expect(webRefused.headers.get('retry-after')).toMatch(/^\d+$/);
    const asOfRefused = await t.api(
      'GET',
      `/records/?context__knowledge_unit_topic_id=${revision}&as_of=${asOf}`,
      {
        key: editorKey,
      },
    );
    expect(asOfRefused.status).toBe(429);

    // Small reads take no slot: a page of small versions, a present listing.
    const small = await t.api('POST', '/records/', {
      body: { name: 'Small', form: {}, data: { text: 'x' }, context: { knowledge_unit_topic_id: revision } },
    });
    expect((await t.api('GET', `/records/${small.body._id}/versions`, { key: editorKey })).status).toBe(200);
    expect(
      (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}&limit=1`)).status,
    ).toBe(200);

    // Read to its end, the listing gives its slot back.
    await holding.arrayBuffer();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await t.api('GET', `/records/${recordId}/versions?limit=1`, { key: editorKey })).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(200);
  });
});
