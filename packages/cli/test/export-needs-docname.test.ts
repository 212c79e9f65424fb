import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { runCli } from './run-cli.js';

/**
 * `rxs export --needs-docname`: the Sphinx document every need is shown in, written as each need's
 * `docname` (needs_external_needs links to <base_url>/<docname>.html#<id>); over a mapping file's
 * per-topic `docname`; refused for other formats and for names a link cannot carry.
 */

type NeedsFile = {
  current_version: string;
  versions: Record<string, { needs: Record<string, Record<string, unknown>> }>;
};

describe('rxs export --needs-docname', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let requirements: string;
  let tests: string;
  const exportArgs = (...args: string[]) => [
    'export',
    '--url',
    t.url,
    '--api-key-file',
    keyFile,
    '--quiet',
    '--kt',
    requirements,
    '--kt',
    tests,
    ...args,
  ];
  const docnames = (file: string) => {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as NeedsFile;
    return Object.values(doc.versions[doc.current_version]!.needs).map((need) => [
      need.rxs_topic,
      need.docname,
    ]);
  };

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-needs-docname-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    requirements = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    tests = t.demo.tenant.topics.verificationTests!.currentRevisionId;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes the docname on every need, per topic from the mapping file, and the option's over it", async () => {
    const mapping = join(dir, 'mapping.json');
    writeFileSync(
      mapping,
      JSON.stringify({ topics: [{ name: 'Verification Tests', docname: 'tests/verification' }] }),
    );
    const mapped = join(dir, 'mapped.needs.json');
    const result = await runCli(exportArgs('--mapping', mapping, '--format', 'needs', '--out', mapped));
    expect(result.code, result.stderr).toBe(0);
    expect(docnames(mapped)).toEqual([
      ...Array(4).fill(['System Requirements', undefined]),
      ...Array(4).fill(['Verification Tests', 'tests/verification']),
    ]);

    const out = join(dir, 'all.needs.json');
    const all = await runCli(
      exportArgs(
        '--mapping',
        mapping,
        '--format',
        'needs',
        '--needs-docname',
        'requirements/all',
        '--out',
        out,
      ),
    );
    expect(all.code, all.stderr).toBe(0);
    expect(docnames(out)).toEqual([
      ...Array(4).fill(['System Requirements', 'requirements/all']),
      ...Array(4).fill(['Verification Tests', 'requirements/all']),
    ]);
  });

  it('refuses it with another format, or a name with a suffix or characters a link cannot carry, writing nothing', async () => {
    const out = join(dir, 'refused.out');
    const cases: [string[], RegExp][] = [
      [['--format', 'csv', '--needs-docname', 'reqs'], /--needs-docname goes with --format needs, not csv/],
      [
        ['--format', 'needs', '--needs-docname', 'reqs.rst'],
        /--needs-docname: "reqs.rst" ends in a file suffix.*"reqs"/,
      ],
      [
        ['--format', 'needs', '--needs-docname', 'my reqs'],
        /--needs-docname: "my reqs" is not a Sphinx document name/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(exportArgs(...args, '--out', out));
      expect({ args, code: result.code }).toEqual({ args, code: 1 });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(out)).toBe(false);
    }
  });
});
