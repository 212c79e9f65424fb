import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, createNote } from './support/topics.js';

/** `GET /records/count`: the number of records `GET /records/` with the same filters lists. */
describe('record count', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts what the listing lists, for every filter, and never another tenant’s records', async () => {
    const revision = await approvedTopic(t, 'Counted');
    const other = await approvedTopic(t, 'Counted elsewhere');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await createNote(t, revision, `note ${i}`));
    await createNote(t, other, 'elsewhere');
    const between = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    ids.push(await createNote(t, revision, 'a later one'));
    expect((await t.api('DELETE', `/records/${ids[0]}`)).status).toBe(204);

    const filters = [
      `context__knowledge_unit_topic_id=${revision}`,
      `context__knowledge_unit_topic_id__in=${revision},${other}`,
      `id__in=${ids.slice(0, 3).join(',')}`,
      `context__knowledge_unit_topic_id=${revision}&audit_info__start_date=${encodeURIComponent(between)}`,
      `context__knowledge_unit_topic_id=${revision}&as_of=${encodeURIComponent(between)}`,
      'context__knowledge_unit_topic_id=not-a-revision',
      '',
    ];
    for (const query of filters) {
      const listed = await t.api('GET', `/records/?${query}`);
      expect(listed.status, query).toBe(200);
      const counted = await t.api('GET', `/records/count?${query}`);
      expect(counted.status, `${query}: ${counted.text}`).toBe(200);
      expect(counted.body, query).toEqual({ count: (listed.body as unknown[]).length });
    }
    // limit and after are the listing's paging, not filters: refused rather than ignored.
    expect(
      (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}&limit=1`)).status,
    ).toBe(422);
    // Another tenant counts none of them.
    const theirs = await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`, {
      key: t.demo.otherTenant.users.owner.apiKey,
    });
    expect(theirs.body).toEqual({ count: 0 });
    const bad = await t.api('GET', '/records/count?id__in=nope');
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].msg).toMatch(/not a record id/);
    expect(
      (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`, { key: null }))
        .status,
    ).toBe(401);
  });
});
