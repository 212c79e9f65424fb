// Preloaded into `rxs serve` by the load test (node --expose-gc --require memory-probe.cjs):
// on SIGUSR2 the process collects all garbage and prints what is left, so a leak shows as a heap
// that grows from probe to probe, free of the collector's timing.
'use strict';
process.on('SIGUSR2', () => {
  if (typeof global.gc === 'function') global.gc();
  const m = process.memoryUsage();
  process.stdout.write(
    `RXS-MEMORY ${JSON.stringify({ at: Date.now(), heapUsed: m.heapUsed, external: m.external, rss: m.rss })}\n`,
  );
});
