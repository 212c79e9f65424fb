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
 * no compilation of the CLI or the SDK came after it, else the compiled modules (dist/bin.js): a
 * `tsc -b` alone leaves the bundle behind the code, and a stale bundle must never run. Undefined
 * when neither is built.
 */
export function chooseEntry(cliDir) {
  const bundle = new URL('dist/bundle/bin.js', cliDir);
  const compiled = new URL('dist/bin.js', cliDir);
  const bundled = modified(bundle);
  if (bundled !== undefined) {
    const compilations = [
      new URL('tsconfig.tsbuildinfo', cliDir),
      new URL('../sdk/tsconfig.tsbuildinfo', cliDir),
    ].map(modified);
    if (compilations.every((time) => time === undefined || time <= bundled)) return bundle;
  }
  return modified(compiled) === undefined ? undefined : compiled;
}
