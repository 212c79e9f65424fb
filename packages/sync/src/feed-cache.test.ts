import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { ServiceRecord } from '../../contract/src/record.js';
import { allChanges, changeLineId, FeedCacheWriter, type FeedPlan, type PlannedTopic } from './feed-cache.js';
import { compareIds } from './json-values.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-feed-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

const REVISION = '6b0713788a44642dc7cff681';

/** A record as the service lists it, its data holding `text`. */
function record(id: string, text: string): ServiceRecord {
  return { _id: id, name: `Record ${id}`, data: { text } } as unknown as ServiceRecord;
}

const changeLines = (changes: Map<string, ServiceRecord | null>) =>
  [...changes.keys()]
    .sort(compareIds)
    .map((id) => `${JSON.stringify([id, changes.get(id)])}\n`)
    .join('');

/** An old cache folder with a listing of `listed` records and, when given, kept changes. */
function oldCache(listed: number, kept: Map<string, ServiceRecord | null> | undefined) {
  const dir = join(root, `state-${++runs}`);
  const folder = join(dir, 'feed-gen-old');
  mkdirSync(folder, { recursive: true });
  const ids = Array.from({ length: listed }, (_, i) => `6b${i.toString(16).padStart(22, '0')}`);
  writeFileSync(
    join(folder, 'topic-0.jsonl'),
    ids.map((id) => `${JSON.stringify(record(id, 'listed'))}\n`).join(''),
  );
  if (kept) writeFileSync(join(folder, 'topic-0.changes.jsonl'), changeLines(kept));
  return { dir, folder, ids };
}

async function keep(
  cache: { dir: string; folder: string },
  fresh: Map<string, ServiceRecord | null>,
  hasKept: boolean,
) {
  const topic: PlannedTopic = {
    revisionId: REVISION,
    file: 'topic-0.jsonl',
    fresh,
    kept: hasKept ? join(cache.folder, 'topic-0.changes.jsonl') : undefined,
    cursor: 'c',
  };
  const plan: FeedPlan = { folder: cache.folder, topics: [topic] };
  const writer = await FeedCacheWriter.open(cache.dir, [REVISION], { plan });
  await writer.keepListing(REVISION);
  return { writer, topic };
}

const awkwardId = fc.oneof(
  fc.constantFrom('6b0000000000000000000001', '6b0000000000000000000002', '6b00000000000000000000ff'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
  fc.constantFrom('a"b', 'back\\slash', 'line\nbreak', '"', '\\'),
);
const changes = fc
  .array(fc.tuple(awkwardId, fc.option(fc.string({ maxLength: 20 }), { nil: null })), { maxLength: 30 })
  .map((entries) => new Map(entries.map(([id, text]) => [id, text === null ? null : record(id, text)])));

describe('feed cache: the changes kept beside a linked listing', () => {
  it('changeLineId reads the id of any line the cache writes, escapes and all, without the record', () => {
    fc.assert(
      fc.property(awkwardId, fc.option(fc.string()), (id, text) => {
        const line = JSON.stringify([id, text === null ? null : record(id, text)]);
        expect(changeLineId(line, 'f')).toBe(id);
      }),
    );
    expect(() => changeLineId('{"id":"x"}', 'the-file')).toThrow(/the-file.*damaged/);
    for (const damaged of ['["unterminated', '["a\\x",null]', '["id"]', '[1,null]', '', '"id",null'])
      expect(() => changeLineId(damaged, 'f'), damaged).toThrow(/damaged/);
  });

  it('a spliced poll writes the kept changes merged with the fresh ones (fresh win), as the lines a merge of both maps gives', async () => {
    await fc.assert(
      fc.asyncProperty(fc.option(changes, { nil: undefined }), changes, async (kept, fresh) => {
        const cache = oldCache(2_000, kept);
        const { writer, topic } = await keep(cache, fresh, kept !== undefined);
        try {
          const expected = new Map([...(kept ?? []), ...fresh]);
          // What the next poll reads back is every change, the fresh ones winning.
          expect(await allChanges(topic)).toEqual(expected);
          // The listing is linked, not written; the changes beside it are the merge, in _id order.
          expect(statSync(join(writer.temp, 'topic-0.jsonl')).ino).toBe(
            statSync(join(cache.folder, 'topic-0.jsonl')).ino,
          );
          expect(readFileSync(join(writer.temp, 'topic-0.changes.jsonl'), 'utf8')).toBe(
            changeLines(expected),
          );
        } finally {
          await writer.abort();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('changes past a tenth of the listing make it written anew, merged, with no changes file beside it', async () => {
    const kept = new Map<string, ServiceRecord | null>();
    const cache = oldCache(200, kept);
    // 30 of 200 records changed (more than a tenth of the listing's bytes), 5 of them gone.
    for (const [i, id] of cache.ids.slice(0, 25).entries()) kept.set(id, record(id, `kept change ${i}`));
    writeFileSync(join(cache.folder, 'topic-0.changes.jsonl'), changeLines(kept));
    const fresh = new Map<string, ServiceRecord | null>(cache.ids.slice(20, 30).map((id) => [id, null]));
    fresh.set(cache.ids[3]!, record(cache.ids[3]!, 'fresh change'));
    const { writer } = await keep(cache, fresh, true);
    try {
      expect(existsSync(join(writer.temp, 'topic-0.changes.jsonl'))).toBe(false);
      const written = readFileSync(join(writer.temp, 'topic-0.jsonl'), 'utf8').trim().split('\n');
      const records = written.map((line) => JSON.parse(line) as ServiceRecord & { data: { text: string } });
      expect(records.map((r) => r._id)).toEqual(cache.ids.filter((_, i) => i < 20 || i >= 30));
      expect(records[3]!.data.text).toBe('fresh change');
      expect(records[4]!.data.text).toBe('kept change 4');
      expect(records[40]!.data.text).toBe('listed');
    } finally {
      await writer.abort();
    }
  });
});
