import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic } from '../../server/test/support/topics.js';
import { writeZip } from '../../exchange/test/support/bounded-uploads.js';
import { PYTHON } from '../../exchange/test/support/spreadsheet-readers.js';
import { runCli } from './run-cli.js';

/**
 * `rxs export --format reqifz` and `rxs import` of a .reqifz: the archive holds the
 * ReqIF file of `--format reqif` named after it, and imports back into its topic unchanged; an
 * archive's attachments are named in the report, not imported.
 */
const samples = new URL('../../../reference/samples/', import.meta.url);
const load = (file: string) => JSON.parse(readFileSync(new URL(file, samples), 'utf8'));
const sampleTopic = load('kt_system_requirements.json');
const sampleRecords: { name: string; data: Record<string, unknown> }[] = load(
  'records_system_requirements.json',
);

/** The ReqIF file an archive holds, and its entries' names, as Python's zipfile reads them. */
function unzipped(file: string): { names: string[]; reqif: Buffer } {
  const script = [
    'import base64, json, sys, zipfile',
    'z = zipfile.ZipFile(sys.argv[1])',
    'names = z.namelist()',
    'sys.stdout.write(json.dumps({"names": names, "reqif": base64.b64encode(z.read(names[0])).decode()}))',
  ].join('\n');
  const out = JSON.parse(
    execFileSync(PYTHON, ['-c', script, file], { encoding: 'utf8', maxBuffer: 1 << 28 }),
  );
  return { names: out.names, reqif: Buffer.from(out.reqif, 'base64') };
}

describe('rxs export --format reqifz, rxs import of a .reqifz', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let topic: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet']);

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-reqifz-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    topic = await approvedTopic(t, 'System Requirements', { schema: sampleTopic.knowledge_topic_schema });
    for (const record of sampleRecords) {
      const created = await t.api('POST', '/records/', {
        body: { name: record.name, form: {}, data: record.data, context: { knowledge_unit_topic_id: topic } },
      });
      expect(created.status, created.text).toBe(201);
    }
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists reqifz among the formats and --entry among the import options', async () => {
    const help = async (command: string) => (await runCli([command, '--help'])).stdout.replace(/\s+/g, ' ');
    expect(await help('export')).toMatch(/--format <format> output format \(choices: [^)]*"reqif", "reqifz"/);
    expect(await help('import')).toContain(
      '--entry <name> ReqIF archive (.reqifz): the .reqif file in it to import',
    );
  });

  it('round trip: the archive holds <name>.reqif as --format reqif writes it, and imports back into its topic unchanged', async () => {
    const archive = join(dir, 'design.reqifz');
    const exported = await rxs('export', '--kt', topic, '--format', 'reqifz', '--out', archive, '--json');
    expect(exported.code, exported.stderr).toBe(0);
    const { exportedAt } = JSON.parse(exported.stdout);
    // The ReqIF file of the same moment: the same bytes.
    const plain = join(dir, 'design.reqif');
    const asOf = ['--as-of', exportedAt];
    expect((await rxs('export', '--kt', topic, ...asOf, '--format', 'reqif', '--out', plain)).code).toBe(0);
    const { names, reqif } = unzipped(archive);
    expect(names).toEqual(['design.reqif']);
    expect(reqif.equals(readFileSync(plain))).toBe(true);

    const imported = await rxs('import', '--kt', topic, archive, '--json');
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({
      rows: sampleRecords.length,
      unchanged: sampleRecords.length,
      created: 0,
      updated: 0,
      rejected: 0,
      complete: true,
    });

    // The same ReqIF file in an archive with a picture, as requirements tools write them.
    const withPicture = join(dir, 'with-picture.reqifz');
    await writeZip(withPicture, [
      { name: 'module.reqif', chunks: () => [reqif] },
      { name: 'images/figure-1.png', chunks: () => [Buffer.alloc(1500, 1)] },
    ]);
    const again = await rxs('import', '--kt', topic, withPicture, '--json');
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const report = JSON.parse(again.stdout);
    expect(report).toMatchObject({ unchanged: sampleRecords.length, created: 0, updated: 0 });
    expect(report.notes).toContain(
      `${withPicture} holds a file besides module.reqif, not imported (the import reads the ReqIF file's values only): images/figure-1.png (1,500 bytes).`,
    );
  });

  it('an archive of two ReqIF files: says which it holds and how to choose; --entry chooses', async () => {
    const plain = join(dir, 'two.reqif');
    expect((await rxs('export', '--kt', topic, '--format', 'reqif', '--out', plain)).code).toBe(0);
    const archive = join(dir, 'two.reqifz');
    await writeZip(archive, [
      { name: 'a.reqif', chunks: () => [readFileSync(plain)] },
      { name: 'b.reqif', chunks: () => [readFileSync(plain)] },
    ]);
    const refused = await rxs('import', '--kt', topic, archive, '--dry-run');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `${archive} is a ReqIF archive holding 2 ReqIF files: "a.reqif", "b.reqif". Say which to import with --entry NAME. Nothing was written.`,
    );
    const chosen = await rxs('import', '--kt', topic, archive, '--entry', 'b.reqif', '--dry-run', '--json');
    expect(chosen.code, chosen.stdout + chosen.stderr).toBe(0);
    expect(JSON.parse(chosen.stdout)).toMatchObject({ unchanged: sampleRecords.length, rejected: 0 });
  });
});
