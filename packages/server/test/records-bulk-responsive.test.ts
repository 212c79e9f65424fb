import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';

/** The most items a request takes; the large requests' bodies just within the default limit. */
const RECORDS = 1000;
const LARGE_BODY_BYTES = 4.9 * 1024 * 1024;
/**
 * The longest the event loop may be held, as a share of the CPU time the whole request takes: the
 * work of each item, and each statement of the transaction, gives the event loop its turn. What
 * remains whole is parsing the body, the commit, and the collector. Measured in CPU time, not
 * wall time, and as a share: on a loaded machine a few milliseconds of work can take ten times as
 * long, and that is not the server holding the loop.
 */
const LONGEST_HOLD_SHARE = 0.25;
/** /healthz asked every this many ms while the writes run, as a monitor would. */
const PROBE_MS = 10;

/**
 * The CPU time of this thread, the event loop's, in ms: Linux counts it per thread; elsewhere the
 * process's (which also counts the collector's threads) stands in.
 */
const THREAD_STAT = '/proc/thread-self/schedstat';
const cpuNow = existsSync(THREAD_STAT)
  ? () => Number(readFileSync(THREAD_STAT, 'utf8').split(' ')[0]) / 1e6
  : () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };

/**
 * What `work` cost the process in CPU time, and the longest stretch of it without a turn of the
 * event loop, in CPU time and in wall time.
 */
async function holdsWhile<T>(
  work: () => Promise<T>,
): Promise<{ result: T; cpuMs: number; longestCpuMs: number; longestWallMs: number }> {
  let longestCpuMs = 0;
  let longestWallMs = 0;
  let lastWall = performance.now();
  const started = cpuNow();
  let lastCpu = started;
  let done = false;
  const tick = () => {
    const wall = performance.now();
    const cpu = cpuNow();
    longestCpuMs = Math.max(longestCpuMs, cpu - lastCpu);
    longestWallMs = Math.max(longestWallMs, wall - lastWall);
    lastWall = wall;
    lastCpu = cpu;
    if (!done) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  try {
    const result = await work();
    return { result, cpuMs: cpuNow() - started, longestCpuMs, longestWallMs };
  } finally {
    done = true;
  }
}

/**
 * `POST /records/bulk` at its largest gives the event loop a turn every few milliseconds, before
 * and inside its one transaction: /healthz and other clients' reads are answered while it runs,
 * other writes wait for its commit (never interleave with it), and it stays all or nothing.
 */
describe('POST /records/bulk keeps the server responsive', () => {
  let t: TestServer;
  let revision: string;
  let elsewhere: string;
  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'Bulk at its largest');
    elsewhere = await approvedTopic(t, 'Written and read meanwhile');
    // Warm: the first request of a kind compiles its schemas and statements.
    expect((await t.api('POST', '/records/bulk', { body: { records: items('warm', 2, 300) } })).status).toBe(
      200,
    );
  }, 60_000);
  afterAll(() => t?.close());

  /** RECORDS creates of about `bytes` each, each under an item key of its own. */
  function items(batch: string, count: number, bytes: number) {
    const note = 'bulk '.repeat(Math.floor(bytes / 5) - 40);
    return Array.from({ length: count }, (_, i) => ({
      name: `${batch}-${i}`,
      form: {},
      data: { note: `${batch} ${i} ${note}` },
      context: { knowledge_unit_topic_id: revision },
      idempotency_key: `${batch}-item-${i}`,
    }));
  }
  /** A request's body as bytes: making 5 MB of text is the test's own work on the shared event loop. */
  const bodyOf = (records: unknown[]) => Buffer.from(JSON.stringify({ records }));
  const send = (body: Buffer, key: string) =>
    fetch(`${t.url}/records/bulk`, {
      method: 'POST',
      headers: { 'x-api-key': t.ownerKey, 'content-type': 'application/json', 'idempotency-key': key },
      body,
    }).then(async (response) => ({ status: response.status, text: await response.text() }));
  const count = async (on: string) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${on}`)).body.count as number;

  /** /healthz and a read of the tenant's records, asked every PROBE_MS until `until` settles: their times. */
  async function probe(until: Promise<unknown>): Promise<number[]> {
    let done = false;
    void until.finally(() => (done = true));
    const answered: number[] = [];
    while (!done) {
      const started = performance.now();
      const [health, read] = await Promise.all([
        fetch(`${t.url}/healthz`),
        t.api('GET', `/records/count?context__knowledge_unit_topic_id=${elsewhere}`),
      ]);
      await health.text();
      expect([health.status, read.status]).toEqual([200, 200]);
      answered.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
    }
    return answered;
  }

  it(`a bulk write of ${RECORDS} items is done in many short turns; /healthz and reads are answered meanwhile`, async () => {
    const before = await count(revision);
    const body = bodyOf(items('alone', RECORDS, 300));
    const { result, cpuMs, longestCpuMs, longestWallMs } = await holdsWhile(async () => {
      const bulk = send(body, 'alone');
      return Promise.all([bulk, probe(bulk)]);
    });
    const [answer, probes] = result;
    console.log(
      `bulk of ${RECORDS} (${(body.length / 1024).toFixed(0)} KB): ${cpuMs.toFixed(0)} ms CPU, longest hold ${longestCpuMs.toFixed(0)} ms CPU (${longestWallMs.toFixed(0)} ms wall); ${probes.length} probes answered, slowest ${Math.max(...probes).toFixed(0)} ms`,
    );
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
    expect(JSON.parse(answer.text).records).toHaveLength(RECORDS);
    expect(await count(revision)).toBe(before + RECORDS);
    expect(longestCpuMs).toBeLessThan(cpuMs * LONGEST_HOLD_SHARE);
    expect(probes.length).toBeGreaterThan(1);
  });

  it(`two of ${RECORDS} items (5 MB) at once, and single writes meanwhile: each all or nothing, none interleaved`, async () => {
    const first = items('first', RECORDS, LARGE_BODY_BYTES / RECORDS);
    // The second shares its last item's key with the first, for another record: whichever
    // commits second meets that key kept, and writes nothing.
    const second = items('second', RECORDS, LARGE_BODY_BYTES / RECORDS);
    second[RECORDS - 1]!.idempotency_key = first[RECORDS - 1]!.idempotency_key;
    const bodies = [bodyOf(first), bodyOf(second)];
    expect(bodies[0]!.length).toBeLessThan(5 * 1024 * 1024);
    const before = await count(revision);
    const beforeElsewhere = await count(elsewhere);
    const { result, cpuMs, longestCpuMs, longestWallMs } = await holdsWhile(() => {
      const bulks = Promise.all([send(bodies[0]!, 'first'), send(bodies[1]!, 'second')]);
      const singles = Promise.all(
        Array.from({ length: 5 }, async (_, i) => {
          await new Promise((resolve) => setTimeout(resolve, 30 * i));
          return t.api('POST', '/records/', {
            body: {
              name: `single-${i}`,
              form: {},
              data: { note: `${i}` },
              context: { knowledge_unit_topic_id: elsewhere },
            },
          });
        }),
      );
      return Promise.all([bulks, singles, probe(bulks)]);
    });
    const [[a, b], singles, probes] = result;
    console.log(
      `two bulks of ${RECORDS} (${(bodies[0]!.length / 1024 / 1024).toFixed(1)} MB) at once: ${cpuMs.toFixed(0)} ms CPU, longest hold ${longestCpuMs.toFixed(0)} ms CPU (${longestWallMs.toFixed(0)} ms wall); ${probes.length} probes answered, slowest ${Math.max(...probes).toFixed(0)} ms`,
    );
    expect(singles.map((single) => single.status)).toEqual([201, 201, 201, 201, 201]);
    expect(await count(elsewhere)).toBe(beforeElsewhere + 5);
    expect([a.status, b.status].sort()).toEqual([200, 422]);
    const [written, refused] = a.status === 200 ? ['first-', b] : ['second-', a];
    expect(JSON.parse(refused.text).detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'records', RECORDS - 1, 'idempotency_key'],
        type: 'idempotency_key_reused',
      }),
    ]);
    // The records of the one written, none of the one refused.
    expect(await count(revision)).toBe(before + RECORDS);
    const listing = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    const names = (listing.body as { name: string }[]).map((record) => record.name);
    expect(
      names.filter((name) => /^(first|second)-/.test(name)).every((name) => name.startsWith(written)),
    ).toBe(true);
    expect(longestCpuMs).toBeLessThan(cpuMs * LONGEST_HOLD_SHARE);
  });
});
