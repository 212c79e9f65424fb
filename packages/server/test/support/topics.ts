import { expect } from 'vitest';
import type { TestServer } from '../harness.js';

/** A one-field form: records carry their text in `note`. */
export const NOTE_SCHEMA = { components: [{ type: 'textarea', key: 'note', label: 'Note' }] };

/** A form with a text and a bounded number: a row of an import can be wrong in a way a check finds. */
export const NOTE_SCORE_SCHEMA = {
  components: [
    { type: 'textarea', key: 'note', label: 'Note' },
    { type: 'number', key: 'score', label: 'Score', validate: { min: 0, max: 10 } },
  ],
};

/** A new multi-record topic, approved; its revision id. */
export async function approvedTopic(
  t: TestServer,
  name: string,
  options: { key?: string; schema?: unknown } = {},
): Promise<string> {
  const key = options.key && { key: options.key };
  const draft = await t.api('POST', '/kt/', {
    ...key,
    body: {
      knowledge_topic_name: name,
      type: 'multi_record',
      knowledge_topic_schema: options.schema ?? NOTE_SCHEMA,
    },
  });
  expect(draft.status, draft.text).toBe(201);
  const approved = await t.api('POST', `/kt/${draft.body._id}/approve`, { ...key });
  expect(approved.status, approved.text).toBe(200);
  return approved.body._id as string;
}

/** A new draft of the revision's topic, approved: the records move to the new revision, whose id this is. */
export async function reapprove(t: TestServer, revision: string): Promise<string> {
  const draft = await t.api('POST', `/kt/${revision}/draft`);
  expect(draft.status, draft.text).toBe(201);
  const approved = await t.api('POST', `/kt/${draft.body._id}/approve`);
  expect(approved.status, approved.text).toBe(200);
  return approved.body._id as string;
}

/** A record under `revision` whose note is `text`; its id. */
export async function createNote(
  t: TestServer,
  revision: string,
  text: string,
  options: { key?: string } = {},
): Promise<string> {
  return (await createNoteRecord(t, revision, text, options))._id as string;
}

/** The same, answering the record as created. */
export async function createNoteRecord(
  t: TestServer,
  revision: string,
  text: string,
  options: { key?: string } = {},
): Promise<Record<string, any>> {
  const created = await t.api('POST', '/records/', {
    ...(options.key && { key: options.key }),
    body: {
      name: text.slice(0, 40) || 'x',
      form: {},
      data: { note: text },
      context: { knowledge_unit_topic_id: revision },
    },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}
