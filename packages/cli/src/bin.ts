#!/usr/bin/env -S node --max-semi-space-size=8
// A young generation of 8 MB instead of V8's default 16-32 MB: about 20 MB less peak memory for
// exports and syncs of any size, at the same speed (docs/benchmarks.md).
import { run } from './program.js';

void run(process.argv);
