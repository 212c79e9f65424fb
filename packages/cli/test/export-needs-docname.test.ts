import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';
import { useDemoExport } from './support/demo-export.js';

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
  const demo = useDemoExport('rxs-needs-docname-');
  const { exportArgs } = demo;
  const docnames = (file: string) => {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as NeedsFile;
    return Object.values(doc.versions[doc.current_version]!.needs).map((need) => [
      need.rxs_topic,
      need.docname,
    ]);
  };

  it("writes the docname on every need, per topic from the mapping file, and the option's over it", async () => {
    const mapping = join(demo.dir, 'mapping.json');
    writeFileSync(
      mapping,
      JSON.stringify({ topics: [{ name: 'Verification Tests', docname: 'tests/verification' }] }),
    );
    const mapped = join(demo.dir, 'mapped.needs.json');
    const result = await runCli(exportArgs('--mapping', mapping, '--format', 'needs', '--out', mapped));
    expect(result.code, result.stderr).toBe(0);
    expect(docnames(mapped)).toEqual([
      ...Array(4).fill(['System Requirements', undefined]),
      ...Array(4).fill(['Verification Tests', 'tests/verification']),
    ]);

    const out = join(demo.dir, 'all.needs.json');
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
    const out = join(demo.dir, 'refused.out');
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
