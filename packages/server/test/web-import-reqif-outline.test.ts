import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { readSpecHierarchies } from '../../exchange/src/import/reqif-hierarchy.js';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';
import { webClient, type WebClient } from './web-client.js';

const STRICTDOC = new URL('../../exchange/test/fixtures/reqif/strictdoc.reqif', import.meta.url);

interface Listed {
  _id: string;
  context: { global_element_id?: string | null };
}

/** The web app's import of a ReqIF file sets the topic's document outline from its SPEC-HIERARCHY, as `rxs import` does. */
describe('web app import: a ReqIF file’s hierarchy as the topic’s outline', () => {
  let t: TestServer;
  let editor: WebClient;

  const upload = async (step: 'check' | 'import', query: Record<string, string>) => {
    const response = await fetch(
      `${t.url}/api/import${step === 'check' ? '/check' : ''}?${new URLSearchParams(query)}`,
      {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/octet-stream',
          cookie: editor.cookie!,
          'x-csrf-token': editor.csrfToken!,
        },
        body: readFileSync(STRICTDOC),
      },
    );
    return { status: response.status, text: await response.text() };
  };

  beforeAll(async () => {
    t = await startTestServer();
    editor = webClient(t.url);
    const users = t.demo.tenant.users;
    expect((await editor.signIn(users.editor.email, users.editor.password)).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a check leaves the outline alone; the import puts the records in the file’s order and levels', async () => {
    const revision = await approvedTopic(t, 'StrictDoc sample');
    const history = (await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id as string;
    const query = { revision, name: 'strictdoc.reqif' };
    const checked = await upload('check', query);
    expect(checked.status, checked.text).toBe(200);
    expect((await t.api('GET', `/records/outline/${history}`)).body.updated_at).toBeNull();

    const imported = await upload('import', query);
    expect(imported.status, imported.text).toBe(200);
    const records = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`))
      .body as Listed[];
    const bySourceId = new Map(records.map((record) => [record.context.global_element_id, record._id]));
    const expected: { record_id: string | undefined; level: number }[] = [];
    for await (const specification of readSpecHierarchies(STRICTDOC.pathname))
      for (const { object, level } of specification.entries)
        expected.push({ record_id: bySourceId.get(object), level });
    expect(expected).toHaveLength(18);
    const outline = await t.api('GET', `/records/outline/${history}`);
    expect(outline.status, outline.text).toBe(200);
    expect(outline.body.entries).toEqual(expected);
    // The page's answer says what was placed.
    expect(JSON.parse(imported.text).outline).toEqual({ entries: 18, skipped: 0, notes: [] });
    expect(JSON.parse(checked.text).outline).toMatchObject({ skipped: 18 });
  });
});
