import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestPostgresDatabase } from '../harness.js';
import { call } from './support/http.js';
import { killAll, memoryProbeArgs, probeHeap, rssOf, startServe, type HeapProbe } from './support/process.js';
import { Prng } from './support/prng.js';
import { median, slope, summarize, writeFigures, type LatencySummary } from './support/stats.js';

/**
 * Load: several clients run a sustained mixed workload (reads, listings, streamed listings,
 * writes, trace batches) against `rxs serve` on loopback for a bounded time. No request may fail,
 * the server's memory must stay flat, and the p99 latencies are reported (and written to
 * .tmp/reliability/load-<database>.json for docs/reliability.md).
 */

const SECONDS = Number(process.env.RXS_SOAK_LOAD_SECONDS ?? 30);
const CLIENTS = Number(process.env.RXS_SOAK_LOAD_CLIENTS ?? 8);
/** A hard cap, so a very fast machine still stops. */
const MAX_REQUESTS = 500_000;
const WARMUP_FRACTION = 0.25;
/**
 * Memory: the heap after a full collection (probed with SIGUSR2, see support/memory-probe.cjs) must
 * not climb with the request count. Resident memory must level off: V8 sizes its heap to the
 * allocation rate (each write also writes a version) and swings by tens of MB between
 * collections, so the level is the median of each half of the samples after warm-up, and the
 * second half's may be at most this much above the first's.
 */
const MAX_HEAP_GROWTH_MB = 8;
const MAX_RSS_LEVEL_GROWTH_MB = 48;

const loadSchema = {
  components: [
    { type: 'textfield', id: 'Field_l1', key: 'title', label: 'Title', validate: { required: true } },
    { type: 'number', id: 'Field_l2', key: 'count', label: 'Count' },
    { type: 'textarea', id: 'Field_l3', key: 'body', label: 'Body' },
  ],
};

interface Operation {
  name: string;
  weight: number;
  run(client: Client): Promise<{ status: number; expected: number; ms: number; text: string } | undefined>;
}

interface Client {
  id: number;
  prng: Prng;
  own: { id: string; version: string }[];
  linked: string[];
  traces: string[];
}

interface Target {
  url: string;
  key: string;
  demoRevision: string;
  demoRecordIds: string[];
  loadRevision: string;
  sharedRecordIds: string[];
}

function operations(t: Target): Operation[] {
  const req = (method: string, path: string, body?: unknown) =>
    call(t.url, method, path, { key: t.key, body });
  const record = (c: Client) => ({
    name: `load-${c.id}-${c.prng.int(0, 1e9)}`,
    form: {},
    data: { title: `client ${c.id}`, count: c.prng.int(0, 1e6), body: c.prng.text(400) },
    context: { knowledge_unit_topic_id: t.loadRevision },
  });
  return [
    {
      name: 'GET /kt/{id}',
      weight: 10,
      run: async () => ({ ...(await req('GET', `/kt/${t.demoRevision}`)), expected: 200 }),
    },
    {
      name: 'GET /kt/ (page of 50)',
      weight: 4,
      run: async () => ({ ...(await req('GET', '/kt/?limit=50')), expected: 200 }),
    },
    {
      name: 'GET /records/{id}',
      weight: 15,
      run: async (c) => ({
        ...(await req('GET', `/records/${c.prng.pick(t.sharedRecordIds)}`)),
        expected: 200,
      }),
    },
    {
      name: 'GET /records/ (page of 100)',
      weight: 8,
      run: async (c) => {
        const after = c.prng.chance(0.5) ? `&after=${c.prng.pick(t.sharedRecordIds)}` : '';
        return {
          ...(await req(
            'GET',
            `/records/?context__knowledge_unit_topic_id=${t.loadRevision}&limit=100${after}`,
          )),
          expected: 200,
        };
      },
    },
    {
      name: 'GET /records/ (streamed topic)',
      weight: 4,
      run: async () => ({
        ...(await req('GET', `/records/?context__knowledge_unit_topic_id=${t.demoRevision}`)),
        expected: 200,
      }),
    },
    {
      name: 'POST /records/',
      weight: 15,
      run: async (c) => {
        const reply = await req('POST', '/records/', record(c));
        if (reply.status === 201) c.own.push({ id: reply.body._id, version: reply.body.version });
        return { ...reply, expected: 201 };
      },
    },
    {
      name: 'PATCH /records/{id}',
      weight: 10,
      run: async (c) => {
        const mine = c.own.length > 0 ? c.prng.pick(c.own) : undefined;
        if (!mine) return undefined;
        const reply = await req('PATCH', `/records/${mine.id}`, {
          data: { title: `patched by ${c.id}`, count: c.prng.int(0, 1e6) },
          version: mine.version,
        });
        if (reply.status === 200) mine.version = reply.body.version;
        return { ...reply, expected: 200 };
      },
    },
    {
      name: 'DELETE /records/{id}',
      weight: 3,
      run: async (c) => {
        if (c.own.length < 10) return undefined;
        const [mine] = c.own.splice(c.prng.int(0, c.own.length - 1), 1);
        c.linked = c.linked.filter((id) => id !== mine!.id);
        return { ...(await req('DELETE', `/records/${mine!.id}`)), expected: 204 };
      },
    },
    {
      name: 'POST /traces/',
      weight: 6,
      run: async (c) => {
        if (c.own.length < 2) return undefined;
        const source = c.prng.pick(c.own).id;
        const target = c.prng.pick(t.sharedRecordIds);
        // Each source links once per target and relation, so no 409 is expected.
        const reply = await req('POST', '/traces/', {
          source: { node_id: source, node_type: 'Record' },
          target: { node_id: target, node_type: 'Record' },
          relation_type: `mentions`,
        });
        if (reply.status === 409) return undefined;
        if (reply.status === 201) {
          c.linked.push(source);
          c.traces.push(reply.body._id);
        }
        return { ...reply, expected: 201 };
      },
    },
    {
      name: 'POST /traces/batch/list (50 nodes, 2 hops)',
      weight: 10,
      run: async (c) => {
        const ids = [...t.demoRecordIds, ...c.linked.slice(-20)];
        while (ids.length < 50) ids.push(c.prng.pick(t.sharedRecordIds));
        const reply = await req('POST', '/traces/batch/list', {
          nodes: ids.slice(0, 50).map((id) => ({ node_id: id, node_type: 'Record', version: '1' })),
          n_hops: 2,
        });
        return { ...reply, expected: 200 };
      },
    },
  ];
}

async function runLoad(database: 'sqlite' | 'postgres') {
  const dataDir = mkdtempSync(join(tmpdir(), `rxs-load-${database}-`));
  const postgres = database === 'postgres' ? await createTestPostgresDatabase() : undefined;
  // Its clients share one key at full speed on purpose: the request rates are off (fairness.soak
  // measures them).
  const server = await startServe(
    ['--demo', '--data-dir', dataDir, ...(postgres ? ['--database', postgres.url] : [])],
    { RXS_RATE_LIMIT: '0', RXS_TENANT_RATE_LIMIT: '0' },
    memoryProbeArgs,
  );
  try {
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    const key: string = demo.tenant.users.owner.apiKey;
    const draft = await call(server.url, 'POST', '/kt/', {
      key,
      body: { knowledge_topic_name: 'Load', type: 'multi_record', knowledge_topic_schema: loadSchema },
    });
    const loadRevision = (await call(server.url, 'POST', `/kt/${draft.body._id}/approve`, { key })).body._id;
    // A few hundred shared records so reads, pages and batches touch real data.
    const seedPrng = new Prng(7);
    const sharedRecordIds: string[] = [];
    for (let i = 0; i < 300; i++) {
      const reply = await call(server.url, 'POST', '/records/', {
        key,
        body: {
          name: `shared-${i}`,
          form: {},
          data: { title: `shared ${i}`, count: i, body: seedPrng.text(400) },
          context: { knowledge_unit_topic_id: loadRevision },
        },
      });
      expect(reply.status).toBe(201);
      sharedRecordIds.push(reply.body._id);
    }
    const target: Target = {
      url: server.url,
      key,
      demoRevision: demo.tenant.topics.systemRequirements.currentRevisionId,
      demoRecordIds: demo.tenant.topics.systemRequirements.recordIds.slice(0, 20),
      loadRevision,
      sharedRecordIds,
    };
    const ops = operations(target);
    const totalWeight = ops.reduce((s, o) => s + o.weight, 0);
    const latencies = new Map<string, number[]>(ops.map((o) => [o.name, []]));
    const all: number[] = [];
    const errors: string[] = [];
    let requests = 0;

    const pid = server.child.pid!;
    const started = performance.now();
    const deadline = started + SECONDS * 1000;
    const memory: { x: number; y: number }[] = [];
    const sampler = setInterval(() => {
      try {
        memory.push({ x: (performance.now() - started) / 1000, y: rssOf(pid) });
      } catch {
        // the process is gone; the requests will say so
      }
    }, 250);

    // The heap after a full collection: once warm, then every few seconds until the end.
    const heap: HeapProbe[] = [];
    const probing = (async () => {
      await new Promise((r) => setTimeout(r, SECONDS * 1000 * WARMUP_FRACTION));
      while (performance.now() < deadline) {
        heap.push(await probeHeap(server));
        await new Promise((r) => setTimeout(r, Math.min(5000, Math.max(0, deadline - performance.now()))));
      }
    })();
    const clients: Client[] = Array.from({ length: CLIENTS }, (_, id) => ({
      id,
      prng: new Prng(1000 + id),
      own: [],
      linked: [],
      traces: [],
    }));
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline && requests < MAX_REQUESTS && errors.length < 20) {
          let roll = client.prng.next() * totalWeight;
          const op = ops.find((o) => (roll -= o.weight) < 0) ?? ops[0]!;
          try {
            const result = await op.run(client);
            if (!result) continue;
            requests++;
            latencies.get(op.name)!.push(result.ms);
            all.push(result.ms);
            if (result.status !== result.expected)
              errors.push(`${op.name}: ${result.status} ${result.text.slice(0, 200)}`);
          } catch (error) {
            requests++;
            errors.push(`${op.name}: ${String((error as Error).cause ?? error)}`);
          }
        }
      }),
    );
    await probing;
    heap.push(await probeHeap(server));
    clearInterval(sampler);
    const elapsed = (performance.now() - started) / 1000;

    // Nothing the clients were told was written is missing.
    const live = clients.flatMap((c) => c.own);
    const listing = await call(
      server.url,
      'GET',
      `/records/?context__knowledge_unit_topic_id=${loadRevision}`,
      { key },
    );
    const present = new Set((listing.body as { _id: string }[]).map((r) => r._id));
    const missing = live.filter((r) => !present.has(r.id));
    const health = await call(server.url, 'GET', '/healthz');

    const heapMb = heap.map((h) => Math.round((h.heapUsed / 1048576) * 10) / 10);
    const heapFigures = {
      heapProbes: heapMb.length,
      heapAfterFullGcMb: heapMb,
      heapGrowthMb: Math.round((heapMb[heapMb.length - 1]! - heapMb[0]!) * 10) / 10,
    };
    const afterWarmup = memory.filter((m) => m.x >= elapsed * WARMUP_FRACTION);
    const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
    const rss = afterWarmup.map((m) => m.y);
    const half = Math.floor(rss.length / 2);
    const memoryFigures = {
      rssAtStartMb: mb(memory[0]?.y ?? Number.NaN),
      rssAfterWarmupMb: mb(rss[0] ?? Number.NaN),
      rssMaxAfterWarmupMb: mb(Math.max(...rss)),
      rssAtEndMb: mb(rss[rss.length - 1] ?? Number.NaN),
      rssGrowthAfterWarmupMb: mb(Math.max(...rss) - (rss[0] ?? 0)),
      rssLevelFirstHalfMb: mb(median(rss.slice(0, half))),
      rssLevelSecondHalfMb: mb(median(rss.slice(half))),
      rssLevelGrowthMb: mb(median(rss.slice(half)) - median(rss.slice(0, half))),
      rssSlopeMbPerMinute: mb(slope(afterWarmup) * 60),
      samples: memory.length,
    };
    const perOperation: Record<string, LatencySummary> = {};
    for (const [name, samples] of latencies) perOperation[name] = summarize(samples);
    const figures = {
      database,
      clients: CLIENTS,
      seconds: Math.round(elapsed * 10) / 10,
      requests,
      requestsPerSecond: Math.round(requests / elapsed),
      errors: errors.length,
      firstErrors: errors.slice(0, 5),
      recordsWrittenAndVerified: live.length,
      recordsMissing: missing.length,
      latencyMs: { all: summarize(all), ...perOperation },
      memory: { ...memoryFigures, ...heapFigures },
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
    };
    console.log(`load (${database}): ${JSON.stringify(figures, null, 2)}`);
    console.table(Object.fromEntries(Object.entries(figures.latencyMs).map(([k, v]) => [k, { ...v }])));
    writeFigures(`load-${database}`, figures);

    expect(errors, errors.slice(0, 10).join('\n')).toEqual([]);
    expect(missing).toEqual([]);
    expect(health.status).toBe(200);
    expect(requests).toBeGreaterThan(CLIENTS * 50);
    expect(heapFigures.heapProbes).toBeGreaterThanOrEqual(3);
    expect(heapFigures.heapGrowthMb).toBeLessThan(MAX_HEAP_GROWTH_MB);
    expect(memoryFigures.rssLevelGrowthMb).toBeLessThan(MAX_RSS_LEVEL_GROWTH_MB);
  } finally {
    await server.stop('SIGTERM');
    await postgres?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('sustained mixed load', () => {
  afterAll(() => killAll());

  it(
    `${CLIENTS} clients for ${SECONDS} s on SQLite: no errors, flat memory, p99 reported`,
    async () => {
      await runLoad('sqlite');
    },
    SECONDS * 1000 + 120_000,
  );

  it.skipIf(!process.env.RXS_TEST_POSTGRES_URL)(
    `${CLIENTS} clients for ${SECONDS} s on PostgreSQL: no errors, flat memory, p99 reported`,
    async () => {
      await runLoad('postgres');
    },
    SECONDS * 1000 + 120_000,
  );
});
