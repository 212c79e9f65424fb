import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const rxsJs = new URL('../bin/rxs.js', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'rxs-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The packages `rxs ARGS` loads, by name, as Node's module loader reports them. */
function packagesLoaded(args: string[]): Set<string> {
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
  const stderr = run.stderr;
  return new Set([...stderr.matchAll(/LOADED .*?node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((m) => m[1]!));
}

/**
 * An unchanged poll is mostly the command's start-up: `rxs export` and `rxs sync` load the sdk's
 * exporter part alone, not the contract's schemas, the importer, form conditions or the server.
 */
describe('rxs start-up', () => {
  it.each([['sync'], ['export']])('rxs %s loads neither TypeBox, nor feelin, nor the server', (command) => {
    const loaded = packagesLoaded([command, '--help']);
    expect(loaded.has('commander')).toBe(true);
    for (const heavy of ['@sinclair/typebox', 'feelin', 'saxes', 'csv-parse', 'exceljs', 'fastify', 'kysely'])
      expect({ command, heavy, loaded: loaded.has(heavy) }).toEqual({ command, heavy, loaded: false });
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
      'history',
      'baseline',
      'admin',
      'migrate-data',
    ])
      expect(help).toMatch(new RegExp(`^  ${command} `, 'm'));
  });
});
