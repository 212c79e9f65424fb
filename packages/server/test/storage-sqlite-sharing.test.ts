import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { openStorage } from '@rxs/server';
import { sql } from 'kysely';
import { WAL_SIZE_LIMIT_BYTES } from '../src/storage/sqlite/storage.js';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * SQLite's one write connection, shared (storage/sqlite/driver.ts): a transaction that gives the
 * event loop turns keeps other writes waiting until it ends, in the order they came, while reads
 * outside it are answered at once with what was last committed (file databases).
 */
describe('SQLite: a transaction that yields', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rxs-sharing-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const tenant = (id: string) => ({
    id: id.padStart(24, '0'),
    name: id,
    product_history_id: 'p',
    knowledge_unit_history_id: 'k',
    created_at: '2026-01-01T00:00:00.000Z',
  });
  /** A few turns of the event loop: time enough for anything not waiting to be done. */
  const turns = async () => {
    for (let i = 0; i < 5; i++) await nextTurn();
  };
  /** Tracks whether a promise has settled yet. */
  const watched = <T>(promise: Promise<T>) => {
    const state = { settled: false, promise };
    void promise.then(
      () => (state.settled = true),
      () => (state.settled = true),
    );
    return state;
  };

  it('reads are answered meanwhile, from the last commit; writes and transactions wait, in order', async () => {
    const storage = await openStorage({ url: join(dir, 'shared.db') });
    try {
      const { db } = storage;
      const names = () =>
        db
          .selectFrom('tenants')
          .select('name')
          .orderBy('name')
          .execute()
          .then((rows) => rows.map((row) => row.name));
      await db.insertInto('tenants').values(tenant('a')).execute();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const order: string[] = [];
      const open = watched(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('tenants').values(tenant('b')).execute();
          await gate;
          await trx.insertInto('tenants').values(tenant('c')).execute();
          order.push('transaction');
        }),
      );
      await turns();
      // The transaction's writes are not seen before it commits.
      expect(await names()).toEqual(['a']);
      const write = watched(
        db
          .insertInto('tenants')
          .values(tenant('d'))
          .execute()
          .then(() => order.push('write')),
      );
      const other = watched(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('tenants').values(tenant('e')).execute();
          order.push('other transaction');
        }),
      );
      await turns();
      expect([open.settled, write.settled, other.settled]).toEqual([false, false, false]);
      release();
      await Promise.all([open.promise, write.promise, other.promise]);
      expect(order).toEqual(['transaction', 'write', 'other transaction']);
      expect(await names()).toEqual(['a', 'b', 'c', 'd', 'e']);
    } finally {
      await storage.close();
    }
  });

  it('a transaction that fails after yielding writes nothing, and the next write goes on', async () => {
    const storage = await openStorage({ url: join(dir, 'rollback.db') });
    try {
      const { db } = storage;
      const failed = db.transaction().execute(async (trx) => {
        await trx.insertInto('tenants').values(tenant('x')).execute();
        await turns();
        await trx.insertInto('tenants').values(tenant('x')).execute();
      });
      const after = db.insertInto('tenants').values(tenant('y')).execute();
      await expect(failed).rejects.toThrow(/UNIQUE/);
      await after;
      const rows = await db.selectFrom('tenants').select('name').execute();
      expect(rows.map((row) => row.name)).toEqual(['y']);
    } finally {
      await storage.close();
    }
  });

  it('a large commit is acknowledged after its WAL sync, which leaves the event loop free', async () => {
    const storage = await openStorage({ url: join(dir, 'sync.db') });
    try {
      const { db } = storage;
      await sql`create table burn (x text)`.execute(db);
      const text = 'x'.repeat(2000);
      // Megabytes in the WAL (far past INLINE_SYNC_BYTES), to be synced before the transaction is done.
      const write = watched(
        db.transaction().execute(async (trx) => {
          for (let i = 0; i < 20; i++)
            await sql`insert into burn (x) values ${sql.join(Array.from({ length: 100 }, (_, j) => sql`(${`${text}${i}-${j}`})`))}`.execute(
              trx,
            );
        }),
      );
      let turnsMeanwhile = 0;
      while (!write.settled) {
        await nextTurn();
        turnsMeanwhile++;
      }
      await write.promise;
      // A sync in the commit itself (synchronous = FULL) would have let only the first turn through,
      // after the whole transaction.
      expect(turnsMeanwhile).toBeGreaterThan(1);
      const { rows } = await sql<{ n: number }>`select count(*) as n from burn`.execute(db);
      expect(rows[0]!.n).toBe(2_000);
    } finally {
      await storage.close();
    }
  });

  it('checkpoints run beside the writer and keep the WAL bounded', async () => {
    const file = join(dir, 'checkpoints.db');
    const storage = await openStorage({ url: file });
    try {
      const { db } = storage;
      await sql`create table burn (x text)`.execute(db);
      const walBytes = () => statSync(`${file}-wal`).size;
      let largest = 0;
      // 40 MB written, a megabyte a commit: without checkpoints the WAL would hold all of it.
      for (let i = 0; i < 40; i++) {
        await sql`insert into burn with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000) select printf('%.1000c', 'y') || x from c`.execute(
          db,
        );
        largest = Math.max(largest, walBytes());
        await nextTurn();
      }
      expect(largest).toBeLessThan(3 * WAL_SIZE_LIMIT_BYTES);
      // The database file has the rows (checkpointed), not only the WAL.
      expect(statSync(file).size).toBeGreaterThan(20 * 1024 * 1024);
    } finally {
      await storage.close();
    }
  });

  it('a process that closes the storage right after a large commit ends once it is closed', () => {
    // Nothing else keeps this process alive: the checkpoint thread must, until it has ended.
    const file = join(dir, 'exit.db');
    // A module file (an eval'd one keeps the process alive for other reasons).
    const script = join(dir, 'exit.mjs');
    writeFileSync(
      script,
      `import { openStorage } from ${JSON.stringify(join(import.meta.dirname, '..', 'dist', 'index.js'))};
      const storage = await openStorage({ url: ${JSON.stringify(file)} });
      await storage.db.schema.createTable('burn').addColumn('x', 'text').execute();
      await storage.db.transaction().execute(async (trx) => {
        for (let i = 0; i < 80; i++) await trx.insertInto('burn').values({ x: 'x'.repeat(100000) + i }).execute();
      });
      await storage.close();
      console.log('closed');
      `,
    );
    const run = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('closed');
    expect(run.status).toBe(0);
  });

  it('a failed statement keeps its SQLite code and message', async () => {
    const storage = await openStorage({ url: join(dir, 'codes.db') });
    try {
      const { db } = storage;
      await db.insertInto('tenants').values(tenant('k')).execute();
      const error = await db
        .insertInto('tenants')
        .values(tenant('k'))
        .execute()
        .catch((e: unknown) => e as Error & { code?: string });
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
      expect(String((error as Error).message)).toMatch(/UNIQUE constraint failed: tenants\.id/);
    } finally {
      await storage.close();
    }
  });

  it('in memory (no second connection), reads wait for the transaction', async () => {
    const storage = await openStorage({ url: ':memory:' });
    try {
      const { db } = storage;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const open = db.transaction().execute(async (trx) => {
        await trx.insertInto('tenants').values(tenant('m')).execute();
        await gate;
      });
      await turns();
      const read = watched(db.selectFrom('tenants').select('name').execute());
      await turns();
      expect(read.settled).toBe(false);
      release();
      await open;
      expect((await read.promise).map((row) => row.name)).toEqual(['m']);
    } finally {
      await storage.close();
    }
  });
});
