/** Load generation with autocannon (in this process; the server under test is another process). */
import autocannon from 'autocannon';

/**
 * Runs autocannon once. `path` and `body` are each a string or a function of the request number
 * (for varying ids and contents).
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
  const request = { method, headers };
  if (typeof path === 'function' || typeof body === 'function') {
    // Both from the same request number, so a PATCH body belongs to the record in its path.
    request.setupRequest = (req) => {
      const i = n++;
      return {
        ...req,
        ...(typeof path === 'function' ? { path: path(i) } : {}),
        ...(typeof body === 'function' ? { body: body(i) } : {}),
      };
    };
  }
  if (typeof path !== 'function') request.path = path;
  if (typeof body !== 'function') request.body = body;
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
