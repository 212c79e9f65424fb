import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordJson } from '../src/storage/record-json.js';
import type { RecordRow } from '../src/storage/schema.js';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, NOTE_SCORE_SCHEMA } from './support/topics.js';

/**
 * A bulk item's create is kept under its idempotency_key as the record version it wrote, not as a
 * copy of the record's text (migration 016): its replay is rebuilt from that version, and must be
 * the answer the key kept before, byte for byte — the record as first written, whatever changed
 * since.
 */
describe('kept answers as record versions', () => {
  let t: TestServer;
  let revision: string;
  const item = (note: string, key: string) => ({
    name: `Kept ${note}`,
    form: { zeta: 1, alpha: [true, null, 'x'] },
    data: { score: 2.5, note: `${note} — "quoted"\nline ✓` },
    context: { knowledge_unit_topic_id: revision },
    idempotency_key: key,
  });
  const single = ({ idempotency_key: key, ...body }: ReturnType<typeof item>) =>
    t.api('POST', '/records/', { body, headers: { 'idempotency-key': key } });
  const recordRow = async (id: string) =>
    (await t.server.storage.db
      .selectFrom('records')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()) as RecordRow;

  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'Kept versions', { schema: NOTE_SCORE_SCHEMA });
  });
  afterAll(() => t?.close());

  it('keeps a reference, and a single write with the key replays the record as first written, byte for byte', async () => {
    const items = [item('one', 'kept-v-1'), item('two', 'kept-v-2')];
    const written = await t.api('POST', '/records/bulk', { body: { records: items } });
    expect(written.status, written.text).toBe(200);
    const ids = (written.body.records as { _id: string }[]).map((r) => r._id);
    const firstTexts = await Promise.all(ids.map(async (id) => recordJson(await recordRow(id))));

    const kept = await t.server.storage.db
      .selectFrom('idempotency_keys')
      .select(['key', 'body', 'record_id', 'record_n'])
      .where('key', 'in', ['kept-v-1', 'kept-v-2'])
      .orderBy('key')
      .execute();
    expect(kept).toEqual([
      { key: 'kept-v-1', body: '', record_id: ids[0], record_n: 1 },
      { key: 'kept-v-2', body: '', record_id: ids[1], record_n: 1 },
    ]);

    const changed = await t.api('PATCH', `/records/${ids[0]}`, {
      body: { data: { note: 'changed', score: 3 } },
    });
    expect(changed.status, changed.text).toBe(200);
    for (const [index, entry] of items.entries()) {
      const replay = await single(entry);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(firstTexts[index]);
    }

    // A bulk request with the keys again answers them from their versions, writing nothing.
    const again = await t.api('POST', '/records/bulk', { body: { records: items } });
    expect(again.status, again.text).toBe(200);
    expect(again.body.records).toEqual([
      { _id: ids[0], version: '1.0', created: true, replayed: true },
      { _id: ids[1], version: '1.0', created: true, replayed: true },
    ]);
  });

  it('a record deleted since makes its key answer 410, as a kept text does', async () => {
    const entry = item('gone', 'kept-v-gone');
    const written = await t.api('POST', '/records/bulk', { body: { records: [entry] } });
    expect(written.status, written.text).toBe(200);
    const id = written.body.records[0]._id as string;
    expect((await t.api('DELETE', `/records/${id}`)).status).toBe(204);
    const replay = await single(entry);
    expect(replay.status).toBe(410);
    expect(JSON.stringify(replay.body)).toContain(id);
  });
});
