import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, loggerOptions } from '../src/app.js';
import { DEFAULT_BODY_LIMIT, SERVICES } from '../src/config.js';
import type { Storage } from '../src/storage/database.js';
import { openStorage } from '../src/storage/open.js';

const SECRET = 'rxs_SECRETkey0123456789';

/** The server with its production logger (as `rxs serve` builds it), its log lines collected. */
describe('secrets never reach the logs (issue 12, item 13)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-logs-'));
  const lines: string[] = [];
  let storage: Storage;
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    storage = await openStorage({ url: join(dataDir, 'rxs.db') });
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    app = await buildApp({
      config: { bodyLimit: DEFAULT_BODY_LIMIT, services: [...SERVICES], logLevel: 'info' },
      storage,
      logger: { ...loggerOptions('info'), stream },
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app.close();
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('redacts a key sent as ?api_key=, X-API-Key, Authorization and cookies', async () => {
    await fetch(`${url}/records/?api_key=${SECRET}&limit=1`);
    await fetch(`${url}/records/?limit=1&token=${SECRET}`);
    await fetch(`${url}/no-such-path?api_key=${SECRET}`, { headers: { accept: 'application/json' } });
    await fetch(`${url}/records/`, {
      headers: { 'x-api-key': SECRET, authorization: `Bearer ${SECRET}`, cookie: `rxs_session=${SECRET}` },
    });
    const log = lines.join('');
    expect(log).toContain('/records/?api_key=[Redacted]&limit=1');
    expect(log).toContain('/records/?limit=1&token=[Redacted]');
    expect(log).not.toContain(SECRET);
  });
});
