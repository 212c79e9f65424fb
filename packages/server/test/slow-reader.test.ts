import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAL_SIZE_LIMIT_BYTES } from '../src/storage/sqlite/storage.js';
import { startTestServer, testDatabase, type TestServer } from './harness.js';

const RESPONSE_TIMEOUT_MS = 3000;
const TEXT = 'x'.repeat(40_000);

describe('a slow reader cannot pin the database', () => {
  let t: TestServer;
  let revision: string;
  const principal = () => ({ tenantId: t.demo.tenant.id, userId: 'bulk', role: 'owner' as const });
  const write = (n: number, from: number) =>
    (async () => {
      for (let i = from; i < from + n; i++) {
        const created = await t.server.app.services.records.create(principal(), {
          name: `bulk-${i}`,
          form: {},
          data: { text: TEXT },
          context: { knowledge_unit_topic_id: revision },
        });
        ids.push(created._id);
      }
    })();
  const walSize = () => statSync(`${t.server.storage.location}-wal`).size;
  const ids: string[] = [];
  /** Sends a raw request and reads its answer as a client reading `delayMs` between chunks would. */
  const rawGet = (path: string, options: { delayMs: number; dropAfter?: number }) => {
    const { hostname, port } = new URL(t.url);
    const socket = connect(Number(port), hostname);
    let received = 0;
    let tail = '';
    const firstData = new Promise<void>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        tail = chunk.toString('latin1').slice(-10);
        resolve();
        // A client that vanishes: the connection is gone mid-answer, without a word.
        if (options.dropAfter !== undefined && received >= options.dropAfter) return socket.destroy();
        socket.pause();
        setTimeout(() => socket.resume(), options.delayMs);
      }),
    );
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    socket.once('error', () => undefined);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.ownerKey}\r\n\r\n`);
    return { firstData, closed, received: () => received, tail: () => tail };
  };

  beforeAll(async () => {
    t = await startTestServer({
      limits: { responseTimeoutMs: RESPONSE_TIMEOUT_MS, concurrentListings: 1 },
    });
    const created = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Bulk',
        type: 'multi_record',
        knowledge_topic_schema: { components: [{ type: 'textfield', key: 'text', label: 'Text' }] },
      },
    });
    revision = created.body._id;
    // About 16 MB of listing: far more than the socket buffers hold, so a reader that stops stalls it.
    await write(400, 0);
  }, 120_000);
  afterAll(() => t.close());

  it('a listing read by a slow client is cut at the response limit, and the WAL shrinks back', async () => {
    const started = Date.now();
    // One chunk every 200 ms: a client reading far slower than the server writes.
    const { firstData, closed, received, tail } = rawGet(
      `/records/?context__knowledge_unit_topic_id=${revision}`,
      { delayMs: 200 },
    );
    await firstData;

    // The key's one full listing is taken: a second is refused; a page is not a full listing.
    const second = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    expect(second.status).toBe(429);
    expect(second.body.detail).toMatch(/full listings streaming.*RXS_CONCURRENT_LISTINGS/);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(
      (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}&limit=5`)).status,
    ).toBe(200);
    // A changes feed from the beginning is a whole listing too; from a cursor or from now it is not.
    const feed = `/records/changes?context__knowledge_unit_topic_id=${revision}`;
    for (const path of [feed, '/traces/changes']) {
      const whole = await t.api('GET', path);
      expect(whole.status, path).toBe(429);
      expect(whole.body.detail).toMatch(/full listings streaming/);
    }
    const now = await t.api('GET', `${feed}&from=now`);
    expect(now.status).toBe(200);
    expect((await t.api('GET', `${feed}&since=${now.body.cursor}`)).status).toBe(200);
    expect((await t.api('GET', '/traces/changes?from=now')).status).toBe(200);

    // Writers carry on while the listing's snapshot is held: on SQLite the WAL cannot be reset.
    await write(300, 1000);
    if (testDatabase === 'sqlite') expect(walSize()).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);

    const end = await closed;
    expect(end - started).toBeGreaterThanOrEqual(RESPONSE_TIMEOUT_MS - 100);
    expect(end - started).toBeLessThan(RESPONSE_TIMEOUT_MS + 5000);
    expect(received()).toBeLessThan(16_000_000);
    expect(tail().endsWith(']\n')).toBe(false);

    // The cut listing gave its slot back.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const other = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    expect((await t.api('GET', `/records/?context__knowledge_unit_topic_id=${other}`)).status).toBe(200);

    if (testDatabase === 'sqlite') {
      // With the snapshot gone, a checkpoint completes and the next writes start the WAL afresh.
      await write(20, 2000);
      expect(walSize()).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    }
  }, 120_000);

  it('a changes feed page read by a slow client is cut at the response limit, clients that vanish hold nothing, and the changes are all there for the next read', async () => {
    const feed = `/records/changes?context__knowledge_unit_topic_id=${revision}`;
    const since = (await t.api('GET', `${feed}&from=now`)).body.cursor as string;
    // About 16 MB of changed records in one page of the feed.
    const changed = ids.slice(0, 400);
    for (const id of changed)
      await t.server.app.services.records.update(principal(), id, { data: { text: `${TEXT} changed` } });
    const page = `${feed}&since=${encodeURIComponent(since)}`;

    const started = Date.now();
    const slow = rawGet(page, { delayMs: 200 });
    await slow.firstData;
    // Clients that vanish mid-page, more of them than the database pool has connections: each
    // answer ends and gives back what it held, or the read below would wait for a connection.
    for (let i = 0; i < 12; i++) {
      const gone = rawGet(page, { delayMs: 0, dropAfter: 64 * 1024 });
      await gone.firstData;
      await gone.closed;
    }
    // Writers carry on meanwhile.
    await write(5, 3000);

    const end = await slow.closed;
    expect(end - started).toBeGreaterThanOrEqual(RESPONSE_TIMEOUT_MS - 100);
    expect(end - started).toBeLessThan(RESPONSE_TIMEOUT_MS + 5000);
    expect(slow.received()).toBeLessThan(16_000_000);
    expect(slow.tail().endsWith('}\n')).toBe(false);

    // Read again from the same cursor, its pages (bounded by RXS_PAGE_BYTES) have every change, as
    // it is now.
    const fed = new Map<string, string>();
    for (let next: string | undefined = page; next;) {
      const again = await t.api('GET', next);
      expect(again.status).toBe(200);
      for (const r of again.body.records as { _id: string; data: { text: string } }[])
        fed.set(r._id, r.data.text);
      const cursor = again.body.cursor as string;
      next = again.body.more ? page.replace(/since=[^&]*/, `since=${encodeURIComponent(cursor)}`) : undefined;
    }
    for (const id of changed) expect(fed.get(id)).toBe(`${TEXT} changed`);
  }, 120_000);
});
