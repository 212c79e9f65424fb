import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

/** A raw connection to the server: what it received, and when it closed. */
function rawConnection(
  url: string,
): Promise<{ socket: Socket; received: () => string; closed: Promise<number> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now())));
      resolve({ socket, received: () => text, closed });
    });
    socket.once('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('request time limits: slow bodies and headers are cut with 408', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ limits: { requestTimeoutMs: 1000, headersTimeoutMs: 1000 } });
  });
  afterAll(() => t.close());

  it('a POST whose body trickles is answered 408 within the limit', async () => {
    const { socket, received, closed } = await rawConnection(t.url);
    const started = Date.now();
    socket.write(
      `POST /records/ HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.ownerKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
    );
    const trickle = setInterval(() => socket.writable && socket.write(' '), 100);
    const end = await closed;
    clearInterval(trickle);
    expect(end - started).toBeLessThan(3000);
    expect(received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(received().split('\r\n\r\n')[1]!).detail).toMatch(
      /took too long.*RXS_REQUEST_TIMEOUT_MS/,
    );
  });

  it('many trickling connections are all closed within the limit', async () => {
    const connections = await Promise.all(Array.from({ length: 50 }, () => rawConnection(t.url)));
    const started = Date.now();
    // Half trickle their headers (before anyone is authenticated), half their bodies.
    connections.forEach(({ socket }, i) =>
      socket.write(
        i % 2
          ? 'GET /healthz HTTP/1.1\r\nHost: x\r\n'
          : `POST /kt/ HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.ownerKey}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n`,
      ),
    );
    const trickle = setInterval(() => {
      for (const { socket } of connections) if (socket.writable) socket.write('X-A: b\r\n'.slice(0, 1));
    }, 100);
    const ends = await Promise.all(connections.map((c) => c.closed));
    clearInterval(trickle);
    expect(Math.max(...ends) - started).toBeLessThan(3000);
    const answers = connections.map((c) => c.received().slice(0, 25));
    expect(answers.filter((r) => !r.startsWith('HTTP/1.1 408'))).toEqual([]);
  });

  it('a request that arrives in time is served as before', async () => {
    expect((await t.api('GET', '/healthz', { key: null })).status).toBe(200);
  });
});

describe('rate and concurrency limits answer 429 with Retry-After and RateLimit headers', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      limits: { rateLimit: 5, rateBurst: 5, anonymousRateLimit: 3, rateWindowMs: 60_000 },
    });
  });
  afterAll(() => t.close());

  it('a key past its rate gets 429; another tenant keeps its own budget', async () => {
    const revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.api('GET', `/kt/${revision}`);
      expect(res.status).toBe(200);
      remaining.push(res.headers.get('ratelimit-remaining'));
      if (i >= 2) expect(res.headers.get('ratelimit-limit')).toBe('5');
    }
    // The headers show once half the budget is spent.
    expect(remaining).toEqual([null, null, '2', '1', '0']);
    const refused = await t.api('GET', `/kt/${revision}`);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/Too many requests for this API key.*Wait \d+ s/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // One request comes back every 12 s (5 per 60 s), the whole burst within the window.
    expect(retryAfter).toBeGreaterThanOrEqual(11);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(retryAfter);
    expect(Number(refused.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);

    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    const other: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.api('GET', '/kt/', { key: otherKey });
      expect(res.status).toBe(200);
      other.push(res.headers.get('ratelimit-remaining'));
    }
    expect(other).toEqual([null, null, '2']);
  });

  it('failed authentications from one address are throttled; valid keys from it are not', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await t.api('GET', '/kt/', { key: `wrong-${i}` })).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const refused = await t.api('GET', '/kt/', { key: 'wrong' });
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body.detail).toMatch(/missing or invalid API key.*Wait \d+ s/);
    expect((await t.api('GET', '/kt/', { key: t.demo.tenant.users.viewer.apiKey })).status).toBe(200);
  });

  it('the OpenAPI declares 429', async () => {
    const res = await t.api('GET', '/openapi.json', { key: null });
    const paths = res.body.paths as Record<string, Record<string, { responses: object }>>;
    const operations = Object.entries(paths)
      .filter(([path]) => /^\/(kt|records|traces)\//.test(path))
      .flatMap(([, methods]) => Object.values(methods));
    expect(operations.length).toBeGreaterThan(0);
    for (const operation of operations) expect(Object.keys(operation.responses)).toContain('429');
  });
});
