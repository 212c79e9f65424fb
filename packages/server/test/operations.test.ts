import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, testDatabase, type TestServer } from './harness.js';
import { startReplica } from './replicas.js';

describe('operating the service', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('publishes its OpenAPI document, generated from the validating schemas, and a browsable reference', async () => {
    const doc = await t.api('GET', '/openapi.json', { key: null });
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    for (const path of [
      '/kt/',
      '/kt/{kt_revision_id}',
      '/kt/{kt_revision_id}/approve',
      '/records/',
      '/records/{id}',
      '/traces/',
      '/traces/batch/list',
    ]) {
      expect(Object.keys(doc.body.paths)).toContain(path);
    }
    const create = doc.body.paths['/records/'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['name', 'form', 'context']),
    );
    expect(Object.keys(create.responses)).toEqual(
      expect.arrayContaining(['201', '401', '403', '404', '422']),
    );
    expect(doc.body.components.securitySchemes.apiKey).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
    const ui = await fetch(`${t.url}/docs/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/swagger/i);
  });

  it('answers health checks and tags every response with a request id (taken from the request when sane)', async () => {
    const health = await t.api('GET', '/healthz', { key: null });
    expect(health.body).toMatchObject({ status: 'ok' });
    const given = await t.api('GET', '/healthz', { key: null, headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123');
    const generated = await t.api('GET', '/healthz', {
      key: null,
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe.runIf(testDatabase === 'sqlite')('SIGTERM', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-sigterm-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('finishes the requests in flight, then exits 0', async () => {
    const replica = await startReplica(['--demo', '--data-dir', dataDir]);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    const key = demo.tenant.users.owner.apiKey;
    const revision = demo.tenant.topics.systemRequirements.currentRevisionId;
    // A request in flight: headers and half of the body sent when the signal arrives.
    const body = JSON.stringify({
      name: 'in flight',
      form: {},
      data: {},
      context: { knowledge_unit_topic_id: revision },
    });
    const { hostname, port } = new URL(replica.url);
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(
        {
          hostname,
          port,
          path: '/records/',
          method: 'POST',
          headers: {
            'x-api-key': key,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      request.on('error', reject);
      request.write(body.slice(0, 20));
      setTimeout(() => {
        exitCode = replica.stop('SIGTERM');
        setTimeout(() => request.end(body.slice(20)), 300);
      }, 200);
    });
    let exitCode: Promise<number | null> = Promise.resolve(null);
    const answer = await response;
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body).name).toBe('in flight');
    expect(await exitCode).toBe(0);
    // New connections are no longer accepted once it stopped.
    await expect(fetch(`${replica.url}/healthz`)).rejects.toThrow();
  });
});
