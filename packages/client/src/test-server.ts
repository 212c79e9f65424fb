import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The two ways the client sends requests, for tests that run over each: Node's own http (the
 * default) and a fetch function (a caller's).
 */
export const HTTP_CLIENTS = [
  { name: 'node:http', fetch: undefined },
  { name: 'fetch', fetch: globalThis.fetch },
] as const;

/** What a test server saw of one request. */
export interface SeenRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type TestHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  context: { body: string; index: number },
) => void | Promise<void>;

export interface TestServer {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string;
  requests: SeenRequest[];
  server: Server;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 and a free port, for the client's tests. The handler gets the
 * request's body and its index (0 for the first request this server received).
 */
export async function startTestServer(handler: TestHandler): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      const index = requests.length;
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      Promise.resolve(handler(request, response, { body, index })).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The servers of one test file: `serve` starts one, `closeAll` (in afterEach) stops them all. */
export class TestServers {
  private readonly running: TestServer[] = [];

  async serve(handler: TestHandler): Promise<TestServer> {
    const server = await startTestServer(handler);
    this.running.push(server);
    return server;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.running.splice(0).map((server) => server.close()));
  }
}

/** Sends a JSON answer. */
export function sendJson(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(value);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

/** Writes and waits while the socket is full, so a generating server runs only as fast as the client reads. */
export async function write(response: ServerResponse, text: string): Promise<void> {
  if (!response.write(text)) {
    await new Promise<void>((resolve, reject) => {
      const onDrain = () => {
        response.off('close', onClose);
        resolve();
      };
      const onClose = () => {
        response.off('drain', onDrain);
        reject(new Error('closed'));
      };
      response.once('drain', onDrain);
      response.once('close', onClose);
    });
  }
}

/** Record-shaped test data. */
export function testRecord(index: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    _id: index.toString(16).padStart(24, '0'),
    name: `Record ${index}`,
    data: { n: index },
    ...extra,
  };
}

/** The three layouts of one array: ours (one element per line), one line, pretty-printed. */
export const layouts = {
  lines: (items: unknown[]) =>
    items.length === 0 ? '[\n]\n' : `[\n${items.map((item) => JSON.stringify(item)).join(',\n')}\n]\n`,
  oneLine: (items: unknown[]) => JSON.stringify(items),
  pretty: (items: unknown[]) => JSON.stringify(items, null, 2),
};

/** Records whose strings look like JSON structure, line breaks and brackets. */
export const trickyRecords = [
  testRecord(1, { name: 'has },{ inside', data: { s: '},{"x":1},{', t: '"},\n{' } }),
  testRecord(2, {
    name: 'line\nbreak, \r\n and a literal \\n',
    data: { open: '[', close: ']', both: '[\n]' },
  }),
  testRecord(3, {
    name: 'unicode ✓ 日本語 🚀 \u2028\u2029 é',
    data: { emoji: '😀', nested: { a: [1, [2, [3]]], ']': '[' } },
  }),
  testRecord(4, {
    name: 'quote " backslash \\ tab \t',
    data: { 'key ,\n]': null, num: -1.5e10, yes: false },
  }),
  testRecord(5, { name: '', data: {} }),
  testRecord(6, { name: '],\n[', data: { list: [] } }),
];
