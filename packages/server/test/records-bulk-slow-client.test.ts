import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTextTopic, startTestServer, type TestServer } from './harness.js';
import { rawConnection, type RawConnection } from './support/raw-connection.js';

/** Long enough that the requests sent meanwhile are answered within it on a busy machine. */
const REQUEST_TIMEOUT_MS = 3000;
const RECORDS = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `POST /records/bulk` from a client that sends its body too slowly: the request time limit
 * (RXS_REQUEST_TIMEOUT_MS) cuts it with 408, the batch writes nothing (no record, no kept
 * idempotency key), and the server answers other clients, of the same tenant and of others, meanwhile.
 */
describe('POST /records/bulk from a slow client', () => {
  let t: TestServer;
  let revision: string;
  let others: string;
  beforeAll(async () => {
    t = await startTestServer({
      limits: { requestTimeoutMs: REQUEST_TIMEOUT_MS, headersTimeoutMs: REQUEST_TIMEOUT_MS },
    });
    others = await createTextTopic(t, 'Written meanwhile');
  });
  afterAll(() => t.close());

  /** A bulk of RECORDS creates (some 400 KB), each under an item key of its own. */
  const bulkBody = (batch: string) =>
    JSON.stringify({
      records: Array.from({ length: RECORDS }, (_, i) => ({
        name: `${batch}-${i}`,
        form: {},
        data: { text: `${batch} ${i} `.padEnd(300, '.') },
        context: { knowledge_unit_topic_id: revision },
        idempotency_key: `${batch}-item-${i}`,
      })),
    });
  const count = async (on: string) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${on}`)).body.count as number;

  /** Sends the request line and headers of the bulk under `key`, its body not yet. */
  async function startBulk(body: string, key: string): Promise<RawConnection & { started: number }> {
    const connection = await rawConnection(t.url);
    connection.socket.write(
      `POST /records/bulk HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.ownerKey}\r\nIdempotency-Key: ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    return { ...connection, started: Date.now() };
  }

  /** The cut connection's answer: 408 naming the limit, within a few checks of it. */
  async function expectCut(slow: RawConnection & { started: number }) {
    const end = await slow.closed;
    expect(end - slow.started).toBeLessThan(REQUEST_TIMEOUT_MS + 2000);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(slow.received().split('\r\n\r\n')[1]!).detail).toMatch(
      /took too long.*RXS_REQUEST_TIMEOUT_MS/,
    );
  }

  /** The same bulk sent again whole under the same key: written now, as if first sent. */
  async function expectNothingKept(body: string, key: string) {
    expect(await count(revision)).toBe(0);
    const again = await t.api('POST', '/records/bulk', {
      rawBody: body,
      headers: { 'idempotency-key': key },
    });
    expect(again.status, again.text.slice(0, 300)).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const results = (again.body as { records: { created: boolean; replayed: boolean }[] }).records;
    expect(results).toHaveLength(RECORDS);
    expect(results.every((r) => r.created && !r.replayed)).toBe(true);
    expect(await count(revision)).toBe(RECORDS);
  }

  it('a body sent one byte at a time is cut with 408, writes nothing, and others are served meanwhile', async () => {
    revision = await createTextTopic(t, 'Trickled bulk');
    const body = bulkBody('trickled');
    const slow = await startBulk(body, 'trickled-bulk');
    let sent = 0;
    const trickle = setInterval(() => {
      if (slow.socket.writable && sent < body.length) slow.socket.write(body[sent++]!);
    }, 5);
    try {
      await sleep(200);
      const otherKey = t.demo.otherTenant.users.owner.apiKey;
      const meanwhile = await Promise.all([
        t.api('GET', `/kt/${revision}`),
        t.api('POST', '/records/bulk', {
          body: {
            records: [0, 1].map((i) => ({
              name: `meanwhile-${i}`,
              form: {},
              data: { text: `meanwhile ${i}` },
              context: { knowledge_unit_topic_id: others },
            })),
          },
        }),
        t.api('GET', '/kt/', { key: otherKey }),
      ]);
      expect(meanwhile.map((r) => r.status)).toEqual([200, 200, 200]);
      // Answered while the slow bulk was still arriving: it has had no answer yet.
      expect(slow.received()).toBe('');
      await expectCut(slow);
    } finally {
      clearInterval(trickle);
    }
    expect(sent).toBeLessThan(body.length);
    expect(await count(others)).toBe(2);
    await expectNothingKept(body, 'trickled-bulk');
  });

  it('a body that stalls half way is cut with 408 and writes nothing', async () => {
    revision = await createTextTopic(t, 'Stalled bulk');
    const body = bulkBody('stalled');
    const slow = await startBulk(body, 'stalled-bulk');
    slow.socket.write(body.slice(0, body.length / 2));
    await expectCut(slow);
    await expectNothingKept(body, 'stalled-bulk');
  });
});
