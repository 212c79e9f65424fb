import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, testDatabase, type TestServer } from './harness.js';

describe(`streamed reads on ${testDatabase}: batches and keyset pages`, () => {
  let t: TestServer;
  let ids: string[];
  beforeAll(async () => {
    t = await startTestServer();
    ids = (await t.server.storage.db.selectFrom('records').select('id').orderBy('id').execute()).map(
      (r) => r.id,
    );
  });
  afterAll(() => t.close());

  const allIds = () => t.server.storage.db.selectFrom('records').select('id').orderBy('id');

  it('streamBatches yields every row once, in order, in batches of at most the size asked', async () => {
    expect(ids.length).toBeGreaterThan(6);
    const batches: string[][] = [];
    for await (const rows of t.server.storage.streamBatches(allIds().compile(), 4))
      batches.push(rows.map((r) => r.id));
    expect(batches.flat()).toEqual(ids);
    expect(batches.every((b) => b.length > 0 && b.length <= 4)).toBe(true);
    const one: string[] = [];
    for await (const row of t.server.storage.stream(allIds().compile())) one.push(row.id);
    expect(one).toEqual(ids);
  });

  it('streamPages runs keyset pages in one snapshot: a write meanwhile is not seen', async () => {
    const seen: string[] = [];
    let pages = 0;
    let wrote = false;
    for await (const rows of t.server.storage.streamPages<{ id: string }>((previous) => {
      const after = previous?.at(-1)?.id;
      return (after ? allIds().where('id', '>', after) : allIds()).limit(3).compile();
    })) {
      pages++;
      seen.push(...rows.map((r) => r.id));
      if (!wrote) {
        wrote = true;
        // A record deleted and one added while the listing runs: the listing keeps its snapshot.
        await t.server.storage.db.deleteFrom('records').where('id', '=', ids.at(-1)!).execute();
      }
    }
    expect(seen).toEqual(ids);
    expect(pages).toBe(Math.ceil(ids.length / 3));
    const after = await allIds().execute();
    expect(after.map((r) => r.id)).toEqual(ids.slice(0, -1));
  });

  it('a read consumed without a pause still lets the event loop serve others', async () => {
    // Pages of one large text each: tens of milliseconds of reading in all.
    const big = t.server.storage.db
      .selectFrom('records')
      .select(['id', sql<string>`${'x'.repeat(2 * 1024 * 1024)} || id`.as('text')])
      .orderBy('id');
    for (const read of ['pages', 'batches'] as const) {
      let served = false;
      setImmediate(() => (served = true));
      let chars = 0;
      const rows =
        read === 'pages'
          ? t.server.storage.streamPages<{ id: string; text: string }>((previous) => {
              const after = previous?.at(-1)?.id;
              return (after ? big.where('id', '>', after) : big).limit(1).compile();
            })
          : t.server.storage.streamBatches(big.compile(), 1);
      // A consumer that never waits: only the read itself can give the event loop a turn.
      for await (const page of rows) for (const row of page) chars += row.text.length;
      expect(chars).toBeGreaterThan(4 * 2 * 1024 * 1024);
      expect(served, read).toBe(true);
    }
  });

  it('an abandoned page stream releases its reader (the database stays usable)', async () => {
    for (let i = 0; i < 20; i++) {
      for await (const rows of t.server.storage.streamPages<{ id: string }>(() =>
        allIds().limit(2).compile(),
      )) {
        expect(rows).toHaveLength(2);
        break;
      }
      for await (const rows of t.server.storage.streamBatches(allIds().compile(), 2)) {
        expect(rows).toHaveLength(2);
        break;
      }
    }
    expect((await allIds().execute()).length).toBeGreaterThan(0);
  });
});
