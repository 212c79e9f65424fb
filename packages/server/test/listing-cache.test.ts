import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListingCache } from '../src/services/records/listing-cache.js';
import { parseListingCacheMb } from '../src/config.js';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, createNote, reapprove } from './support/topics.js';

/** Files in the server's listing cache: kept listings and temporary ones. */
function cacheFiles(dataDir: string): { kept: string[]; temporary: string[] } {
  const base = join(dataDir, 'listing-cache');
  const files = existsSync(base)
    ? readdirSync(base).flatMap((run) => readdirSync(join(base, run)).map((name) => join(run, name)))
    : [];
  return {
    kept: files.filter((f) => f.endsWith('.json')),
    temporary: files.filter((f) => f.endsWith('.tmp')),
  };
}

/**
 * Settling a kept file happens after the answer ended: wait until no temporary file is left and at
 * least `kept` listings are kept. A listing to be kept says so by `kept`: its temporary file may not
 * even exist yet when the answer has ended (its open waits for the thread pool on a busy machine).
 */
async function settled(dataDir: string, kept = 0): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const files = cacheFiles(dataDir);
    if (files.temporary.length === 0 && files.kept.length >= kept) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const UGLY = [
  'plain',
  'line one\nline two\r\n"quoted", \\backslash\\',
  '<script>alert(1)</script> &amp; \u2028\u2029 \u0001\u001f',
  '😀 Ünïcödé ﷽',
  '=SUM(A1:A9)',
];

/**
 * The listing cache (services/records/listing-cache.ts): a revision's whole listing, once streamed,
 * is answered again from a file while its ETag stays the same. What a client reads must never differ
 * from the listing the database would build now.
 */
describe('finished listings kept on disk', () => {
  let t: TestServer;
  const listing = (revision: string, extra = '') =>
    t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}${extra}`);
  // The same records, built from the database every time: a date filter is never kept.
  const built = (revision: string) => listing(revision, '&audit_info__start_date=1970-01-01T00:00:00Z');

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers a repeated listing from the kept file: the same bytes, now with their Content-Length', async () => {
    const revision = await approvedTopic(t, 'Kept listing');
    for (const text of UGLY) await createNote(t, revision, text);
    const first = await listing(revision);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-length')).toBeNull(); // streamed from the database
    await settled(t.dataDir, 1);
    expect(cacheFiles(t.dataDir).kept.length).toBeGreaterThan(0);

    const second = await listing(revision);
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('content-length')).toBe(String(Buffer.byteLength(first.text)));
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(second.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((second.body as unknown[]).length).toBe(UGLY.length);
    // with_revision has its own tag, and the same bytes from the same file.
    const withRevision = await listing(revision, '&with_revision=true');
    expect(withRevision.text).toBe(first.text);
    expect(withRevision.headers.get('content-length')).toBe(second.headers.get('content-length'));
    expect(withRevision.headers.get('etag')).not.toBe(first.headers.get('etag'));
    // HEAD answers without touching the file.
    const head = await fetch(`${t.url}/records/?context__knowledge_unit_topic_id=${revision}`, {
      method: 'HEAD',
      headers: { 'x-api-key': t.ownerKey },
    });
    expect(head.status).toBe(200);
  });

  it('a kept listing of many buffers comes whole to a slow reader and a fast one at once', async () => {
    const revision = await approvedTopic(t, 'Kept listing, large');
    // About 18 MB: several of the kept file's 4 MiB reads, whose buffers are read into again.
    for (let i = 0; i < 300; i++)
      await createNote(t, revision, `${UGLY[i % UGLY.length]} ${i} ${'w'.repeat(60_000)}`);
    const keptBefore = cacheFiles(t.dataDir).kept.length;
    const first = await listing(revision);
    await settled(t.dataDir, keptBefore + 1);
    expect(cacheFiles(t.dataDir).kept.length).toBe(keptBefore + 1);
    const url = new URL(`${t.url}/records/?context__knowledge_unit_topic_id=${revision}`);
    /** The body read with a pause of `pauseMs` after every chunk. */
    const read = (pauseMs: number) =>
      new Promise<Buffer>((resolve, reject) => {
        const req = request(url, { headers: { 'x-api-key': t.ownerKey } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            if (pauseMs > 0) {
              res.pause();
              setTimeout(() => res.resume(), pauseMs);
            }
          });
          res.on('end', () => resolve(Buffer.concat(chunks)));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
    const [slow, fast] = await Promise.all([read(3), read(0)]);
    expect(slow.toString()).toBe(first.text);
    expect(fast.toString()).toBe(first.text);
    expect((await built(revision)).text).toBe(first.text);
  }, 120_000);

  it('property: after random creates, changes, deletions, restores and re-approvals, every listing is the one the database builds', async () => {
    type Step =
      | { kind: 'create'; text: string }
      | { kind: 'change'; pick: number; text: string }
      | { kind: 'delete'; pick: number }
      | { kind: 'restore' }
      | { kind: 'reapprove' }
      | { kind: 'list' };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({
        kind: fc.constant('create' as const),
        text: fc.oneof(fc.constantFrom(...UGLY), fc.string()),
      }),
      fc.record({ kind: fc.constant('change' as const), pick: fc.nat(), text: fc.string() }),
      fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
      fc.constant({ kind: 'restore' as const }),
      fc.constant({ kind: 'reapprove' as const }),
      fc.constant({ kind: 'list' as const }),
    );
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        let revision = await approvedTopic(t, `Kept listing property ${++round}`);
        const live: string[] = [];
        const deleted: string[] = [];
        const check = async () => {
          const expected = await built(revision);
          for (const extra of ['', '', '&with_revision=true']) {
            const got = await listing(revision, extra);
            expect(got.status).toBe(200);
            expect(got.text).toBe(expected.text);
            await settled(t.dataDir);
          }
        };
        await check();
        for (const s of steps) {
          if (s.kind === 'create') live.push(await createNote(t, revision, s.text));
          else if (s.kind === 'change' && live.length > 0) {
            const id = live[s.pick % live.length]!;
            const current = await t.api('GET', `/records/${id}`);
            const changed = await t.api('PATCH', `/records/${id}`, {
              body: { version: current.body.version, data: { note: s.text } },
            });
            expect(changed.status, changed.text).toBe(200);
          } else if (s.kind === 'delete' && live.length > 0) {
            const [id] = live.splice(s.pick % live.length, 1);
            expect((await t.api('DELETE', `/records/${id}`)).status).toBe(204);
            deleted.push(id!);
          } else if (s.kind === 'restore' && deleted.length > 0) {
            const id = deleted.pop()!;
            expect((await t.api('POST', `/records/${id}/restore`)).status).toBe(200);
            live.push(id);
          } else if (s.kind === 'reapprove') revision = await reapprove(t, revision);
          await check();
        }
      }),
      { numRuns: 12 },
    );
  });

  it('never answers one tenant with what was kept for another', async () => {
    const revision = await approvedTopic(t, 'Kept listing, one tenant');
    await createNote(t, revision, 'secret of the first tenant');
    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    for (let i = 0; i < 2; i++) {
      const mine = await listing(revision);
      expect((mine.body as unknown[]).length).toBe(1);
      await settled(t.dataDir);
      const theirs = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`, {
        key: otherKey,
      });
      expect(theirs.status).toBe(200);
      expect(theirs.body).toEqual([]);
      expect(theirs.text).not.toContain('secret');
      await settled(t.dataDir);
    }
  });
});

describe('the listing cache switched off', () => {
  it('keeps nothing with --listing-cache-mb 0, and says what a bad size is', async () => {
    const t = await startTestServer({ listingCacheMb: 0 });
    try {
      const revision = await approvedTopic(t, 'Not kept');
      await createNote(t, revision, 'a');
      const first = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
      const second = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
      expect(second.text).toBe(first.text);
      expect(second.headers.get('content-length')).toBeNull();
      expect(existsSync(join(t.dataDir, 'listing-cache'))).toBe(false);
    } finally {
      await t.close();
    }
    expect(parseListingCacheMb('0')).toBe(0);
    expect(parseListingCacheMb(' 512 ')).toBe(512);
    for (const bad of ['-1', '1.5', 'lots', ''])
      expect(() => parseListingCacheMb(bad)).toThrow(/RXS_LISTING_CACHE_MB must be a whole number/);
  });
});

describe('a listing cache that cannot be kept', () => {
  it('does not keep the service from starting: listings are built from the database', async () => {
    // A file where the cache's directory should be: nothing can be created under it.
    const blocked = join(mkdtempSync(join(tmpdir(), 'rxs-blocked-')), 'file');
    writeFileSync(blocked, 'not a directory');
    const t = await startTestServer({ listingCacheDir: join(blocked, 'cache') });
    try {
      const revision = await approvedTopic(t, 'No cache');
      await createNote(t, revision, 'still listed');
      const first = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
      const second = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
      expect(first.status).toBe(200);
      expect((first.body as unknown[]).length).toBe(1);
      expect(second.text).toBe(first.text);
      expect(second.headers.get('content-length')).toBeNull();
    } finally {
      await t.close();
    }
  });
});

describe('ListingCache', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rxs-listing-cache-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function* parts(...texts: string[]) {
    for (const text of texts) yield Buffer.from(text);
  }
  async function drain(body: AsyncIterable<Buffer | string>): Promise<string> {
    let text = '';
    for await (const part of body) text += part.toString();
    return text;
  }
  async function read(cache: ListingCache, tag: string): Promise<string | undefined> {
    const kept = await cache.find('tenant', 'rev', tag);
    if (!kept) return undefined;
    return drain(kept.stream);
  }
  const files = (cacheDir: string) =>
    readdirSync(cacheDir).flatMap((run) => readdirSync(join(cacheDir, run)));
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

  it('keeps a body read to its end only while the tag still holds', async () => {
    const cacheDir = join(dir, 'tags');
    const cache = await ListingCache.open({ dir: cacheDir, maxBytes: 1024 });
    expect(
      await drain(cache.record('tenant', 'rev', 'a', parts('[\n', '1', '\n]\n'), async () => true)),
    ).toBe('[\n1\n]\n');
    await settle();
    expect(await read(cache, 'a')).toBe('[\n1\n]\n');
    expect(await read(cache, 'other tag')).toBeUndefined();
    // The tag moved while the listing was read: nothing kept.
    await drain(cache.record('tenant', 'rev', 'b', parts('[\n2\n]\n'), async () => false));
    await settle();
    expect(await read(cache, 'b')).toBeUndefined();
    // A newer tag of the same listing replaces the older file.
    await drain(cache.record('tenant', 'rev', 'c', parts('[\n3\n]\n'), async () => true));
    await settle();
    expect(await read(cache, 'c')).toBe('[\n3\n]\n');
    expect(await read(cache, 'a')).toBeUndefined();
    expect(files(cacheDir)).toHaveLength(1);
    await cache.close();
    expect(readdirSync(cacheDir)).toEqual([]);
  });

  it('keeps nothing of a body its reader left, and no temporary file', async () => {
    const cacheDir = join(dir, 'left');
    const cache = await ListingCache.open({ dir: cacheDir, maxBytes: 1024 });
    const body = cache.record('tenant', 'rev', 'a', parts('[\n', '1', '\n]\n'), async () => true);
    await body.next();
    await body.return(undefined);
    await settle();
    expect(await read(cache, 'a')).toBeUndefined();
    expect(files(cacheDir)).toEqual([]);
    // A failing source: the error reaches the reader, nothing is kept.
    async function* failing() {
      yield Buffer.from('[\n');
      throw new Error('database gone');
    }
    await expect(drain(cache.record('tenant', 'rev', 'b', failing(), async () => true))).rejects.toThrow(
      'database gone',
    );
    await settle();
    expect(files(cacheDir)).toEqual([]);
    await cache.close();
  });

  it('stays within its size, dropping the least recently used', async () => {
    const cacheDir = join(dir, 'size');
    const cache = await ListingCache.open({ dir: cacheDir, maxBytes: 25 });
    const keep = async (revision: string, text: string) => {
      await drain(cache.record('tenant', revision, 't', parts(text), async () => true));
      await settle();
    };
    await keep('r1', '0123456789');
    await keep('r2', 'abcdefghij');
    expect(await cache.find('tenant', 'r1', 't')).toBeDefined(); // r1 used last
    await keep('r3', 'ABCDEFGHIJ');
    expect(cache.keptBytes).toBeLessThanOrEqual(25);
    expect(await cache.find('tenant', 'r2', 't')).toBeUndefined();
    expect(await cache.find('tenant', 'r1', 't')).toBeDefined();
    expect(await cache.find('tenant', 'r3', 't')).toBeDefined();
    // Larger than the whole cache: never kept.
    await keep('r4', 'x'.repeat(26));
    expect(await cache.find('tenant', 'r4', 't')).toBeUndefined();
    expect(cache.keptBytes).toBeLessThanOrEqual(25);
    await cache.close();
  });

  it('removes the files of servers that are gone, never those of one still running', async () => {
    const cacheDir = join(dir, 'runs');
    mkdirSync(join(cacheDir, 'run-999999999-abcdef'), { recursive: true });
    writeFileSync(join(cacheDir, 'run-999999999-abcdef', 'x.json'), 'stale');
    const running = await ListingCache.open({ dir: cacheDir, maxBytes: 1024 });
    await drain(running.record('tenant', 'rev', 'a', parts('kept'), async () => true));
    await settle();
    const second = await ListingCache.open({ dir: cacheDir, maxBytes: 1024 });
    expect(existsSync(join(cacheDir, 'run-999999999-abcdef'))).toBe(false);
    expect(await read(running, 'a')).toBe('kept');
    expect(readdirSync(cacheDir)).toHaveLength(2);
    await second.close();
    await running.close();
  });
});
