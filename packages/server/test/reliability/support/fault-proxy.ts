import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';

/**
 * A fault-injecting HTTP proxy for the exporter: between `rxs export` and the service it resets
 * connections, stalls, answers 500/502/503/429, cuts bodies (with and without honest framing) and
 * corrupts JSON, request by request, as a plan decides.
 */
export const FAULTS = [
  'reset', // the connection is reset before any answer
  'stall', // no answer at all, until the client gives up
  '500',
  '502',
  '503',
  '429',
  'reset-mid-body', // half the body, then a reset
  'stall-mid-body', // half the body, then silence
  'truncate', // Content-Length promises more than is sent, then the connection closes
  'cut-clean', // a well-framed answer whose JSON ends early (after a complete line)
  'corrupt', // well framed, but the JSON is broken in the middle
] as const;
export type Fault = (typeof FAULTS)[number] | 'none';

/** Faults a client may retry its way through; `corrupt` bodies are errors, not hiccups. */
export const TRANSIENT_FAULTS: Fault[] = FAULTS.filter((f) => f !== 'corrupt');

export interface ProxyRequest {
  /** 0-based count of requests this proxy has seen. */
  index: number;
  method: string;
  url: string;
  /** The request body (a trace batch names its nodes there). */
  body: string;
}

export class FaultProxy {
  private server: Server;
  private sockets = new Set<Socket>();
  private count = 0;
  readonly seen: { method: string; url: string; fault: Fault; status?: number }[] = [];
  plan: (request: ProxyRequest) => Fault = () => 'none';
  url = '';

  constructor(private readonly upstream: string) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`proxy: ${String(error)}`);
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** How often each fault was injected since the last reset. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const s of this.seen) counts[s.fault] = (counts[s.fault] ?? 0) + 1;
    return counts;
  }

  reset(plan: (request: ProxyRequest) => Fault): void {
    this.plan = plan;
    this.count = 0;
    this.seen.length = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const fault = this.plan({
      index: this.count++,
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      body: body.toString('utf8'),
    });
    const entry: (typeof this.seen)[number] = { method: req.method ?? 'GET', url: req.url ?? '/', fault };
    this.seen.push(entry);
    const socket = req.socket;
    const hold = () => setTimeout(() => socket.destroy(), 20_000).unref();

    switch (fault) {
      case 'reset':
        socket.resetAndDestroy();
        return;
      case 'stall':
        hold();
        return;
      case '500':
      case '502':
      case '503':
      case '429': {
        const status = Number(fault);
        const text =
          status === 502
            ? '<html><body><h1>502 Bad Gateway</h1></body></html>'
            : JSON.stringify({ detail: `injected ${status}` });
        res.writeHead(status, {
          'content-type': status === 502 ? 'text/html' : 'application/json',
          'content-length': Buffer.byteLength(text),
          ...(status === 429 || status === 503 ? { 'retry-after': '1' } : {}),
        });
        res.end(text);
        entry.status = status;
        return;
      }
    }

    const upstream = await this.forward(req, body);
    entry.status = upstream.status;
    const headers = { ...upstream.headers };
    delete headers['transfer-encoding'];
    delete headers['content-length'];
    delete headers.connection;
    delete headers['keep-alive'];
    const full = upstream.body;
    const half = full.subarray(0, Math.floor(full.length / 2));
    switch (fault) {
      case 'none':
        res.writeHead(upstream.status, { ...headers, 'content-length': full.length });
        res.end(full);
        return;
      case 'reset-mid-body':
        res.writeHead(upstream.status, { ...headers, 'content-length': full.length });
        res.write(half, () => setTimeout(() => socket.resetAndDestroy(), 10));
        return;
      case 'stall-mid-body':
        res.writeHead(upstream.status, { ...headers, 'content-length': full.length });
        res.write(half);
        hold();
        return;
      case 'truncate':
        res.writeHead(upstream.status, { ...headers, 'content-length': full.length });
        res.write(half, () => setTimeout(() => socket.end(), 10));
        return;
      case 'cut-clean': {
        // End after a complete line when there is one (a listing missing its last records and
        // its closing bracket), else in the middle: honest framing, dishonest content.
        const text = full.toString('utf8');
        const line = text.lastIndexOf('\n', Math.floor(text.length / 2));
        const cut = Buffer.from(
          line > 0 ? text.slice(0, line + 1) : text.slice(0, Math.floor(text.length / 2)),
        );
        res.writeHead(upstream.status, { ...headers, 'content-length': cut.length });
        res.end(cut);
        return;
      }
      case 'corrupt': {
        const broken = Buffer.concat([half, Buffer.from('#\u0001 not json')]);
        res.writeHead(upstream.status, { ...headers, 'content-length': broken.length });
        res.end(broken);
        return;
      }
    }
  }

  private forward(req: IncomingMessage, body: Buffer) {
    const target = new URL(req.url ?? '/', this.upstream);
    const headers = { ...req.headers, host: target.host };
    delete headers.connection;
    return new Promise<{ status: number; headers: Record<string, any>; body: Buffer }>((resolve, reject) => {
      const upstream = httpRequest(target, { method: req.method, headers, agent: false }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (chunk: Buffer) => parts.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 502,
            headers: response.headers,
            body: Buffer.concat(parts),
          }),
        );
        response.on('error', reject);
      });
      upstream.on('error', reject);
      upstream.end(body);
    });
  }
}
