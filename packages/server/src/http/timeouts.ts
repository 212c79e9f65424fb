import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { ServerLimits } from './limits.js';

/**
 * Node's own request limits, as Fastify options: the whole request and its headers must arrive in
 * time (a trickling body or header is answered 408 by `clientErrorHandler`), and a silent connection
 * is closed. Node checks the request limits on a timer, every `connectionsCheckingInterval`: that
 * interval follows the limits so a short limit is enforced on time.
 */
export function requestTimeoutOptions(
  limits: Pick<ServerLimits, 'requestTimeoutMs' | 'headersTimeoutMs' | 'idleTimeoutMs'>,
): Pick<FastifyServerOptions, 'requestTimeout' | 'connectionTimeout'> & {
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  const { requestTimeoutMs, idleTimeoutMs } = limits;
  // Node refuses a header limit above the request limit; the request limit covers the headers too.
  const headersTimeoutMs =
    requestTimeoutMs > 0 && (limits.headersTimeoutMs === 0 || limits.headersTimeoutMs > requestTimeoutMs)
      ? requestTimeoutMs
      : limits.headersTimeoutMs;
  const shortest = Math.min(...[requestTimeoutMs, headersTimeoutMs].filter((ms) => ms > 0), 30_000);
  return {
    requestTimeout: requestTimeoutMs,
    connectionTimeout: idleTimeoutMs,
    http: {
      headersTimeout: headersTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(shortest / 4))),
    },
  };
}

/**
 * No response may hold its connection (and, for a listing, its database snapshot) longer than
 * `responseTimeoutMs` from the request's start: a client that reads slowly or stops reading would
 * otherwise keep a SQLite read snapshot open, and the WAL grows without bound. The connection is cut,
 * so the client sees a truncated body (the exporter reports a cut listing) rather than a false end.
 */
export function registerResponseTimeout(
  app: FastifyInstance,
  limits: Pick<ServerLimits, 'responseTimeoutMs'>,
): void {
  const ms = limits.responseTimeoutMs;
  if (ms <= 0) return;
  app.addHook('onRequest', (request, reply, done) => {
    const timer = setTimeout(() => {
      request.log.warn(
        { responseTimeoutMs: ms },
        'response cut: not sent within the response time limit (RXS_RESPONSE_TIMEOUT_MS)',
      );
      // A reset, not a close: what the kernel still buffers for the client is dropped too, so the
      // client learns at once that the response was cut.
      const socket = request.raw.socket;
      if (socket && !socket.destroyed) socket.resetAndDestroy();
      else reply.raw.destroy();
    }, ms);
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  });
}
