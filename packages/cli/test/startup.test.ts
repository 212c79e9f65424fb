import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const rxsJs = new URL('../bin/rxs.js', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'rxs-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The packages `rxs ARGS` loads, by name: those Node's module loader reports loading from
 * node_modules, and those inside the bundle's files it loads (the bundler names each module it
 * took in a comment, `// ../../node_modules/<package>/...`). And the files it loaded.
 */
function packagesLoaded(args: string[]): Set<string> & { files: string[] } {
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    "export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write(`LOADED ${url}\\n`); return next(url, context); }\n",
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`,
  );
  const run = spawnSync(process.execPath, ['--import', register, rxsJs.pathname, ...args], {
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  const files = [...run.stderr.matchAll(/^LOADED (\S+)$/gm)].map((m) => m[1]!);
  const packages = new Set<string>();
  const inNodeModules = /node_modules\/((?:@[^/]+\/)?[^/]+)\//g;
  for (const file of files) {
    for (const m of file.matchAll(inNodeModules)) packages.add(m[1]!);
    if (file.includes('/dist/bundle/')) {
      const taken = readFileSync(fileURLToPath(file), 'utf8').match(/^\/\/ \S*node_modules\/\S+$/gm) ?? [];
      for (const comment of taken) for (const m of comment.matchAll(inNodeModules)) packages.add(m[1]!);
    }
  }
  return Object.assign(packages, { files });
}

/**
 * An unchanged poll is mostly the command's start-up: `rxs export` and `rxs sync` load the sdk's
 * exporter part alone, not the contract's schemas, the importer, form conditions or the server.
 */
describe('rxs start-up', () => {
  it.each([['sync'], ['export']])('rxs %s loads neither TypeBox, nor feelin, nor the server', (command) => {
    const loaded = packagesLoaded([command, '--help']);
    expect(loaded.has('commander')).toBe(true);
    for (const heavy of ['@sinclair/typebox', 'feelin', 'saxes', 'exceljs', 'fastify', 'kysely'])
      expect({ command, heavy, loaded: loaded.has(heavy) }).toEqual({ command, heavy, loaded: false });
  });

  it('rxs import loads the row import alone: no TypeBox, no FEEL, no XML reader, no export, no server', () => {
    const loaded = packagesLoaded(['import', '--help']);
    expect(loaded.has('commander')).toBe(true);
    // TypeBox: the ReqIF relation types; feelin (with its date library): a form's conditions;
    // saxes and exceljs: XLSX and ReqIF files; sync: the export command; the server: never.
    for (const heavy of [
      '@sinclair/typebox',
      'feelin',
      'temporal-polyfill',
      'saxes',
      'xmlchars',
      'exceljs',
      'fastify',
      'kysely',
    ])
      expect({ heavy, loaded: loaded.has(heavy) }).toEqual({ heavy, loaded: false });
    const withSync = loaded.files.filter(
      (file) =>
        file.includes('/dist/bundle/') &&
        /^\/\/ \.\.\/sync\/dist\//m.test(readFileSync(fileURLToPath(file), 'utf8')),
    );
    expect(withSync).toEqual([]);
  });

  it.each([['import'], ['trace-report'], ['export']])(
    'rxs %s loads no document renderer (pdfkit, fontkit) until it writes a document',
    (command) => {
      const loaded = packagesLoaded([command, '--help']);
      for (const heavy of ['pdfkit', 'fontkit'])
        expect({ command, heavy, loaded: loaded.has(heavy) }).toEqual({ command, heavy, loaded: false });
    },
  );

  it('runs the bundle the build made, which holds the packages it needs', () => {
    const loaded = packagesLoaded(['sync', '--help']);
    expect(loaded.files.some((file) => file.endsWith('/packages/cli/dist/bundle/bin.js'))).toBe(true);
    expect(loaded.files.some((file) => file.endsWith('/packages/cli/dist/bin.js'))).toBe(false);
    for (const needed of ['commander', 'csv-stringify', 'stream-json']) expect(loaded.has(needed)).toBe(true);
  });

  it('rxs --help still lists every command', () => {
    const help = execFileSync(process.execPath, [rxsJs.pathname, '--help'], { encoding: 'utf8' });
    for (const command of [
      'serve',
      'export',
      'sync',
      'kt',
      'record',
      'import',
      'trace',
      'trace-report',
      'trace-model',
      'history',
      'baseline',
      'admin',
      'migrate-data',
    ])
      expect(help).toMatch(new RegExp(`^  ${command} `, 'm'));
  });
});
