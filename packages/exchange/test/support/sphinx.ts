import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PYTHON } from './spreadsheet-readers.js';

/**
 * Sphinx with the vendored Sphinx-Needs (vendor/sphinx-needs, see its SOURCES.md) under Debian's
 * Python: how the tests build the needs.json exports the way a documentation project does.
 */
const VENDORED = new URL('../vendor/sphinx-needs', import.meta.url).pathname;
export const SPHINX_ENV = { ...process.env, PYTHONPATH: VENDORED, PYTHONDONTWRITEBYTECODE: '1' };

/** Why Sphinx with the vendored Sphinx-Needs cannot run here, or undefined when it can. */
export function missingSphinx(): string | undefined {
  const run = spawnSync(PYTHON, ['-B', '-c', 'import sphinx, sphinx_needs'], {
    encoding: 'utf8',
    env: SPHINX_ENV,
  });
  if (run.status === 0) return undefined;
  return (
    `Sphinx cannot load the vendored Sphinx-Needs under ${PYTHON}: install the Debian packages ` +
    'python3-sphinx python3-jsonschema python3-requests-file (apt-get install --no-install-recommends ' +
    `python3-sphinx python3-jsonschema python3-requests-file), as .ci/run does. ${run.error?.message ?? run.stderr.trim()}`
  );
}

/** Writes a Sphinx project's files (path → text) under `dir`/src, builds it as HTML with -W. */
export function sphinxBuild(
  dir: string,
  files: Record<string, string | Buffer>,
): { out: string; status: number | null; log: string } {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, 'src', path, '..'), { recursive: true });
    writeFileSync(join(dir, 'src', path), text);
  }
  const out = join(dir, 'html');
  const run = spawnSync(
    PYTHON,
    [
      '-B',
      '-m',
      'sphinx',
      '-W',
      '-E',
      '-q',
      '-b',
      'html',
      '-d',
      join(dir, 'doctrees'),
      join(dir, 'src'),
      out,
    ],
    { encoding: 'utf8', env: SPHINX_ENV, maxBuffer: 1 << 26 },
  );
  return { out, status: run.status, log: `${run.error?.message ?? ''}${run.stdout}${run.stderr}` };
}
