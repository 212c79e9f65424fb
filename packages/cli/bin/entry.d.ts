/** The build `rxs` runs for the CLI package at `cliDir` (see entry.js). */
export function chooseEntry(cliDir: URL): URL | undefined;
