import { execFileSync, spawnSync } from 'node:child_process';
import { missingReader, PYTHON } from './spreadsheet-readers.js';

/**
 * Python scripts that edit an export as a person's script does: Debian's python3, its csv module
 * and openpyxl (python3-openpyxl).
 */

/** Whether Debian's python3 imports `module`; a missing one is named with the Debian package that installs it. */
export function missingPythonModule(module: string, debianPackage: string): string | undefined {
  const python = missingReader(PYTHON, 'python3');
  if (python) return python;
  const run = spawnSync(PYTHON, ['-c', `import ${module}`], { encoding: 'utf8' });
  return run.status === 0
    ? undefined
    : `${PYTHON} cannot import ${module}: install the Debian package ${debianPackage} (apt-get install ${debianPackage}), as .ci/run does.`;
}

/** Runs a Python script with arguments; its standard output. */
export function runPython(script: string, ...args: string[]): string {
  return execFileSync(PYTHON, ['-c', script, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
}
