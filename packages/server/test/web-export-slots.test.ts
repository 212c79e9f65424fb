import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExportSlots, IMPORT_SLOTS } from '../src/http/export-slots.js';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

const RECORDS = 30_000;

/**
 * Web app exports at once: each writes a whole file before it answers, so a server takes a few at a
 * time (RXS_WEB_EXPORTS) and a user two; beyond, 429 with Retry-After, and the next one runs once
 * a slot is free.
 */
describe('web app exports at once', () => {
  let t: TestServer;
  let owner: WebClient;
  let viewer: WebClient;
  let revision: string;
  const download = (client: WebClient, format = 'csv') =>
    fetch(`${t.url}/api/export?revisions=${revision}&format=${format}`, {
      headers: { cookie: client.cookie! },
    });

  beforeAll(async () => {
    process.env.RXS_WEB_EXPORTS = '1';
    t = await startTestServer();
    delete process.env.RXS_WEB_EXPORTS;
    const { users } = t.demo.tenant;
    owner = webClient(t.url);
    viewer = webClient(t.url);
    expect((await owner.signIn(users.owner.email, users.owner.password)).status).toBe(200);
    expect((await viewer.signIn(users.viewer.email, users.viewer.password)).status).toBe(200);
    // A topic large enough that its export takes a while: records inserted directly.
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Many',
        type: 'multi_record',
        knowledge_topic_schema: { components: [{ type: 'textarea', key: 'text', label: 'Text' }] },
      },
    });
    revision = (await t.api('POST', `/kt/${draft.body._id}/approve`)).body._id;
    const now = new Date().toISOString();
    for (let start = 0; start < RECORDS; start += 1000) {
      const rows = Array.from({ length: 1000 }, (_, i) => ({
        id: (0x6c0000000000 + start + i).toString(16).padStart(24, '0'),
        tenant_id: t.demo.tenant.id,
        kt_revision_id: revision,
        name: `R-${start + i}`,
        form: '{}',
        version: '1.0',
        data: JSON.stringify({ text: `Requirement ${start + i}: ${'text, '.repeat(60)}` }),
        read_only: 0,
        context: '{}',
        created_by: 'bulk',
        created_at: now,
        updated_by: null,
        updated_at: null,
        last_action: 'created',
      }));
      await t.server.storage.db.insertInto('records').values(rows).execute();
    }
  }, 120_000);
  // Closed right after a long export: the server closes each keep-alive connection as soon as it is
  // idle (server.ts), so this close does not wait for the idle timeout (120 s).
  afterAll(() => t?.close(), 10_000);

  it('a second export while the server writes one is 429 with Retry-After; once done, it runs', async () => {
    const first = download(owner);
    // The first one holds the slot while it writes its 30 000 records.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = await download(viewer, 'json');
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('5');
    expect((await second.json()).detail).toMatch(/the most at once \(RXS_WEB_EXPORTS\)\. Try again/);
    const done = await first;
    expect(done.status).toBe(200);
    expect((await done.text()).split('\r\n').length).toBeGreaterThan(RECORDS);
    // The slot is free again, also after a failed export (a 404 revision takes none).
    const bad = await fetch(`${t.url}/api/export?revisions=${'f'.repeat(24)}&format=csv`, {
      headers: { cookie: viewer.cookie! },
    });
    expect(bad.status).toBe(404);
    await bad.text();
    const again = await download(viewer, 'json');
    expect(again.status).toBe(200);
    await again.arrayBuffer();
  }, 120_000);

  it('the traceability page takes the same slots: a report while an export runs is 429, and the other way round', async () => {
    const report = (client: WebClient) =>
      fetch(`${t.url}/api/traceability?revisions=${revision}`, { headers: { cookie: client.cookie! } });
    const first = download(owner);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const refused = await report(viewer);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await first).status).toBe(200);
    await (await first).arrayBuffer();

    // A report of the 30 000 records holds the slot while it reads them, and the server answers
    // others meanwhile (the in-process listing gives the event loop back as it goes).
    const running = report(owner);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const health = Date.now();
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    const healthMs = Date.now() - health;
    const export2 = await download(viewer);
    expect(export2.status).toBe(429);
    await export2.arrayBuffer();
    const answered = await running;
    expect(answered.status).toBe(200);
    expect((await answered.json()).report).toBeDefined();
    expect(healthMs).toBeLessThan(500);
    // Given back: the next report and export run.
    const next = await report(viewer);
    expect(next.status).toBe(200);
    await next.arrayBuffer();
  }, 120_000);

  it('counts per user and per server, and gives every slot back once', () => {
    const slots = new ExportSlots(3, 2);
    const a1 = slots.take('a');
    const a2 = slots.take('a');
    expect(() => slots.take('a')).toThrow(/You have 2 expensive reads .* running already/);
    const b1 = slots.take('b');
    expect(() => slots.take('c')).toThrow(/running 3 expensive reads .* already/);
    a1();
    a1(); // twice is once
    const c1 = slots.take('c');
    expect(() => slots.take('d')).toThrow(/running 3 expensive reads .* already/);
    for (const release of [a2, b1, c1]) release();
    expect(() => ExportSlots.fromEnv({ RXS_WEB_EXPORTS: 'many' })).toThrow(
      /RXS_WEB_EXPORTS must be a whole number/,
    );
    expect(() => ExportSlots.fromEnv({ RXS_WEB_EXPORTS: '0' })).toThrow(/≥ 1/);
    expect(ExportSlots.fromEnv({ RXS_WEB_EXPORTS: '7' }).atOnce).toBe(7);
    expect(new ExportSlots(1).perUser).toBe(1);
    for (let i = 0; i < 3; i++) slots.take(`u${i}`);
  });

  it('counts web imports on their own: two per server, one per user (RXS_WEB_IMPORTS)', () => {
    const imports = ExportSlots.fromEnv({}, IMPORT_SLOTS);
    expect([imports.atOnce, imports.perUser]).toEqual([2, 1]);
    imports.take('a');
    expect(() => imports.take('a')).toThrow(
      'You have 1 imports or checks running already, the most at once. Wait for one to finish, then send the file again.',
    );
    imports.take('b');
    expect(() => imports.take('c')).toThrow(
      /running 2 imports or checks already, the most at once \(RXS_WEB_IMPORTS\)/,
    );
    expect(ExportSlots.fromEnv({ RXS_WEB_IMPORTS: '5' }, IMPORT_SLOTS).atOnce).toBe(5);
    expect(() => ExportSlots.fromEnv({ RXS_WEB_IMPORTS: 'x' }, IMPORT_SLOTS)).toThrow(
      /RXS_WEB_IMPORTS must be/,
    );
  });
});
