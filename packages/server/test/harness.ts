import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import pg from 'pg';
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

/** Which database the suite runs on: SQLite files by default, PostgreSQL when RXS_TEST_DATABASE=postgres. */
export const testDatabase = process.env.RXS_TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';

/**
 * A fresh PostgreSQL database on the test cluster (RXS_TEST_POSTGRES_URL, see
 * scripts/pg-test-cluster.sh), and a function that drops it again.
 */
export async function createTestPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = process.env.RXS_TEST_POSTGRES_URL;
  if (!admin) {
    throw new Error(
      'RXS_TEST_DATABASE=postgres needs RXS_TEST_POSTGRES_URL: run eval "$(scripts/pg-test-cluster.sh)" first.',
    );
  }
  const name = `rxs_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: admin });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

/** A multi-record topic whose form has one text field (`text`), created through the API: its revision id. */
export async function createTextTopic(t: Pick<TestServer, 'api'>, name: string): Promise<string> {
  const created = await t.api('POST', '/kt/', {
    body: {
      knowledge_topic_name: name,
      type: 'multi_record',
      knowledge_topic_schema: { components: [{ type: 'textfield', key: 'text', label: 'Text' }] },
    },
  });
  if (created.status !== 201) throw new Error(`POST /kt/ answered ${created.status}: ${created.text}`);
  return (created.body as { _id: string })._id;
}

/** The real server, in-process, on a real database (a SQLite file in a fresh folder, or PostgreSQL), with the demo seeded. */
export async function startTestServer(overrides: Partial<ServerConfig> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-test-'));
  const postgres =
    testDatabase === 'postgres' && !overrides.databaseUrl ? await createTestPostgresDatabase() : undefined;
  const server = await startServer(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      services: [...SERVICES],
      bodyLimit: DEFAULT_BODY_LIMIT,
      logLevel: 'silent',
      databaseUrl: postgres?.url,
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
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
