import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ServerLimits } from '@rxs/server';
import { startTestServer } from '../harness.js';
import { summarize, writeFigures, type LatencySummary } from './support/stats.js';

/**
 * Fairness: tenant A floods the server with cheap reads (GET /records/{id}) over 32 keep-alive
 * connections for a while, and tenant B's reads of the same kind, at a modest rate, must keep a p99
 * under 100 ms. The server runs in this process; the flood and the probe each run in a process of
 * their own (support/fairness-client.mjs), so neither shares an event loop with the server or the
 * other. Three runs: the default limits (A's key soon meets 429), the rates switched off (A is
 * served as fast as the server answers, and only its tenant's slots stand between it and B), and,
 * for comparison only, no fairness at all. Figures go to .tmp/reliability/fairness.json.
 */

const SECONDS = Number(process.env.RXS_SOAK_FAIRNESS_SECONDS ?? 10);
const CONNECTIONS = 32;
const PROBE_INTERVAL_MS = 20;
const MAX_P99_MS = 100;
const client = fileURLToPath(new URL('./support/fairness-client.mjs', import.meta.url));

interface Flood {
  requests: number;
  requestsPerSecond: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  latencyMs: { p50: number; p99: number; max: number };
}

function runClient<T>(args: (string | number)[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [client, ...args.map(String)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as T) : reject(new Error(`fairness client exited ${code}`)),
    );
  });
}

async function run(
  limits: Partial<ServerLimits>,
): Promise<{ flood: Flood; probe: LatencySummary; probeStatuses: Record<string, number> }> {
  const t = await startTestServer({ limits });
  try {
    const a = t.demo.tenant;
    const b = t.demo.otherTenant;
    const aPaths = a.topics.systemRequirements!.recordIds.slice(0, 20).map((id) => `/records/${id}`);
    const bPaths = b.topics.riskRegister!.recordIds.slice(0, 20).map((id) => `/records/${id}`);
    const flooding = runClient<Flood>([
      'flood',
      t.url,
      a.users.owner.apiKey,
      aPaths.join(','),
      SECONDS,
      CONNECTIONS,
    ]);
    // B starts once A's flood is under way, and stops before it ends.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const probe = await runClient<{ statuses: Record<string, number>; latencies: number[] }>([
      'probe',
      t.url,
      b.users.owner.apiKey,
      bPaths.join(','),
      SECONDS - 2,
      PROBE_INTERVAL_MS,
    ]);
    const flood = await flooding;
    return { flood, probe: summarize(probe.latencies), probeStatuses: probe.statuses };
  } finally {
    await t.close();
  }
}

describe('fairness between tenants', () => {
  it(
    `tenant A floods with ${CONNECTIONS} connections of cheap reads for ${SECONDS} s: tenant B's p99 stays under ${MAX_P99_MS} ms`,
    async () => {
      // The comparison first: the server's code warms up in it, not in the runs that are asserted.
      const unbounded = await run({ rateLimit: 0, tenantRateLimit: 0, tenantInFlight: 0 });
      const defaults = await run({});
      const ratesOff = await run({ rateLimit: 0, tenantRateLimit: 0 });
      const figures = {
        seconds: SECONDS,
        connections: CONNECTIONS,
        probeIntervalMs: PROBE_INTERVAL_MS,
        read: 'GET /records/{id}',
        maxP99Ms: MAX_P99_MS,
        defaults: { a: defaults.flood, b: { statuses: defaults.probeStatuses, latencyMs: defaults.probe } },
        ratesOff: { a: ratesOff.flood, b: { statuses: ratesOff.probeStatuses, latencyMs: ratesOff.probe } },
        noFairness: {
          a: unbounded.flood,
          b: { statuses: unbounded.probeStatuses, latencyMs: unbounded.probe },
        },
        machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
      };
      console.log(`fairness: ${JSON.stringify(figures, null, 2)}`);
      writeFigures('fairness', figures);

      // With the defaults, A's one key meets its rate within the first second or so.
      expect(defaults.flood.statuses['429'] ?? 0).toBeGreaterThan(0);
      expect(defaults.flood.statuses['200']).toBeGreaterThanOrEqual(2000);
      for (const { probe, probeStatuses } of [defaults, ratesOff]) {
        expect(Object.keys(probeStatuses)).toEqual(['200']);
        expect(probe.count).toBeGreaterThan(100);
        expect(probe.p99).toBeLessThan(MAX_P99_MS);
      }
      // Without its rate, A is really served: the bound, not a refusal, keeps B's latency.
      expect(ratesOff.flood.statuses['200']).toBeGreaterThan(SECONDS * 1000);
      expect(ratesOff.flood.statuses['429'] ?? 0).toBe(0);
    },
    SECONDS * 3 * 1000 + 120_000,
  );
});
