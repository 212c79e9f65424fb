#!/usr/bin/env -S node --max-semi-space-size=8 --liftoff-only
// The `rxs` command. A source file, not build output, so that npm links it into node_modules/.bin at
// install time, before the first build. The flags: a young generation of 8 MB instead of V8's
// default 16-32 MB, about 15 MB less peak memory for exports and syncs of any size at the same speed;
// and WebAssembly compiled once, by V8's baseline compiler only: Node parses some module formats and
// fetch parses HTTP with WebAssembly modules, which V8 otherwise compiles again in the background,
// and a process waited for that at exit, 120-170 ms (docs/benchmarks.md).
import { chooseEntry } from './entry.js';

const entry = chooseEntry(new URL('..', import.meta.url));
if (!entry) {
  process.stderr.write('rxs: the command is not built yet. Run `npm run build` in the project first.\n');
  process.exit(1);
}
await import(entry.href);
