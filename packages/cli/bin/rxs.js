#!/usr/bin/env -S node --max-semi-space-size=8 --liftoff-only
// The `rxs` command. A source file, not build output, so that npm links it into node_modules/.bin at
// install time, before the first build. The flags: a young generation of 8 MB instead of V8's
// default 16-32 MB, about 15 MB less peak memory for exports and syncs of any size at the same speed;
// and WebAssembly compiled once, by V8's baseline compiler only: Node's fetch parses HTTP with a
// WebAssembly module, which V8 otherwise compiles again in the background, and a process waits for
// that at exit, 120-170 ms after every command that made a request (docs/benchmarks.md).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/bin.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('rxs: the command is not built yet. Run `npm run build` in the project first.\n');
  process.exit(1);
}
await import(entry.href);
