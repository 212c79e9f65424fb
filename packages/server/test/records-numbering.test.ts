import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, createNote, reapprove } from './support/topics.js';

/** `auto_number`: numbers unique and increasing per topic and prefix, also under concurrent creates. */
describe('auto-numbering', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });
  const numbered = async (revision: string, prefix: string) => {
    const res = await t.api('POST', '/records/', {
      body: {
        name: prefix,
        form: {},
        data: {},
        auto_number: true,
        context: { knowledge_unit_topic_id: revision },
      },
    });
    expect(res.status, res.text).toBe(201);
    return res.body as { _id: string; name: string };
  };

  it('a deleted number is never given again, and a new prefix starts at 1 whatever the topic holds', async () => {
    const revision = await approvedTopic(t, 'Numbered');
    for (let i = 0; i < 5; i++) await createNote(t, revision, `plain ${i}`);
    const names = [];
    for (let i = 0; i < 3; i++) names.push((await numbered(revision, 'REQ')).name);
    expect(names).toEqual(['REQ-1', 'REQ-2', 'REQ-3']);
    const second = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body.find(
      (r: { name: string }) => r.name === 'REQ-2',
    );
    expect((await t.api('DELETE', `/records/${second._id}`)).status).toBe(204);
    expect((await numbered(revision, 'REQ')).name).toBe('REQ-4');
    expect((await numbered(revision, 'SRS')).name).toBe('SRS-1');
    // Numbers go on across a re-approval (the topic, not the revision, counts).
    const next = await reapprove(t, revision);
    expect((await numbered(next, 'REQ')).name).toBe('REQ-5');
  });

  it('follows the highest number already in use when a prefix is first numbered', async () => {
    const revision = await approvedTopic(t, 'Numbered before');
    await createNote(t, revision, 'Legacy-7');
    await createNote(t, revision, 'Legacy-notanumber');
    expect((await numbered(revision, 'Legacy')).name).toBe('Legacy-8');
    // Prefixes with LIKE's wildcards are taken literally.
    await createNote(t, revision, 'A_B-3');
    expect((await numbered(revision, 'A%B')).name).toBe('A%B-1');
  });

  it('concurrent creates all get distinct, consecutive numbers', async () => {
    const revision = await approvedTopic(t, 'Numbered at once');
    const created = await Promise.all(Array.from({ length: 16 }, () => numbered(revision, 'TST')));
    const numbers = created.map((r) => Number(r.name.slice(4))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  });
});
