import { connect } from 'node:net';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
  ms: number;
}

/** One JSON request with its wall time; network failures reject (the caller decides what they mean). */
export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  options: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['x-api-key'] = options.key;
  let body = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { method, headers, body });
  const text = await response.text();
  const ms = performance.now() - started;
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text, ms };
}

export interface RawReply {
  status: number;
  head: string;
  body: string;
  /** The server closed the connection without answering. */
  closedWithoutAnswer: boolean;
}

/**
 * Sends raw bytes over a fresh TCP connection and reads the first response (for abuse that fetch
 * refuses to send: bad framing, invalid header bytes, lying Content-Length).
 */
export function rawRequest(base: string, payload: string | Buffer, timeoutMs = 5_000): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      finish();
    }, timeoutMs);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      // The first response only: bytes after its Content-Length belong to the next one.
      const length = /content-length: *(\d+)/i.exec(head)?.[1];
      const body = rest.join('\r\n\r\n');
      resolve({
        status,
        head,
        body: length === undefined ? body : body.slice(0, Number(length)),
        closedWithoutAnswer: text.length === 0,
      });
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      // One response is enough: stop once its body is complete (Content-Length) or the head says close.
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split >= 0) {
        const length = /content-length: *(\d+)/i.exec(text.slice(0, split))?.[1];
        if (length !== undefined && Buffer.byteLength(text.slice(split + 4), 'latin1') >= Number(length)) {
          socket.destroy();
          finish();
        }
      }
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code === 'ECONNRESET') finish();
      else reject(error);
    });
    socket.write(payload);
  });
}

/** JSON with object keys sorted: equal for equal values whatever order a database keeps keys in. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
