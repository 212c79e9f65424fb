// Which build of the CLI `rxs` runs. A source file beside rxs.js, not build output (see there).
import { statSync } from 'node:fs';

/** Modification time of a file, or undefined when there is none. */
function modified(url) {
  try {
    return statSync(url).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * The module to start, for the CLI package at `cliDir` (a URL ending in `/`): the bundle
 * (dist/bundle/bin.js, made by `npm run build` after compiling; it starts about 0.1 s sooner) when
 * it is newer than every compilation of the CLI and the SDK packages it holds and than the last npm install (the
 * bundle holds copies of the packages it uses), else the compiled modules (dist/bin.js): a
 * `tsc -b` alone, or an install, leaves the bundle behind, and a stale bundle must never run (a
 * tie counts as stale). Undefined when neither is built.
 */
export function chooseEntry(cliDir) {
  const bundle = new URL('dist/bundle/bin.js', cliDir);
  const compiled = new URL('dist/bin.js', cliDir);
  const bundled = modified(bundle);
  if (bundled !== undefined) {
    const later = [
      // The packages the bundle holds copies of (the server stays outside it).
      ...['.', '../contract', '../client', '../exchange', '../sync'].map(
        (dir) => new URL(`${dir}/tsconfig.tsbuildinfo`, cliDir),
      ),
      // npm writes it at every install in the workspace.
      new URL('../../node_modules/.package-lock.json', cliDir),
    ].map(modified);
    if (later.every((time) => time === undefined || time < bundled)) return bundle;
  }
  return modified(compiled) === undefined ? undefined : compiled;
}
