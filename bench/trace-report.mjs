#!/usr/bin/env node
/**
 * The traceability benchmark: 10,000 requirements, 20,000 tests and 30,000 traces
 * between them; `rxs trace-report` (HTML, the heaviest: the matrix is over its limit, so links are
 * listed) side by side with the plain `rxs export --traces` of the same two topics, taking turns
 * (A B B A), and the same at a tenth of the size to show how memory grows. Targets: the report in
 * under 10 s, and its memory no more than the export's (which streams) plus the ids it must hold.
 *
 *   npm run bench:traces                 # 10k / 20k / 30k, and a tenth of that
 *   node bench/trace-report.mjs --smoke  # CI: 1k / 2k / 3k, one round, report in bench/out/smoke/
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { generateTraceability } from './lib/traceability.mjs';
import { RXS_BIN, ROOT, startRxs } from './lib/servers.mjs';
import { timedOk } from './lib/processes.mjs';
import { median } from './lib/stats.mjs';

const log = (message) => process.stderr.write(`${message}\n`);
const smoke = process.argv.includes('--smoke');
const REPORT_TARGET_SECONDS = 10;
/**
 * Flat memory: the report's live JS heap grows by at most this per trace and record, what it must
 * hold: a record's id and readable id (about 80 bytes), a map entry and a few integers, and a row
 * of numbers per edge listed (a trace is listed with both its ends).
 */
const FLAT_BYTES_PER_TRACE = 400;
/** And by the peak heap in use (garbage included): 10x the graph within this factor of 1x. */
const FLAT_PEAK_RATIO = 1.5;
const SCALES = smoke ? [1_000] : [1_000, 10_000];
const ROUNDS = smoke ? 1 : 3;
const work = resolve(ROOT, 'bench/out', smoke ? 'smoke' : 'run', 'traces');
// Samples the command's heap in use (heapUsed + external) beside its RSS; see lib/heap-sampler.mjs.
const HEAP_SAMPLER = resolve(ROOT, 'bench/lib/heap-sampler.mjs');

/**
 * One `rxs` run, as users run it (the executable, with its shebang's flags): wall time, peak RSS
 * and peak heap in use; with `live`, a run sampling after full collections (slower, not timed).
 */
async function timedRxs(args, heapFile, live = false) {
  rmSync(heapFile, { force: true });
  const env = {
    NODE_OPTIONS: `--import ${HEAP_SAMPLER}`,
    RXS_BENCH_HEAP_FILE: heapFile,
    RXS_BENCH_HEAP_LIVE: live ? '1' : '0',
  };
  const run = await timedOk(RXS_BIN, args, { env });
  const heap = JSON.parse(readFileSync(heapFile, 'utf8'));
  rmSync(heapFile, { force: true });
  return { seconds: run.seconds, peakRss: run.peakRss, peakHeap: heap.heapInUse, peakJsHeap: heap.heapUsed };
}

async function measureScale(n) {
  const dir = join(work, `n${n}`);
  log(`traceability: ${n} requirements, ${2 * n} tests, ${3 * n} traces`);
  const meta = await generateTraceability(join(dir, 'db'), n);
  const keyFile = join(dir, 'api.key');
  writeFileSync(keyFile, `${meta.apiKey}\n`, { mode: 0o600 });
  const rxs = await startRxs({
    dataDir: join(dir, 'db'),
    apiKey: meta.apiKey,
    logFile: join(dir, 'rxs.log'),
  });
  const common = [
    '--kt',
    meta.requirements,
    '--kt',
    meta.tests,
    '--url',
    rxs.url,
    '--api-key-file',
    keyFile,
    '--quiet',
  ];
  const sides = {
    export: ['export', ...common, '--traces', '--format', 'json', '--out', join(dir, 'export.json')],
    report: ['trace-report', ...common, '--format', 'html', '--out', join(dir, 'trace.html')],
  };
  const figures = { export: [], report: [] };
  const live = {};
  const load = [loadavg()[0]];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order =
        round % 2 === 0 ? ['export', 'report', 'report', 'export'] : ['report', 'export', 'export', 'report'];
      for (const side of ROUNDS === 1 ? ['export', 'report'] : order) {
        figures[side].push(await timedRxs(sides[side], join(dir, `${side}.heap.json`)));
      }
    }
    for (const side of ['export', 'report'])
      live[side] = await timedRxs(sides[side], join(dir, `${side}.live.json`), true);
    load.push(loadavg()[0]);
  } finally {
    await rxs.stop();
    rmSync(join(dir, 'db'), { recursive: true, force: true });
  }
  const summary = (side) => ({
    seconds: median(figures[side].map((f) => f.seconds)),
    peakRssMb:
      figures[side][0].peakRss === undefined ? null : median(figures[side].map((f) => f.peakRss)) / 2 ** 20,
    peakHeapMb: median(figures[side].map((f) => f.peakHeap)) / 2 ** 20,
    liveHeapMb: live[side].peakHeap / 2 ** 20,
    liveJsHeapMb: live[side].peakJsHeap / 2 ** 20,
  });
  return {
    requirements: n,
    tests: 2 * n,
    traces: 3 * n,
    runs: figures.report.length,
    load,
    export: summary('export'),
    report: summary('report'),
  };
}

const results = [];
for (const n of SCALES) results.push(await measureScale(n));
const largest = results[results.length - 1];
const smallest = results[0];
const fmt = (x, d = 2) => (x === null || x === undefined ? 'n/a' : x.toFixed(d));
const mb = (x) => `${fmt(x, 0)} MB`;
const generatedAt = new Date().toISOString();
const jsonFile = smoke ? join(work, 'results.json') : join(ROOT, 'docs/benchmarks/traceability.json');
const lines = [
  '# Traceability benchmark',
  '',
  `Generated by \`node bench/trace-report.mjs${smoke ? ' --smoke' : ''}\` on ${generatedAt}, on ${cpus().length} cores (raw figures: [benchmarks/traceability.json](benchmarks/traceability.json)). Each row: medians of ${largest.runs} runs per side, the sides taking turns. Times are wall times of the whole command (start-up included), with the machine's load average (1 minute) before and after each size: these machines are shared, and a load above the core count slows every figure.`,
  '',
  '| requirements | tests | traces | `rxs export --traces` (JSON) | `rxs trace-report` (HTML) | report / export | load average |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...results.map(
    (r) =>
      `| ${r.requirements} | ${r.tests} | ${r.traces} | ${fmt(r.export.seconds)} s | ${fmt(r.report.seconds)} s | ${fmt(r.report.seconds / r.export.seconds)}x | ${r.load.map((l) => fmt(l, 1)).join(' → ')} |`,
  ),
  '',
  'Memory of the `rxs` process: peak RSS (GNU time); peak heap in use, `heapUsed + external` of `process.memoryUsage()` sampled every 50 ms in the timed runs (`bench/lib/heap-sampler.mjs`, preloaded), which counts garbage not yet collected; and the live heap, the same sampled right after a full collection every 100 ms in one more run per side (what the process holds), with its JS part (`heapUsed`; `external` is mostly the answers being read).',
  '',
  '| traces | command | peak RSS | peak heap in use | live heap | live JS heap |',
  '| ---: | --- | ---: | ---: | ---: | ---: |',
  ...results.flatMap((r) =>
    [
      ['`rxs export --traces`', r.export],
      ['`rxs trace-report`', r.report],
    ].map(
      ([name, m]) =>
        `| ${r.traces} | ${name} | ${mb(m.peakRssMb)} | ${mb(m.peakHeapMb)} | ${mb(m.liveHeapMb)} | ${mb(m.liveJsHeapMb)} |`,
    ),
  ),
  '',
  `- Target: the report of ${largest.requirements} requirements, ${largest.tests} tests and ${largest.traces} traces in under ${REPORT_TARGET_SECONDS} s: ${fmt(largest.report.seconds)} s, ${largest.report.seconds < REPORT_TARGET_SECONDS ? '**met**' : '**missed**'}.`,
];
if (results.length > 1) {
  const times = largest.requirements / smallest.requirements;
  // Each trace comes with one record in this graph (n + 2n records, 3n traces): growth per both.
  const perTrace = (side, key) =>
    ((side(largest)[key] - side(smallest)[key]) * 2 ** 20) / (largest.traces - smallest.traces);
  const ratio = (side, key) => fmt(side(largest)[key] / side(smallest)[key]);
  const growth = (side) =>
    `live JS heap ${ratio(side, 'liveJsHeapMb')}x (${fmt(perTrace(side, 'liveJsHeapMb'), 0)} bytes more per trace and record), live heap ${ratio(side, 'liveHeapMb')}x, peak heap in use ${ratio(side, 'peakHeapMb')}x, peak RSS ${ratio(side, 'peakRssMb')}x`;
  const report = (r) => r.report;
  const exported = (r) => r.export;
  const flat = perTrace(report, 'liveJsHeapMb') <= FLAT_BYTES_PER_TRACE;
  lines.push(
    `- Memory, ${times}x the data: the report's ${growth(report)}; the export's ${growth(exported)}.`,
    `- Flat memory, taken as: the report's live JS heap grows by at most ${FLAT_BYTES_PER_TRACE} bytes per trace and record, what it must hold (each record's id and readable id, about 80 bytes, a map entry and a few integers; a row of numbers per edge listed, and a trace is listed with both its ends), never a record, an edge or a trace object: ${flat ? '**flat**' : '**not flat**'}. By the peak heap in use, which counts garbage, the report takes ${ratio(report, 'peakHeapMb')}x for ${times}x the data: ${largest.report.peakHeapMb / smallest.report.peakHeapMb <= FLAT_PEAK_RATIO ? 'flat' : 'not flat'} by that measure (flat: within ${FLAT_PEAK_RATIO}x).`,
    '- The peak heap in use and the peak RSS grow more than the live heap: between full collections V8 lets the heap reach about four times its live data (`node --trace-gc`), and a batch of the trace listing (500 records) answers about 4 MB of JSON, four batches at a time. Both are room and answers in flight, not data kept; a longer run collects less often, so they grow with the run, not with what the report holds.',
  );
}
lines.push('');
mkdirSync(work, { recursive: true });
writeFileSync(
  jsonFile,
  `${JSON.stringify({ date: generatedAt, cores: cpus().length, targetSeconds: REPORT_TARGET_SECONDS, scales: results }, null, 2)}\n`,
);
const reportFile = smoke ? join(work, 'traceability.md') : join(ROOT, 'docs/benchmarks-traceability.md');
writeFileSync(reportFile, lines.join('\n'));
log(lines.join('\n'));
