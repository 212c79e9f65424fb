/** Load generation with autocannon (in this process; the server under test is another process). */
import autocannon from 'autocannon';

/**
 * Runs autocannon once. `path` is a string or a function of the request number (for varying ids).
 * Returns successful requests per second, latency percentiles (ms) and the failures.
 */
export async function load({
  url,
  method = 'GET',
  path,
  headers = {},
  body,
  connections,
  seconds,
  timeout = 30,
}) {
  let n = 0;
  const request = { method, headers, body };
  if (typeof path === 'function') {
    request.setupRequest = (req) => ({ ...req, path: path(n++) });
  } else {
    request.path = path;
  }
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    timeout,
    requests: [request],
  });
  const ok = result['2xx'];
  return {
    rps: ok / result.duration,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    seconds: result.duration,
  };
}
