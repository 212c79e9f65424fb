import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from './client.js';
import { NetworkError, ResponseFormatError, RxsApiError } from './errors.js';
import { HTTP_CLIENTS, layouts, testRecord, trickyRecords, TestServers } from './test-server.js';

const API_KEY = 'rxs_http_test_key_0123456789';
const servers = new TestServers();
const rawServers: Server[] = [];
afterEach(async () => {
  await servers.closeAll();
  await Promise.all(rawServers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const revisionId = '69b989b54252b7481003b10a';
const topic = { _id: revisionId, knowledge_topic_schema: { components: [] } };

function clientAt(url: string, fetch: typeof globalThis.fetch | undefined, timeoutMs = 2000) {
  return createClient({
    techdocUrl: url,
    recordsUrl: url,
    tracerUrl: url,
    apiKey: API_KEY,
    retries: 0,
    timeoutMs,
    fetch,
  });
}

const encoders: Record<string, (bytes: Buffer) => Buffer> = {
  gzip: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
};

/** A TCP server that answers every connection with `bytes` (not necessarily HTTP) and closes. */
async function rawServer(answer: (socket: import('node:net').Socket) => void): Promise<string> {
  const server = createServer((socket) => {
    socket.once('data', () => answer(socket));
    socket.on('error', () => undefined);
  });
  rawServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe.each(HTTP_CLIENTS)('HTTP over $name', ({ fetch }) => {
  it('decodes answers compressed with gzip, deflate or br, whole or streamed', async () => {
    const records = [...trickyRecords, ...Array.from({ length: 3000 }, (_, i) => testRecord(i + 10))];
    for (const [encoding, encode] of Object.entries(encoders)) {
      const asked: string[] = [];
      const server = await servers.serve((request, response) => {
        asked.push(String(request.headers['accept-encoding']));
        const text = request.url!.startsWith('/kt/') ? JSON.stringify(topic) : layouts.lines(records);
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
        response.end(encode(Buffer.from(text)));
      });
      const client = clientAt(server.url, fetch);
      expect(await client.techdoc.getTopic(revisionId)).toEqual(topic);
      expect(await client.records.listAllRecords()).toEqual(records);
      // Node's http asks for each encoding itself, as fetch does for those it decodes.
      if (!fetch) expect(asked.every((header) => header.includes(encoding))).toBe(true);
    }
  });

  it('a compressed body that is corrupt fails the call with what broke, instead of hanging', async () => {
    const server = await servers.serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      response.end(
        Buffer.concat([gzipSync(Buffer.from('[\n{"_id":"1"},\n')).subarray(0, 20), Buffer.alloc(50, 7)]),
      );
    });
    const error = await clientAt(server.url, fetch)
      .records.listAllRecords()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RxsApiError);
    expect((error as Error).message).toContain(server.url);
  });

  it('decodes several codings in turn; answers without a body (204, 304, an empty chunked one) need no decoding', async () => {
    const server = await servers.serve((request, response) => {
      if (request.method === 'DELETE') {
        response.writeHead(204, { 'content-encoding': 'gzip' });
        response.end();
      } else if (request.headers['if-none-match'] === '"t1"') {
        response.writeHead(304, { etag: '"t1"', 'content-encoding': 'gzip' });
        response.end();
      } else {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip, br' });
        response.end(brotliCompressSync(gzipSync(Buffer.from(JSON.stringify(topic)))));
      }
    });
    const client = clientAt(server.url, fetch);
    expect(await client.techdoc.getTopic(revisionId)).toEqual(topic);
    await client.records.deleteRecord(revisionId);
    expect(await client.conditional.topic(revisionId, '"t1"')).toEqual({ unchanged: true, etag: '"t1"' });
    // An empty body of a 200, chunked, marked gzip (no Content-Length to tell it is empty).
    const chunked = await servers.serve((_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip', 'transfer-encoding': 'chunked' });
      response.end();
    });
    await clientAt(chunked.url, fetch).records.deleteRecord(revisionId);
  });

  // A compressed listing whose reading stops before it starts (here its Link header cannot be
  // followed): the error is the call's, and nothing else happens (vitest fails a test file on an
  // uncaught exception; the process would die).
  it('a compressed answer dropped before it is read, or broken before the first read, fails only the call', async () => {
    const records = Array.from({ length: 20_000 }, (_, i) => testRecord(i));
    const body = gzipSync(Buffer.from(layouts.lines(records)));
    const server = await servers.serve((request, response) => {
      if (request.url!.startsWith('/kt/')) {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        response.end(
          Buffer.concat([gzipSync(Buffer.from(JSON.stringify(topic))).subarray(0, 12), Buffer.alloc(40, 7)]),
        );
        return;
      }
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        link: '<https://elsewhere.example/records/?after=x>; rel="next"',
      });
      response.end(body);
    });
    const client = clientAt(server.url, fetch);
    const pages = async () => {
      for await (const page of client.records.listRecordBatches({}, { pageSize: 1000 })) void page;
    };
    await expect(pages()).rejects.toThrow(/Link header/);
    await expect(client.techdoc.getTopic(revisionId)).rejects.toBeInstanceOf(RxsApiError);
    await new Promise((resolve) => setTimeout(resolve, 200)); // where the uncaught error came
  });

  it('keeps one connection alive across calls, also after a 304 and an error status', async () => {
    const server = await servers.serve((request, response) => {
      if (request.headers['if-none-match'] === '"t1"') {
        response.writeHead(304, { etag: '"t1"' });
        response.end();
      } else if (request.url!.includes('missing')) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ detail: 'no such topic' }));
      } else {
        response.writeHead(200, { 'content-type': 'application/json', etag: '"t1"' });
        response.end(JSON.stringify(request.url!.startsWith('/kt/') ? topic : [testRecord(1)]));
      }
    });
    let connections = 0;
    server.server.on('connection', () => connections++);
    const client = clientAt(server.url, fetch);
    for (let i = 0; i < 3; i++) {
      expect(await client.techdoc.getTopic(revisionId)).toEqual(topic);
      expect(await client.conditional.topic(revisionId, '"t1"')).toEqual({ unchanged: true, etag: '"t1"' });
      expect(await client.conditional.records(revisionId)).toEqual({ unchanged: false, etag: '"t1"' });
      await expect(client.techdoc.getTopic('missing')).rejects.toThrow(/no such topic/);
    }
    expect(server.requests).toHaveLength(12);
    // Undici may open a second connection while the first is being released after its answer.
    expect(connections).toBeLessThanOrEqual(fetch ? 2 : 1);
  });

  it('a server that does not speak HTTP, or sends endless headers, fails the call at once', async () => {
    const notHttp = await rawServer((socket) => socket.end('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
    const endless = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-padding: ');
      const more = () => {
        if (socket.destroyed) return;
        if (socket.write('a'.repeat(64 * 1024))) setImmediate(more);
        else socket.once('drain', more);
      };
      more();
    });
    const started = Date.now();
    for (const url of [notHttp, endless]) {
      const error = await clientAt(url, fetch, 20_000)
        .techdoc.getTopic(revisionId)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NetworkError);
      expect((error as Error).message).toContain(`at ${url}`);
    }
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a body cut short by the server is reported as cut, with the address', async () => {
    const server = await servers.serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write(JSON.stringify(topic).slice(0, 30));
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const error = await clientAt(server.url, fetch)
      .techdoc.getTopic(revisionId)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RxsApiError);
    expect(error instanceof NetworkError || error instanceof ResponseFormatError).toBe(true);
    expect((error as Error).message).toContain(server.url);
  });
});

describe("Node's http", () => {
  it('closes an idle connection before the server would, by the timeout the server announces', async () => {
    const server = await servers.serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(topic));
    });
    // Node's server announces `Keep-Alive: timeout=3` and closes idle connections after 3 s.
    server.server.keepAliveTimeout = 3_000;
    const closed: number[] = [];
    server.server.on('connection', (socket) => socket.on('close', () => closed.push(Date.now())));
    const client = clientAt(server.url, undefined);
    const answered = Date.now();
    expect(await client.techdoc.getTopic(revisionId)).toEqual(topic);
    await new Promise((resolve) => setTimeout(resolve, 2_600));
    // The client dropped it a second before the announced 3 s: a request now opens a new one.
    expect(closed).toHaveLength(1);
    expect(closed[0]! - answered).toBeLessThan(2_600);
    expect(await client.techdoc.getTopic(revisionId)).toEqual(topic);
  });

  // The CLI ends when its work is done: an idle kept-alive connection must not hold the process
  // until the server drops it (here a minute).
  it('an idle kept-alive connection does not keep the process running', async () => {
    const built = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    if (!existsSync(built))
      throw new Error('Build the packages first (npm run build): this test runs its output.');
    const server = await servers.serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive' });
      response.end(JSON.stringify(topic));
    });
    server.server.keepAliveTimeout = 60_000;
    const script = `
      const { createClient } = await import(${JSON.stringify(built)});
      const url = ${JSON.stringify(server.url)};
      const client = createClient({ techdocUrl: url, recordsUrl: url, tracerUrl: url, apiKey: 'k' });
      const got = await client.techdoc.getTopic(${JSON.stringify(revisionId)});
      process.stdout.write(got._id);`;
    const started = Date.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toBe(revisionId);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
