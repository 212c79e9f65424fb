/**
 * 4. Writes: `POST /records/` (validated against the topic's form) at rising concurrency, against
 * json-server's `POST /records` on the same records: in its usual file mode (db.json, rewritten on
 * every write) and in memory (nothing persisted, its best case).
 * 5. Point lookups: `GET /kt/{revision_id}` and `GET /records/{id}` (random ids) under load.
 */
import { load } from '../lib/load.mjs';
import { settle } from '../lib/processes.mjs';
import { median, ratios } from '../lib/stats.mjs';

/** One load point over its runs: medians, and the requests completed and failed in all. */
export function summarize(samples) {
  // Latencies only from runs that completed requests (autocannon reports 0 ms otherwise).
  const completed = samples.filter((s) => s.ok > 0);
  return {
    rps: median(samples.map((s) => s.rps)),
    ok: samples.reduce((sum, s) => sum + s.ok, 0),
    p50: median(completed.map((s) => s.latencyMs.p50)),
    p99: median(completed.map((s) => s.latencyMs.p99)),
    failures: samples.reduce((sum, s) => sum + s.non2xx + s.errors, 0),
    timeouts: samples.reduce((sum, s) => sum + s.timeouts, 0),
    runs: samples,
  };
}

/**
 * `targets`: [{ name, path, server }] for a running server, or [{ name, path, start, perRun }] for
 * one started here (once, or afresh for every run when `perRun`); `start` may resolve to
 * `{ unavailable: reason }`, and the target is then left out and the reason reported. The caller
 * stops `target.server` of started targets.
 */
export async function measureWrites({ targets, body, apiKey, concurrency, seconds, runs, log }) {
  const headers = { 'content-type': 'application/json', 'x-api-key': apiKey };
  const payload = JSON.stringify(body);
  const unavailable = {};
  const live = [];
  for (const t of targets) {
    if (t.start && !t.perRun) t.server = await t.start();
    if (t.start && t.perRun) {
      // Probe once: a baseline that cannot load the data at all is reported, not retried.
      t.server = await t.start();
      if (!t.server.unavailable) {
        await t.server.stop('SIGKILL');
        t.server = undefined;
      }
    }
    if (t.server?.unavailable) unavailable[t.name] = t.server.unavailable;
    else live.push(t);
  }
  const levels = [];
  for (const connections of concurrency) {
    const samples = Object.fromEntries(live.map((t) => [t.name, []]));
    for (let round = 0; round < runs; round++) {
      for (const t of live) {
        if (t.perRun) t.server = await t.start();
        await settle(t.server.pid);
        const result = await load({
          url: t.server.url,
          method: 'POST',
          path: t.path,
          headers,
          body: payload,
          connections,
          seconds,
        });
        samples[t.name].push(result);
        if (t.perRun) {
          await t.server.stop('SIGKILL');
          t.server = undefined;
        }
      }
      log?.(
        `  writes c=${connections} round ${round + 1}/${runs}: ` +
          live.map((t) => `${t.name} ${samples[t.name].at(-1).rps.toFixed(1)}/s`).join(', '),
      );
    }
    const level = {
      connections,
      ...Object.fromEntries(live.map((t) => [t.name, summarize(samples[t.name])])),
    };
    const rps = (name) => samples[name]?.map((s) => s.rps) ?? [];
    // A baseline that completed no request in a run did less than one per run: the ratio against
    // it is then a lower bound, taken with one request per run.
    const atLeastOne = (name) => samples[name]?.map((s) => Math.max(s.rps, 1 / s.seconds)) ?? [];
    const lowerBound = (name) => samples[name]?.some((s) => s.ok === 0) ?? false;
    level.ratio = {
      rxsOverJsonServer: median(ratios(rps('rxs'), atLeastOne('jsonServer'))),
      rxsOverJsonServerMemory: median(ratios(rps('rxs'), atLeastOne('jsonServerMemory'))),
      lowerBound: { jsonServer: lowerBound('jsonServer'), jsonServerMemory: lowerBound('jsonServerMemory') },
    };
    levels.push(level);
  }
  return { levels, unavailable };
}

export async function measureLookups({
  rxs,
  revisionId,
  recordIds,
  apiKey,
  connections,
  seconds,
  runs,
  log,
}) {
  const headers = { 'x-api-key': apiKey };
  const endpoints = [
    { name: 'kt', label: 'GET /kt/{id}', path: `/kt/${revisionId}` },
    {
      name: 'record',
      label: 'GET /records/{id}',
      path: (n) => `/records/${recordIds[(n * 7919) % recordIds.length]}`,
    },
  ];
  const out = {};
  const samples = Object.fromEntries(endpoints.map((e) => [e.name, []]));
  for (let round = 0; round < runs; round++) {
    for (const e of endpoints) {
      await settle(rxs.pid);
      samples[e.name].push(await load({ url: rxs.url, path: e.path, headers, connections, seconds }));
    }
    log?.(
      `  lookups round ${round + 1}/${runs}: ` +
        endpoints.map((e) => `${e.label} ${samples[e.name].at(-1).rps.toFixed(0)}/s`).join(', '),
    );
  }
  for (const e of endpoints) out[e.name] = { label: e.label, connections, ...summarize(samples[e.name]) };
  return out;
}
