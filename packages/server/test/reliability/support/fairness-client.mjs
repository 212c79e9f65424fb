/**
 * The load of the fairness soak, run as its own process so that neither the flood nor the probe
 * shares an event loop with the server or with each other. Prints one JSON line.
 *
 *   node fairness-client.mjs flood URL KEY PATHS SECONDS CONNECTIONS
 *     autocannon over keep-alive connections, as fast as answers come: counts and rate by status.
 *   node fairness-client.mjs probe URL KEY PATHS SECONDS INTERVAL_MS
 *     one keep-alive connection, one request every INTERVAL_MS: each latency in ms.
 *
 * PATHS is a comma list, taken in turn.
 */
import { Agent, request } from 'node:http';
import { setPriority } from 'node:os';
import autocannon from 'autocannon';

const [mode, url, key, pathList, secondsText, countText] = process.argv.slice(2);
const paths = pathList.split(',');
const seconds = Number(secondsText);

if (mode === 'flood') {
  // The flood would come from other machines; here it shares the server's cores, and at a lower
  // priority it takes what the server leaves instead of halving the server's share.
  setPriority(10);
  const statuses = {};
  const instance = autocannon({
    url,
    connections: Number(countText),
    duration: seconds,
    headers: { 'x-api-key': key },
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
  instance.on('response', (_client, status) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
  });
  const result = await instance;
  const total = Object.values(statuses).reduce((s, n) => s + n, 0);
  process.stdout.write(
    `${JSON.stringify({
      requests: total,
      requestsPerSecond: Math.round(total / result.duration),
      statuses,
      errors: result.errors,
      timeouts: result.timeouts,
      latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    })}\n`,
  );
} else if (mode === 'probe') {
  const interval = Number(countText);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path) =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      // When it was sent, on the clock all processes share, for a server that wants to compare.
      const sent = String(performance.timeOrigin + started);
      const req = request(
        `${url}${path}`,
        { agent, headers: { 'x-api-key': key, 'x-sent': sent } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  const latencies = [];
  const statuses = {};
  const deadline = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < deadline; i++) {
    const next = performance.now() + interval;
    const { status, ms } = await get(paths[i % paths.length]);
    statuses[status] = (statuses[status] ?? 0) + 1;
    latencies.push(Math.round(ms * 100) / 100);
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  agent.destroy();
  process.stdout.write(`${JSON.stringify({ statuses, latencies })}\n`);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
