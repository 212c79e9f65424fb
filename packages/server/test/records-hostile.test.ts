import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordsService } from '../src/services/records/service.js';
import { startTestServer, testDatabase, type TestServer } from './harness.js';
import { webClient } from './web-client.js';

/** Attacks on records input and on secrets, against the real server. */
describe('records input and secrets', () => {
  let t: TestServer;
  let revision: string;
  let oldRevision: string;
  const webDir = mkdtempSync(join(tmpdir(), 'rxs-web-'));
  beforeAll(async () => {
    // A built web app with a source map next to its script, as `vite build` with sourcemap leaves it.
    mkdirSync(join(webDir, 'assets'));
    writeFileSync(join(webDir, 'index.html'), '<!doctype html><title>RXS</title>');
    writeFileSync(join(webDir, 'assets', 'app.js'), 'console.log(1);\n//# sourceMappingURL=app.js.map\n');
    writeFileSync(join(webDir, 'assets', 'app.js.map'), '{"version":3,"sources":["secret.ts"]}');
    process.env.RXS_WEB_DIR = webDir;
    t = await startTestServer({ maxRecordKeys: 50 });
    delete process.env.RXS_WEB_DIR;
    const topic = t.demo.tenant.topics.systemRequirements!;
    revision = topic.currentRevisionId;
    oldRevision = topic.oldRevisionIds[0]!;
  });
  afterAll(async () => {
    await t.close();
    rmSync(webDir, { recursive: true, force: true });
  });

  const newRecord = (revisionId: string, data: Record<string, unknown> = {}) => ({
    name: 'REQ-hostile',
    form: {},
    context: { knowledge_unit_topic_id: revisionId },
    data,
  });

  describe('keys per record (item 6)', () => {
    it('refuses data with more keys than the limit, nested ones counted, with a clear 422', async () => {
      const flat = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
      const res = await t.api('POST', '/records/', { body: newRecord(revision, flat) });
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'data'], type: 'too_many_keys' });
      expect(res.body.detail[0].msg).toMatch(/more than 50 keys.*Split the data/);

      const nested = { group: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`a${i}`, i])) };
      const list = { list: Array.from({ length: 30 }, (_, i) => ({ [`b${i}`]: i })) };
      const mixed = await t.api('POST', '/records/', { body: newRecord(revision, { ...nested, ...list }) });
      expect(mixed.status).toBe(422);
      expect(mixed.body.detail[0].type).toBe('too_many_keys');
    });

    it('accepts data at the limit, and refuses an update past it', async () => {
      const atLimit = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
      const created = await t.api('POST', '/records/', { body: newRecord(revision, atLimit) });
      expect(created.status).toBe(201);
      const update = await t.api('PATCH', `/records/${created.body._id}`, {
        body: { data: { ...atLimit, one: 'more' } },
      });
      expect(update.status).toBe(422);
      expect(update.body.detail[0].type).toBe('too_many_keys');
    });

    it('refuses a key limit that is not a whole number (RXS_MAX_RECORD_KEYS=abc), naming the variable', () => {
      const { storage, techdoc } = t.server.app.services;
      for (const maxRecordKeys of [Number('abc'), 0, 2.5]) {
        expect(() => new RecordsService(storage, techdoc, { maxRecordKeys })).toThrow(/RXS_MAX_RECORD_KEYS/);
      }
    });
  });

  describe('superseded revisions (item 10)', () => {
    it('POST /records/ under the old revision id of a re-approved topic is 409 naming the current one', async () => {
      const res = await t.api('POST', '/records/', { body: newRecord(oldRevision) });
      expect(res.status).toBe(409);
      expect(res.body.detail).toContain(revision);
      const listed = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${oldRevision}`);
      expect(listed.body).toEqual([]);
    });

    it('paging by limit/after across a re-approval is 409, not an empty last page', async () => {
      const topic = await t.api('POST', '/kt/', {
        body: {
          knowledge_topic_name: 'Paged topic',
          type: 'multi_record',
          knowledge_topic_schema: { components: [{ type: 'textfield', key: 'title', label: 'Title' }] },
        },
      });
      expect(topic.status).toBe(201);
      const first = topic.body._id as string;
      expect((await t.api('POST', `/kt/${first}/approve`)).status).toBe(200);
      for (const title of ['a', 'b', 'c']) {
        expect((await t.api('POST', '/records/', { body: newRecord(first, { title }) })).status).toBe(201);
      }
      const page1 = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${first}&limit=2`);
      expect(page1.status).toBe(200);
      expect(page1.body).toHaveLength(2);
      expect(page1.headers.get('link')).toMatch(/rel="next"/);

      const draft = await t.api('POST', `/kt/${first}/draft`);
      expect(draft.status).toBe(201);
      expect((await t.api('POST', `/kt/${draft.body._id}/approve`)).status).toBe(200);

      const after = page1.body[1]._id as string;
      const page2 = await t.api(
        'GET',
        `/records/?context__knowledge_unit_topic_id=${first}&limit=2&after=${after}`,
      );
      expect(page2.status).toBe(409);
      expect(page2.body.detail).toContain(draft.body._id);
      expect(page2.body.detail).toMatch(/re-approved/);
      // The same page by the current revision id goes on.
      const current = await t.api(
        'GET',
        `/records/?context__knowledge_unit_topic_id=${draft.body._id}&limit=2&after=${after}`,
      );
      expect(current.status).toBe(200);
      expect(current.body).toHaveLength(1);
    });
  });

  describe('keys that name Object.prototype members (item 11)', () => {
    it('web table filters and sorts by any column name without a 500', async () => {
      const created = await t.api('POST', '/records/', {
        body: newRecord(revision, { constructor: 'ctor text', toString: 'plain' }),
      });
      expect(created.status).toBe(201);
      const owner = webClient(t.url);
      const { email, password } = t.demo.tenant.users.owner;
      expect((await owner.signIn(email, password)).status).toBe(200);
      for (const name of [
        'constructor',
        'toString',
        'valueOf',
        'hasOwnProperty',
        '__proto__',
        '__defineGetter__',
      ]) {
        const filters = encodeURIComponent(JSON.stringify({ [name]: 'x' }));
        const res = await owner.request('GET', `/api/revisions/${revision}/records?filters=${filters}`);
        expect(res.status, name).toBe(200);
        const sorted = await owner.request(
          'GET',
          `/api/revisions/${revision}/records?sort=${encodeURIComponent(`field:${name}`)}`,
        );
        expect(sorted.status, name).toBe(200);
      }
      // A real column named "constructor" still filters by its own values.
      const filters = encodeURIComponent(JSON.stringify({ constructor: 'ctor' }));
      const hit = await owner.request('GET', `/api/revisions/${revision}/records?filters=${filters}`);
      expect(hit.body.rows.map((row: { id: string }) => row.id)).toEqual([created.body._id]);
      const proto = encodeURIComponent('{"__proto__":"x"}');
      const none = await owner.request('GET', `/api/revisions/${revision}/records?filters=${proto}`);
      expect(none.status).toBe(200);
      expect(none.body.total).toBe(0);
    });
  });

  describe('loose input (item 12)', () => {
    it('dates that are not ISO 8601 calendar dates are 422', async () => {
      for (const value of [
        'hello 5',
        '1',
        '2020-02-30',
        '2021-02-29',
        '2020-13-01',
        '2020-01-01T24:00',
        'May 5 2020',
      ]) {
        const res = await t.api('GET', `/records/?audit_info__start_date=${encodeURIComponent(value)}`);
        expect(res.status, value).toBe(422);
        expect(res.body.detail[0].loc).toEqual(['query', 'audit_info__start_date']);
        expect(res.body.detail[0].msg).toMatch(/ISO 8601/);
      }
    });

    it('ISO dates and date-times still filter', async () => {
      for (const value of [
        '2020-02-29',
        '2000-01-01T00:00:00Z',
        '2000-01-01T10:00:00.5+02:00',
        '2000-01-01T10:00',
      ]) {
        const res = await t.api(
          'GET',
          `/records/?audit_info__start_date=${encodeURIComponent(value)}&limit=1`,
        );
        expect(res.status, value).toBe(200);
        expect(res.body).toHaveLength(1);
      }
      const future = await t.api('GET', '/records/?audit_info__start_date=9999-12-31');
      expect(future.body).toEqual([]);
    });

    it('a body that is not valid UTF-8 is 422, and nothing is stored', async () => {
      const before = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
      const json = Buffer.from(JSON.stringify(newRecord(revision, { title: 'caf\u0000' })));
      // Replace the NUL escape's spot with a lone 0xE9 (Latin-1 é), invalid as UTF-8.
      const bytes = Buffer.from(json.toString('latin1').replace('\\u0000', '\u00e9'), 'latin1');
      const res = await fetch(`${t.url}/records/`, {
        method: 'POST',
        headers: { 'x-api-key': t.ownerKey, 'content-type': 'application/json' },
        body: bytes,
      });
      expect(res.status).toBe(422);
      const body = await res.json();
      expect(body.detail[0].msg).toMatch(/not valid UTF-8/);
      const after = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
      expect(after.body).toHaveLength(before.body.length);
    });
  });

  describe('secrets and files (item 13)', () => {
    it.skipIf(testDatabase !== 'sqlite')(
      'rxs.db and its WAL and SHM files are readable by their owner only',
      async () => {
        expect((await t.api('POST', '/records/', { body: newRecord(revision) })).status).toBe(201);
        for (const name of ['rxs.db', 'rxs.db-wal', 'rxs.db-shm']) {
          expect((statSync(join(t.dataDir, name)).mode & 0o777).toString(8), name).toBe('600');
        }
      },
    );

    it('/docs forbids framing and sniffing and loads nothing from elsewhere', async () => {
      for (const path of ['/docs/', '/docs/static/index.html']) {
        const res = await fetch(`${t.url}${path}`);
        expect(res.status, path).toBe(200);
        const csp = res.headers.get('content-security-policy') ?? '';
        expect(csp, path).toContain("frame-ancestors 'none'");
        expect(csp, path).toContain("default-src 'self'");
        expect(csp, path).not.toMatch(/https:|upgrade-insecure-requests/);
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      }
    });

    it('the web app serves its scripts but not their source maps', async () => {
      expect((await fetch(`${t.url}/assets/app.js`)).status).toBe(200);
      for (const path of ['/assets/app.js.map', '/assets/app.js.MAP', '/assets/app.js.map?x=1']) {
        expect((await fetch(`${t.url}${path}`)).status, path).toBe(404);
      }
    });
  });
});
