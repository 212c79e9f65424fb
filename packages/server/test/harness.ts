import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_BODY_LIMIT,
  SERVICES,
  seedDemo,
  startServer,
  type DemoInfo,
  type RunningServer,
  type ServerConfig,
} from '@rxs/server';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestServer {
  url: string;
  dataDir: string;
  server: RunningServer;
  demo: DemoInfo;
  /** The demo owner's key, the usual caller. */
  ownerKey: string;
  api<T = any>(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

/** The real server, in-process, on a real SQLite file in a fresh folder, with the demo seeded. */
export async function startTestServer(overrides: Partial<ServerConfig> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-test-'));
  const server = await startServer(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      services: [...SERVICES],
      bodyLimit: DEFAULT_BODY_LIMIT,
      logLevel: 'silent',
      ...overrides,
    },
    { logger: false },
  );
  const demo = await seedDemo(server.app.services, { dataDir, baseUrl: server.url });
  const ownerKey = demo.tenant.users.owner.apiKey;
  return {
    url: server.url,
    dataDir,
    server,
    demo,
    ownerKey,
    async api(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const key = options.key === undefined ? ownerKey : options.key;
      if (key !== null) headers['x-api-key'] = key;
      let body: string | undefined = options.rawBody;
      if (options.body !== undefined) body = JSON.stringify(options.body);
      if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
        headers['content-type'] = 'application/json';
      }
      const response = await fetch(`${server.url}${path}`, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed as never, text };
    },
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
