import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSpecHierarchies, type SpecHierarchyEntry } from '../../exchange/src/import/reqif-hierarchy.js';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic, createNote } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

/** StrictDoc's sample document: sections and requirements five levels deep, one SPECIFICATION. */
const STRICTDOC = new URL('../../exchange/test/fixtures/reqif/strictdoc.reqif', import.meta.url).pathname;

interface Listed {
  _id: string;
  context: { global_element_id?: string | null };
}

/** The entries of all a file's SPECIFICATIONs, in file order. */
async function hierarchyOf(file: string): Promise<SpecHierarchyEntry[]> {
  const entries: SpecHierarchyEntry[] = [];
  for await (const specification of readSpecHierarchies(file)) entries.push(...specification.entries);
  return entries;
}

describe('rxs import of a ReqIF file: its SPEC-HIERARCHY becomes the topic’s document outline', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet']);
  const historyOf = async (revision: string) =>
    (await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id as string;
  const outlineOf = async (revision: string) => {
    const got = await t.api('GET', `/records/outline/${await historyOf(revision)}`);
    expect(got.status, got.text).toBe(200);
    return got.body as { entries: { record_id: string; level: number }[]; updated_at: string | null };
  };

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-reqif-outline-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('puts the records in the file’s order and levels, exports them nested so, and a re-import changes nothing', async () => {
    const revision = await approvedTopic(t, 'StrictDoc sample');
    const args = ['import', '--kt', revision, STRICTDOC, '--ignore-unknown-columns'];

    const check = await rxs(...args, '--dry-run', '--json');
    expect(check.code, check.stdout + check.stderr).toBe(0);
    // A check creates no records: no entry names one yet, and no outline is written.
    expect(JSON.parse(check.stdout).outline).toMatchObject({ entries: 0, skipped: 18 });
    expect((await outlineOf(revision)).updated_at).toBeNull();

    const first = await rxs(...args, '--json');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).outline).toEqual({ entries: 18, skipped: 0, notes: [] });

    const records = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`))
      .body as Listed[];
    const bySourceId = new Map(records.map((record) => [record.context.global_element_id, record._id]));
    const hierarchy = await hierarchyOf(STRICTDOC);
    expect(hierarchy.some((entry) => entry.level === 5)).toBe(true);
    const outline = await outlineOf(revision);
    expect(outline.entries).toEqual(
      hierarchy.map(({ object, level }) => ({ record_id: bySourceId.get(object), level })),
    );

    // The export writes the outline back as the same SPEC-HIERARCHY (its objects by their source ids).
    const exported = join(dir, 'strictdoc-export.reqif');
    const exporting = await rxs('export', '--kt', revision, '--format', 'reqif', '--out', exported);
    expect(exporting.code, exporting.stdout + exporting.stderr).toBe(0);
    expect(await hierarchyOf(exported)).toEqual(hierarchy);

    const again = await rxs(...args);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain(
      'Outline: 18 SPEC-HIERARCHY entries placed in the document outline, 0 skipped.',
    );
    expect(await outlineOf(revision)).toEqual(outline);
  });

  it('leaves out the entries of objects it did not import, moving their children up, and keeps the outline’s other records after the file’s', async () => {
    const revision = await approvedTopic(t, 'StrictDoc without section 2');
    const history = await historyOf(revision);
    const own = await createNote(t, revision, 'Kept');
    const put = await t.api('PUT', `/records/outline/${history}`, {
      body: { entries: [{ record_id: own, level: 1 }] },
    });
    expect(put.status, put.text).toBe(200);
    // The file without the SPEC-OBJECT of "Section 2": its SPEC-HIERARCHY names an object the file lacks.
    const section2 = 'SECTION-8b8ed5fb-f7b5-4603-8cb4-35d854f4fcae';
    const file = join(dir, 'strictdoc-without-section-2.reqif');
    writeFileSync(
      file,
      readFileSync(STRICTDOC, 'utf8').replace(
        new RegExp(`<SPEC-OBJECT [^>]*IDENTIFIER="${section2}"[\\s\\S]*?</SPEC-OBJECT>`),
        '',
      ),
    );
    const result = await rxs('import', '--kt', revision, file, '--ignore-unknown-columns');
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'Outline: 17 SPEC-HIERARCHY entries placed in the document outline, 1 skipped.',
    );
    expect(result.stdout).toContain(section2);

    const records = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`))
      .body as Listed[];
    const bySourceId = new Map(records.map((record) => [record.context.global_element_id, record._id]));
    const hierarchy = await hierarchyOf(STRICTDOC);
    const at = hierarchy.findIndex((entry) => entry.object === section2);
    const expected = hierarchy.map(({ object, level }) => ({ record_id: bySourceId.get(object), level }));
    // Section 2's children and grandchildren, up to the next entry at its level, move up one level.
    const next = hierarchy.findIndex((entry, i) => i > at && entry.level <= hierarchy[at]!.level);
    for (let i = at + 1; i < next; i++) expected[i]!.level--;
    expected.splice(at, 1);
    expect((await outlineOf(revision)).entries).toEqual([...expected, { record_id: own, level: 1 }]);
  });
});
