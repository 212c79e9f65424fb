// A client of its own for the budget soak: asks GET /healthz every INTERVAL ms (one request at a
// time, a fresh keep-alive connection reused) until its standard input closes, then prints every
// latency in ms as one JSON line. It runs in its own process so that the test process reading a
// large answer cannot delay it: the figures are the server's, not the test's.
'use strict';
const http = require('node:http');
const [url, intervalText] = process.argv.slice(2);
const interval = Number(intervalText ?? 20);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const latencies = [];
let stopping = false;
process.stdin.on('data', () => {});
process.stdin.on('end', () => (stopping = true));
function once() {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const request = http.get(`${url}/healthz`, { agent, timeout: 30_000 }, (response) => {
      response.resume();
      response.on('end', () => {
        latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
        resolve();
      });
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => {
      latencies.push(30_000);
      resolve();
    });
  });
}
(async () => {
  while (!stopping) {
    await once();
    await new Promise((r) => setTimeout(r, interval));
  }
  process.stdout.write(`${JSON.stringify(latencies)}\n`);
  agent.destroy();
})();
