import type { Agent, IncomingMessage } from 'node:http';
import type { Readable, Transform } from 'node:stream';

export type FetchFunction = typeof globalThis.fetch;

/** One HTTP request as the transport sends it: redirects are never followed here. */
export interface HttpRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Aborts the request, or its answer's body while it is read. */
  signal: AbortSignal;
}

/** An answer whose headers arrived; its body is read chunk by chunk. */
export interface HttpAnswer {
  readonly status: number;
  /** A header's value (repeated ones joined by `, `), null when absent. */
  header(name: string): string | null;
  /** The body's next chunk, undefined at its end; rejects when the body breaks off. */
  read(): Promise<Uint8Array | undefined>;
  /** Stops reading: the rest of the body is discarded. */
  cancel(): void;
}

/** Sends one request and resolves when the answer's headers arrive. */
export type HttpFunction = (url: URL, request: HttpRequest) => Promise<HttpAnswer>;

/**
 * Requests by a fetch function (a caller's own, e.g. a browser's or a test's): its answer read
 * through the body's reader.
 */
export function fetchHttp(fetchFunction: FetchFunction): HttpFunction {
  return async (url, { method, headers, body, signal }) => {
    const response = await fetchFunction(url, { method, headers, body, redirect: 'manual', signal });
    const reader = response.body?.getReader();
    return {
      status: response.status,
      header: (name) => response.headers.get(name),
      read: async () => {
        if (!reader) return undefined;
        const result = await reader.read();
        return result.done ? undefined : result.value;
      },
      cancel: () => void reader?.cancel().catch(() => undefined),
    };
  };
}

/**
 * How long an idle connection is kept for the next request, as undici's default: a server that
 * announces a shorter one (`Keep-Alive: timeout=N`) has it closed a second before it would close
 * it itself, so that a request is not sent just as the server drops the connection (a write
 * would then fail without a retry). Node applies the hint only under an agent timeout.
 */
const IDLE_CONNECTION_MS = 4_000;

/** What `fetch` asks for; the node client decodes these itself. */
const ACCEPTED_ENCODINGS = 'gzip, deflate, br';

/**
 * Requests by Node's own `http`/`https` modules, the default in Node. Node 20's `fetch` loads
 * undici (about 80 ms of every command's start, the larger part of an unchanged poll), where
 * `node:http`, built into Node, loads in a few milliseconds. Connections are kept alive and reused, per
 * client; idle ones do not keep the process running (Node's agent unrefs them). Compressed
 * answers are decoded as `fetch` would.
 */
export function nodeHttp(): HttpFunction {
  const agents = new Map<string, Agent>();
  return async (url, { method, headers, body, signal }) => {
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:')
      throw new TypeError(`Only http and https URLs can be requested, not ${url.protocol}`);
    const http = secure ? await import('node:https') : await import('node:http');
    let agent = agents.get(url.protocol);
    if (!agent)
      agents.set(url.protocol, (agent = new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS })));
    const sent: Record<string, string> = { 'Accept-Encoding': ACCEPTED_ENCODINGS, ...headers };
    if (body !== undefined) sent['Content-Length'] = String(Buffer.byteLength(body));
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = http.request(url, { method, headers: sent, agent, signal }, resolve);
      request.on('error', reject);
      request.end(body);
    });
    return streamAnswer(response, await decoded(response, method));
  };
}

/** Answers that have no body, whatever their headers say (RFC 9110 §6.4.1, §15.3.6). */
const BODILESS = new Set([204, 205, 304]);

/**
 * The body as sent, or decoded when the server compressed it (codings applied in the order the
 * header lists them, so undone in reverse), as fetch does: an answer without a body is not
 * decoded, and the decoders flush what they have at the end instead of failing on an empty or
 * unterminated stream (undici's settings; a body cut by the connection still fails, by HTTP's
 * framing). A coding not asked for is handed on as it is.
 */
async function decoded(response: IncomingMessage, method: string): Promise<Readable> {
  const codings = (response.headers['content-encoding'] ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const empty =
    method === 'HEAD' || BODILESS.has(response.statusCode ?? 0) || response.headers['content-length'] === '0';
  if (codings.length === 0 || empty) return response;
  const zlib = await import('node:zlib');
  const { Z_SYNC_FLUSH, BROTLI_OPERATION_FLUSH } = zlib.constants;
  const lenient = { flush: Z_SYNC_FLUSH, finishFlush: Z_SYNC_FLUSH };
  const decoders = codings.reverse().map((coding) =>
    coding === 'gzip' || coding === 'x-gzip'
      ? zlib.createGunzip(lenient)
      : coding === 'deflate'
        ? zlib.createInflate(lenient)
        : coding === 'br'
          ? zlib.createBrotliDecompress({
              flush: BROTLI_OPERATION_FLUSH,
              finishFlush: BROTLI_OPERATION_FLUSH,
            })
          : undefined,
  );
  if (decoders.some((decoder) => decoder === undefined)) return response;
  let body: Readable = response;
  for (const decoder of decoders as Transform[]) {
    const from = body;
    // A broken body or coding ends the read with its error (the reader finds it on the stream,
    // `errored`); until someone reads, the listener keeps it from being an uncaught exception.
    from.on('error', (error) => decoder.destroy(error));
    decoder.on('error', () => undefined);
    body = from.pipe(decoder);
  }
  return body;
}

function streamAnswer(response: IncomingMessage, body: Readable): HttpAnswer {
  const chunks = body[Symbol.asyncIterator]();
  let reading = false;
  return {
    status: response.statusCode ?? 0,
    header: (name) => {
      const value = response.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
    read: async () => {
      reading = true;
      const next = await chunks.next();
      return next.done ? undefined : (next.value as Uint8Array);
    },
    cancel: () => {
      // An answer that came whole and was not read (a 304's, a redirect's) leaves its connection
      // for the next request; one cut short closes it.
      if (response.complete && !reading && body === response) response.resume();
      else {
        body.destroy();
        response.destroy();
      }
    },
  };
}
