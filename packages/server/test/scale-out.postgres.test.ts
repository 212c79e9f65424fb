import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@rxs/client';
import { exportParts, exportSourceOf } from '@rxs/exchange/export';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPostgresDatabase } from './harness.js';
import { startReplica, type Replica } from './replicas.js';

describe('two replicas on one PostgreSQL database', () => {
  let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;
  let a: Replica;
  let b: Replica;
  let key: string;
  let revision: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-replicas-'));
  const call = async (replica: Replica, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${replica.url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    database = await createTestPostgresDatabase();
    // Both replicas start together: migrations must run once, under the lock.
    [a, b] = await Promise.all([
      startReplica(['--database', database.url, '--data-dir', join(dataDir, 'a')]),
      startReplica(['--database', database.url, '--data-dir', join(dataDir, 'b')]),
    ]);
    await a.stop();
    a = await startReplica(['--demo', '--database', database.url, '--data-dir', dataDir]);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    key = demo.tenant.users.owner.apiKey;
    revision = demo.tenant.topics.systemRequirements.currentRevisionId;
  }, 90_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writers on both replicas at once: every write acknowledged, ids unique, both see all of them', async () => {
    const writes = Array.from({ length: 120 }, (_, i) =>
      call(i % 2 ? a : b, 'POST', '/records/', {
        name: `W-${i}`,
        form: {},
        data: { name: `write ${i}` },
        context: { knowledge_unit_topic_id: revision },
      }),
    );
    const results = await Promise.all(writes);
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    const ids = results.map((r) => r.body._id);
    expect(new Set(ids).size).toBe(ids.length);
    const [viaA, viaB] = await Promise.all([
      call(a, 'GET', `/records/?context__knowledge_unit_topic_id=${revision}`),
      call(b, 'GET', `/records/?context__knowledge_unit_topic_id=${revision}`),
    ]);
    expect(viaA.body).toEqual(viaB.body);
    for (const id of ids) expect(viaA.body.some((r: { _id: string }) => r._id === id)).toBe(true);
  });

  it('an export through one replica while writers work through the other: a consistent, complete snapshot', async () => {
    const client = createClient({ techdocUrl: b.url, recordsUrl: b.url, tracerUrl: b.url, apiKey: key });
    const before = (await call(a, 'GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body
      .length;
    let writing = true;
    const writer = (async () => {
      let written = 0;
      while (writing) {
        const res = await call(a, 'POST', '/records/', {
          name: `During-${written}`,
          form: {},
          data: {},
          context: { knowledge_unit_topic_id: revision },
        });
        expect(res.status).toBe(201);
        written++;
      }
      return written;
    })();
    const ids: string[] = [];
    for await (const part of exportParts(exportSourceOf(client), { revisionIds: [revision], traces: true })) {
      if (part.kind === 'record') ids.push(part.record.id);
    }
    writing = false;
    const written = await writer;
    expect(written).toBeGreaterThan(0);
    // The listing is one snapshot: at least what existed before, in strict _id order, no duplicates.
    expect(ids.length).toBeGreaterThanOrEqual(before);
    expect(ids.length).toBeLessThanOrEqual(before + written);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('two replicas approving the same draft at once yield one revision', async () => {
    for (let round = 0; round < 5; round++) {
      const draft = await call(a, 'POST', `/kt/${revision}/draft`);
      expect(draft.status).toBe(201);
      const answers = await Promise.all([
        call(a, 'POST', `/kt/${draft.body._id}/approve`),
        call(b, 'POST', `/kt/${draft.body._id}/approve`),
      ]);
      expect(answers.map((x) => x.status).sort()).toEqual([200, 409]);
      revision = draft.body._id;
      const listing = await call(b, 'GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
      expect(listing.body.length).toBeGreaterThan(100);
      const current = await call(
        a,
        'GET',
        `/kt/?knowledge_topic_history_id=${draft.body.knowledge_topic_history_id}&status=draft`,
      );
      expect(current.body).toEqual([]);
    }
  });

  it('concurrent updates of one record never lose one silently: one wins, the other is 409', async () => {
    const created = await call(a, 'POST', '/records/', {
      name: 'Contended',
      form: {},
      data: {},
      context: { knowledge_unit_topic_id: revision },
    });
    let version = created.body.version;
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all([
        call(a, 'PATCH', `/records/${created.body._id}`, { name: `from A ${round}`, version }),
        call(b, 'PATCH', `/records/${created.body._id}`, { name: `from B ${round}`, version }),
      ]);
      expect(answers.map((x) => x.status).sort()).toEqual([200, 409]);
      const winner = answers.find((x) => x.status === 200)!;
      const stored = await call(b, 'GET', `/records/${created.body._id}`);
      expect(stored.body.name).toBe(winner.body.name);
      version = stored.body.version;
    }
    expect(version).toBe('11.0');
  });
});
