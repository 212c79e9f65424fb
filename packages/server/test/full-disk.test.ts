import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, testDatabase, type TestServer } from './harness.js';

/** A 24 MB tmpfs made for this test, or why there is none (not root, or mount refused). */
function smallFilesystem(): { dir: string } | { skip: string } {
  if (testDatabase !== 'sqlite') return { skip: 'the full-disk test runs on SQLite files only' };
  if (process.getuid?.() !== 0) return { skip: 'mounting a small tmpfs needs root' };
  const dir = mkdtempSync(join(tmpdir(), 'rxs-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `mount -t tmpfs failed: ${String((error as Error).message).split('\n')[0]}` };
  }
}

const disk = smallFilesystem();
if ('skip' in disk) console.warn(`full-disk test skipped: ${disk.skip}`);

describe.skipIf('skip' in disk)('a full disk', () => {
  const dir = 'dir' in disk ? disk.dir : '';
  const filler = join(dir, 'filler');
  let t: TestServer;
  let revision: string;
  const text = 'y'.repeat(100_000);
  const post = (i: number) =>
    t.api('POST', '/records/', {
      body: {
        name: `r-${i}`,
        form: {},
        data: { text },
        context: { knowledge_unit_topic_id: revision },
      },
    });

  beforeAll(async () => {
    t = await startTestServer({ databaseUrl: join(dir, 'rxs.db') });
    const created = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Disk',
        type: 'multi_record',
        knowledge_topic_schema: { components: [{ type: 'textfield', key: 'text', label: 'Text' }] },
      },
    });
    revision = created.body._id;
    // Space the operator can free later.
    writeFileSync(filler, Buffer.alloc(6 * 1024 * 1024));
  });
  afterAll(async () => {
    await t?.close();
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses writes with 507, keeps what it acknowledged, serves reads, and recovers once space is freed', async () => {
    const acknowledged: string[] = [];
    let refused;
    for (let i = 0; i < 400 && !refused; i++) {
      const res = await post(i);
      if (res.status === 201) acknowledged.push(res.body._id);
      else refused = res;
    }
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(refused?.status).toBe(507);
    expect(refused?.body.detail).toMatch(/disk is full.*not saved.*Retry once/);
    // Still full: refused again, and the server keeps serving.
    expect((await post(1000)).status).toBe(507);
    expect((await t.api('GET', '/healthz', { key: null })).status).toBe(200);

    const listing = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    expect(listing.status).toBe(200);
    expect(listing.body.map((r: { _id: string }) => r._id)).toEqual(acknowledged);

    unlinkSync(filler);
    const after = await post(2000);
    expect(after.status).toBe(201);
    const listed = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    expect(listed.body.map((r: { _id: string }) => r._id)).toEqual([...acknowledged, after.body._id]);
    expect(await t.server.storage.integrityCheck()).toEqual([]);
  }, 120_000);
});
