import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTextTopic, startTestServer, type TestServer } from './harness.js';
import { webClient, type WebResponse } from './web-client.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every raw connection a test opened, cut after it whatever its outcome. */
const opened: Socket[] = [];
afterEach(() => {
  for (const socket of opened.splice(0)) socket.destroy();
});

/**
 * A request that takes one of its tenant's slots and keeps it: a POST whose body never finishes
 * arriving (the body is read only once the request is admitted). `close()` cuts the connection.
 */
async function slowUpload(url: string, key: string): Promise<{ socket: Socket; answer: () => string }> {
  const { hostname, port } = new URL(url);
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s));
    s.once('error', reject);
  });
  opened.push(socket);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => {});
  socket.write(
    `POST /records/ HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
  );
  return { socket, answer: () => text };
}

/** Whether a promise settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([promise.then(() => true), sleep(ms).then(() => false)]);
}

/** Many GETs from one key over keep-alive connections, as fast as the server answers them. */
async function burst(
  url: string,
  key: string,
  path: string,
  total: number,
  connections: number,
): Promise<{
  statuses: Map<number, number>;
  firstRefused?: { headers: Record<string, unknown>; body: string };
}> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const statuses = new Map<number, number>();
  let firstRefused: { headers: Record<string, unknown>; body: string } | undefined;
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${url}${path}`, { agent, headers: { 'x-api-key': key } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          statuses.set(res.statusCode!, (statuses.get(res.statusCode!) ?? 0) + 1);
          if (res.statusCode === 429 && !firstRefused) firstRefused = { headers: res.headers, body };
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (sent < total) {
        sent++;
        await one();
      }
    }),
  );
  agent.destroy();
  return { statuses, firstRefused };
}

describe('per-key and per-tenant rates: token buckets that act on a burst', () => {
  describe('with the default limits', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer();
    });
    afterAll(() => t.close());

    it('a burst from one key meets 429 past 2 000 requests; another tenant keeps its budget', async () => {
      const revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
      // The clock stands still, so no request comes back into the bucket while the burst lasts,
      // however slowly this machine sends it: as for a burst sent as fast as the server answers.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
      try {
        const { statuses, firstRefused } = await burst(t.url, t.ownerKey, `/kt/${revision}`, 2100, 16);
        expect(Object.fromEntries(statuses)).toEqual({ 200: 2000, 429: 100 });
        expect(firstRefused!.headers['retry-after']).toBe('1');
        expect(firstRefused!.headers['ratelimit-limit']).toBe('2000');
        expect(firstRefused!.headers['ratelimit-remaining']).toBe('0');
        expect(JSON.parse(firstRefused!.body).detail).toMatch(
          /Too many requests for this API key: it may send 2000 at once and 30000 per 60 s after that\. Wait 1 s.*RXS_RATE_LIMIT/,
        );
        const other = await t.api('GET', '/kt/', { key: t.demo.otherTenant.users.owner.apiKey });
        expect(other.status).toBe(200);
        expect(other.headers.get('ratelimit-remaining')).toBeNull();
      } finally {
        vi.useRealTimers();
      }
      // A second later, the key has requests again (500 per second).
      await sleep(1000);
      expect((await t.api('GET', `/kt/${revision}`)).status).toBe(200);
    }, 30_000);
  });

  describe('with small limits', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer({
        limits: {
          rateLimit: 60,
          rateBurst: 20,
          tenantRateLimit: 60,
          tenantRateBurst: 30,
          rateWindowMs: 60_000,
        },
      });
    });
    afterAll(() => t.close());

    it('a key spends its burst, then gets 429 with Retry-After and RateLimit headers; a retry after it passes', async () => {
      const revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
      const { statuses, firstRefused } = await burst(t.url, t.ownerKey, `/kt/${revision}`, 40, 8);
      // 20 at once, and about one more per second (60 per 60 s) while the burst lasts.
      expect(statuses.get(200)).toBeGreaterThanOrEqual(20);
      expect(statuses.get(200)).toBeLessThanOrEqual(22);
      expect(statuses.get(429)).toBe(40 - statuses.get(200)!);
      expect(firstRefused!.headers['retry-after']).toBe('1');
      expect(firstRefused!.headers['ratelimit-limit']).toBe('20');
      expect(firstRefused!.headers['ratelimit-remaining']).toBe('0');
      expect(Number(firstRefused!.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(19);
      await sleep(1100);
      const again = await t.api('GET', `/kt/${revision}`);
      expect(again.status).toBe(200);
      expect(again.headers.get('ratelimit-remaining')).toBe('0');
    });

    it('the keys of one tenant share its rate: past it, every key of the tenant gets 429, other tenants do not', async () => {
      // The owner's key spent about 21 of the tenant's 30 above; the editor's key has its own 20.
      const editorKey = t.demo.tenant.users.editor.apiKey;
      const statuses: number[] = [];
      let refused: Awaited<ReturnType<TestServer['api']>> | undefined;
      for (let i = 0; i < 15; i++) {
        const res = await t.api('GET', '/kt/', { key: editorKey });
        statuses.push(res.status);
        if (res.status === 429) refused ??= res;
      }
      expect(statuses.filter((s) => s === 200).length).toBeLessThan(12);
      expect(statuses.slice(-3)).toEqual([429, 429, 429]);
      expect(refused!.body.detail).toMatch(/Too many requests for this tenant.*RXS_TENANT_RATE_LIMIT/);
      expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const other = await t.api('GET', '/kt/', { key: t.demo.otherTenant.users.owner.apiKey });
      expect(other.status).toBe(200);
    });
  });
});

describe("a tenant's requests handled at once: the rest wait their turn in its queue", () => {
  let t: TestServer;
  let revision: string;
  const otherKey = () => t.demo.otherTenant.users.owner.apiKey;
  beforeAll(async () => {
    t = await startTestServer({ limits: { tenantInFlight: 2, tenantQueue: 3 } });
    revision = await createTextTopic(t, 'Fairness');
  });
  afterAll(() => t.close());

  const create = (name: string) =>
    t.api('POST', '/records/', {
      body: { name, form: {}, data: { text: name }, context: { knowledge_unit_topic_id: revision } },
    });

  it('waiting requests are admitted in the order they came, once a slot frees; 429 when the queue is full', async () => {
    const holders = [await slowUpload(t.url, t.ownerKey), await slowUpload(t.url, t.ownerKey)];
    await sleep(200);
    const waiting: ReturnType<typeof create>[] = [];
    for (let i = 0; i < 3; i++) {
      waiting.push(create(`queued-${i}`));
      await sleep(50);
    }
    expect(await settlesWithin(Promise.race(waiting), 300)).toBe(false);

    const full = await t.api('GET', `/kt/${revision}`);
    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toBe('1');
    expect(full.body.detail).toMatch(
      /This tenant has 2 requests being handled and 3 waiting.*RXS_TENANT_IN_FLIGHT.*RXS_TENANT_QUEUE/,
    );
    // Another tenant is answered meanwhile: its slots are its own.
    expect((await t.api('GET', '/kt/', { key: otherKey() })).status).toBe(200);

    // One slot frees at a time: the waiting requests are answered one after another, in the order
    // they came (each one's slot passes to the next once it is answered).
    const answered: number[] = [];
    waiting.forEach((request, i) => void request.then(() => answered.push(i)));
    holders[0]!.socket.destroy();
    await waiting[2];
    expect(answered).toEqual([0, 1, 2]);
    holders[1]!.socket.destroy();
    const created = await Promise.all(waiting);
    expect(created.map((r) => r.status)).toEqual([201, 201, 201]);
  });

  it('full listings do not take the slots: one streams while both are held, cheap reads wait', async () => {
    const holders = [await slowUpload(t.url, t.ownerKey), await slowUpload(t.url, t.ownerKey)];
    await sleep(200);
    const topic = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    const listing = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}`);
    expect(listing.status).toBe(200);
    expect(listing.body.length).toBeGreaterThan(0);
    const read = t.api('GET', `/kt/${topic}`);
    expect(await settlesWithin(read, 300)).toBe(false);
    holders[0]!.socket.destroy();
    expect((await read).status).toBe(200);
    holders[1]!.socket.destroy();
  });

  it('no slot leaks: after 50 requests cut while waiting or while being read, the bound is whole again', async () => {
    const cut = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        // Half wait in the queue (some refused when it is full), half are uploads being read.
        if (i % 2) return slowUpload(t.url, t.ownerKey);
        const { hostname, port } = new URL(t.url);
        const socket = connect(Number(port), hostname);
        opened.push(socket);
        socket.on('error', () => {});
        socket.write(`GET /kt/${revision} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.ownerKey}\r\n\r\n`);
        return { socket, answer: () => '' };
      }),
    );
    await sleep(200);
    for (const { socket } of cut) socket.destroy();
    await sleep(200);

    // Both slots are free again, and there are still two: two uploads take them, a read waits
    // behind them, and is answered once one of them is cut.
    const holders = [await slowUpload(t.url, t.ownerKey), await slowUpload(t.url, t.ownerKey)];
    await sleep(200);
    const read = t.api('GET', `/kt/${revision}`);
    expect(await settlesWithin(read, 300)).toBe(false);
    holders[0]!.socket.destroy();
    expect(await settlesWithin(read, 1000)).toBe(true);
    expect((await read).status).toBe(200);
    holders[1]!.socket.destroy();
    await sleep(50);

    // And the queue is empty: as many requests as slots and queue places at once are all answered.
    const all = await Promise.all(Array.from({ length: 5 }, () => t.api('GET', `/kt/${revision}`)));
    expect(all.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  });
});

describe('the web app: signed-in users share their tenant’s rates and slots', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      limits: { rateBurst: 5, rateLimit: 60, rateWindowMs: 60_000, tenantInFlight: 2, tenantQueue: 8 },
    });
  });
  afterAll(() => t.close());

  const signedIn = async (user: { email: string; password: string }) => {
    const client = webClient(t.url);
    expect((await client.signIn(user.email, user.password)).status).toBe(200);
    return client;
  };

  it('a user past the burst gets 429 naming the user; another user is not charged for it', async () => {
    const viewer = await signedIn(t.demo.tenant.users.viewer);
    const statuses: number[] = [];
    let refused: WebResponse | undefined;
    for (let i = 0; i < 8; i++) {
      const res = await viewer.request('GET', '/api/topics');
      statuses.push(res.status);
      if (res.status === 429) refused ??= res;
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(-2)).toEqual([429, 429]);
    expect(refused!.headers.get('retry-after')).toBe('1');
    expect(refused!.body.detail).toMatch(/Too many requests for this user: it may send 5 at once/);
    const editor = await signedIn(t.demo.tenant.users.editor);
    expect((await editor.request('GET', '/api/topics')).status).toBe(200);
  });

  it("a user's request waits for the tenant's slots its API keys hold; another tenant's user does not", async () => {
    const owner = await signedIn(t.demo.tenant.users.owner);
    const holders = [await slowUpload(t.url, t.ownerKey), await slowUpload(t.url, t.ownerKey)];
    await sleep(200);
    const waiting = owner.request('GET', '/api/topics');
    expect(await settlesWithin(waiting, 300)).toBe(false);
    const other = await signedIn(t.demo.otherTenant.users.owner);
    expect((await other.request('GET', '/api/topics')).status).toBe(200);
    holders[0]!.socket.destroy();
    expect((await waiting).status).toBe(200);
    holders[1]!.socket.destroy();
  });
});
