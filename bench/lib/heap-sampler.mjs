/**
 * Preloaded into a timed command (`NODE_OPTIONS=--import <this file>`, with RXS_BENCH_HEAP_FILE set):
 * samples `process.memoryUsage()` every 50 ms and, on exit, writes the peaks as JSON to that file.
 * Heap in use (`heapUsed` + `external`, which holds Buffers and ArrayBuffers) is what the process
 * holds, next to RSS, which also counts V8's heap slack and freed pages the allocator kept. It still
 * counts garbage not collected yet; with RXS_BENCH_HEAP_LIVE=1 each sample follows a
 * full collection (every 100 ms), so the peak is the live data (that run is slower: not for timing).
 * Benchmark only: nothing in the product loads it.
 */
import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const file = process.env.RXS_BENCH_HEAP_FILE;
const live = process.env.RXS_BENCH_HEAP_LIVE === '1';
if (file) {
  const peak = { heapInUse: 0, heapUsed: 0, external: 0, rss: 0, samples: 0 };
  let collect = () => {};
  if (live) {
    // The documented way to reach gc() without starting node with --expose-gc.
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc');
  }
  const sample = () => {
    collect();
    const m = process.memoryUsage();
    peak.heapInUse = Math.max(peak.heapInUse, m.heapUsed + m.external);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.external = Math.max(peak.external, m.external);
    peak.rss = Math.max(peak.rss, m.rss);
    peak.samples++;
  };
  // Unref'd: the sampler never keeps the command alive.
  setInterval(sample, live ? 100 : 50).unref();
  process.once('exit', () => {
    sample();
    writeFileSync(file, `${JSON.stringify(peak)}\n`);
  });
}
