/**
 * Preloaded into a timed command (`NODE_OPTIONS=--import <this file>`, with RXS_BENCH_HEAP_FILE set):
 * samples `process.memoryUsage()` every 50 ms and, on exit, writes the peaks as JSON to that file.
 * Heap in use (`heapUsed` + `external`, which holds Buffers and ArrayBuffers) is the live data, next
 * to RSS, which also counts V8's heap slack and freed pages the allocator has not returned yet.
 * Benchmark only: nothing in the product loads it.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.RXS_BENCH_HEAP_FILE;
if (file) {
  const peak = { heapInUse: 0, heapUsed: 0, external: 0, heapTotal: 0, rss: 0, samples: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak.heapInUse = Math.max(peak.heapInUse, m.heapUsed + m.external);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.external = Math.max(peak.external, m.external);
    peak.heapTotal = Math.max(peak.heapTotal, m.heapTotal);
    peak.rss = Math.max(peak.rss, m.rss);
    peak.samples++;
  };
  // Unref'd: the sampler never keeps the command alive.
  setInterval(sample, 50).unref();
  process.once('exit', () => {
    sample();
    writeFileSync(file, `${JSON.stringify(peak)}\n`);
  });
}
