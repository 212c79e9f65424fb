import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

describe('GET /records/ (the export listing)', () => {
  let t: TestServer;
  let current: string;
  let old: string;
  beforeAll(async () => {
    t = await startTestServer();
    current = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    old = t.demo.tenant.topics.systemRequirements!.oldRevisionIds[0]!;
  });
  afterAll(() => t.close());

  it('rule 1: filtered by revision id it returns that revision’s records as a plain JSON array, ordered by _id', async () => {
    const res = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${current}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Array.isArray(res.body)).toBe(true);
    const ids = res.body.map((r: any) => r._id);
    expect(ids).toEqual(t.demo.tenant.topics.systemRequirements!.recordIds);
    expect([...ids].sort()).toEqual(ids);
    for (const record of res.body) {
      expect(record).toMatchObject({
        _id: expect.any(String),
        name: expect.any(String),
        data: expect.any(Object),
      });
      expect(record.context.knowledge_unit_topic_id).toBe(current);
      expect(record.metadata.tenant_id).toBe(t.demo.tenant.id);
    }
    // The sample record's data arrives untouched, under its opaque form keys.
    expect(res.body[0].data.checklist_kgd0ri).toEqual(['Equipment']);
  });

  it('writes one record per line, still a plain JSON array', async () => {
    const res = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${current}`);
    const lines = res.text.trimEnd().split('\n');
    expect(lines[0]).toBe('[');
    expect(lines.at(-1)).toBe(']');
    const middle = lines.slice(1, -1);
    expect(middle).toHaveLength(res.body.length);
    middle.forEach((line, i) => expect(JSON.parse(line.replace(/,$/, ''))).toEqual(res.body[i]));
  });

  it('rule 2: a wrong revision id is 200 [] (a history id, an old revision after re-approval, junk)', async () => {
    for (const id of [
      t.demo.tenant.topics.systemRequirements!.historyId,
      old,
      'not-an-id',
      '0123456789abcdef01234567',
    ]) {
      const res = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${encodeURIComponent(id)}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    }
  });

  it('filters by several revisions and by record ids', async () => {
    const tests = t.demo.tenant.topics.verificationTests!;
    const both = await t.api(
      'GET',
      `/records/?context__knowledge_unit_topic_id__in=${current},${tests.currentRevisionId}`,
    );
    expect(both.body).toHaveLength(
      t.demo.tenant.topics.systemRequirements!.recordIds.length + tests.recordIds.length,
    );
    const picked = [tests.recordIds[1]!, t.demo.tenant.topics.systemRequirements!.recordIds[0]!];
    const byId = await t.api('GET', `/records/?id__in=${picked.join(',')}`);
    expect(byId.body.map((r: any) => r._id).sort()).toEqual([...picked].sort());
    const badId = await t.api('GET', '/records/?id__in=abc');
    expect(badId.status).toBe(422);
    expect(badId.body.detail[0].loc).toEqual(['query', 'id__in']);
  });

  it('filters by creation date, and with include_updated by update date too', async () => {
    const all = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${current}`);
    // The sample records were created on 2026-08-10.
    const day = await t.api(
      'GET',
      `/records/?context__knowledge_unit_topic_id=${current}&audit_info__start_date=2026-08-10&audit_info__end_date=2026-08-10`,
    );
    expect(day.body).toHaveLength(all.body.length);
    const later = await t.api(
      'GET',
      `/records/?context__knowledge_unit_topic_id=${current}&audit_info__start_date=2026-08-11`,
    );
    expect(later.body).toEqual([]);
    const target = all.body[0];
    const edited = await t.api('PATCH', `/records/${target._id}`, {
      body: { name: `${target.name} (edited)` },
    });
    expect(edited.status).toBe(200);
    const since = new Date(Date.now() - 60_000).toISOString();
    const updated = await t.api(
      'GET',
      `/records/?context__knowledge_unit_topic_id=${current}&audit_info__start_date=${since}&audit_info__include_updated=true`,
    );
    expect(updated.body.map((r: any) => r._id)).toEqual([target._id]);
    const bad = await t.api('GET', '/records/?audit_info__start_date=yesterday');
    expect(bad.status).toBe(422);
  });

  it('optional limit/after pagination keeps the plain array and links the next page', async () => {
    const all = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${current}`)).body.map(
      (r: any) => r._id,
    );
    const seen: string[] = [];
    let path: string | undefined = `/records/?context__knowledge_unit_topic_id=${current}&limit=3`;
    let pages = 0;
    while (path) {
      const res = await t.api('GET', path);
      expect(Array.isArray(res.body)).toBe(true);
      seen.push(...res.body.map((r: any) => r._id));
      const link = res.headers.get('link');
      path = link ? `/records/${/<([^>]+)>; rel="next"/.exec(link)![1]}` : undefined;
      pages++;
    }
    expect(seen).toEqual(all);
    expect(pages).toBeGreaterThan(1);
  });

  it('streams a large listing without holding it: many records arrive complete and in order', async () => {
    const { records } = t.server.app.services;
    const principal = { tenantId: t.demo.tenant.id, userId: 'bulk', role: 'owner' as const };
    const created = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Bulk',
        type: 'multi_record',
        knowledge_topic_schema: { components: [{ type: 'textfield', key: 'text', label: 'Text' }] },
      },
    });
    for (let i = 0; i < 3000; i++) {
      await records.create(principal, {
        name: `bulk-${i}`,
        form: {},
        data: { text: `line ${i} with "quotes", commas and a newline\n` },
        context: { knowledge_unit_topic_id: created.body._id },
      });
    }
    const res = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${created.body._id}`);
    expect(res.body).toHaveLength(3000);
    expect(res.body[2999].data.text).toBe('line 2999 with "quotes", commas and a newline\n');
    expect(res.text.split('\n')).toHaveLength(3000 + 3);
  });
});
