#!/usr/bin/env node
/**
 * The document benchmark: `rxs export --baseline NAME --traces` of a baseline of 10,000 records with
 * 30,000 traces (the requirements topic of the traceability dataset: each trace has a requirement
 * at one end) as DOCX and PDF, side by side with the XLSX of the same baseline (the baseline of
 * this benchmark), taking turns in each round. Targets: each document in at most 3x the XLSX time
 * and at most 250 MB peak RSS. The machine is shared, so the time target is judged by CPU time
 * (user + system) ratios taken within one round; wall times are shown beside them.
 *
 *   npm run bench:documents             # 10,000 records, 30,000 traces, 3 rounds
 *   node bench/document.mjs --smoke     # CI: 1,000 records, 3,000 traces, one round, report in bench/out/smoke/
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { generateTraceability } from './lib/traceability.mjs';
import { RXS_BIN, ROOT, startRxs } from './lib/servers.mjs';
import { timedOk } from './lib/processes.mjs';
import { median } from './lib/stats.mjs';

const log = (message) => process.stderr.write(`${message}\n`);
const smoke = process.argv.includes('--smoke');
const TIME_TARGET_RATIO = 3;
const MEMORY_TARGET_MB = 250;
const RECORDS = smoke ? 1_000 : 10_000;
const ROUNDS = smoke ? 1 : 3;
const FORMATS = ['xlsx', 'docx', 'pdf'];
const DOCUMENTS = ['docx', 'pdf'];
const BASELINE = 'bench-1.0';
const work = resolve(ROOT, 'bench/out', smoke ? 'smoke' : 'run', 'documents');

async function measure() {
  const dir = join(work, `n${RECORDS}`);
  log(`documents: a baseline of ${RECORDS} records with ${3 * RECORDS} traces`);
  const meta = await generateTraceability(join(dir, 'db'), RECORDS, {
    baseline: { name: BASELINE, topics: ['requirements'] },
  });
  const keyFile = join(dir, 'api.key');
  writeFileSync(keyFile, `${meta.apiKey}\n`, { mode: 0o600 });
  const rxs = await startRxs({
    dataDir: join(dir, 'db'),
    apiKey: meta.apiKey,
    logFile: join(dir, 'rxs.log'),
  });
  const exportOf = (format) => [
    'export',
    '--baseline',
    BASELINE,
    '--format',
    format,
    '--traces',
    '--url',
    rxs.url,
    '--api-key-file',
    keyFile,
    '--quiet',
    '--out',
    join(dir, `baseline.${format}`),
  ];
  const rounds = [];
  const load = [loadavg()[0]];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? FORMATS : [...FORMATS].reverse();
      const figures = {};
      for (const format of order) {
        const run = await timedOk(RXS_BIN, exportOf(format));
        figures[format] = {
          seconds: run.seconds,
          cpuSeconds: run.cpuSeconds ?? null,
          peakRssMb: run.peakRss === undefined ? null : run.peakRss / 2 ** 20,
          bytes: statSync(join(dir, `baseline.${format}`)).size,
        };
        log(
          `  round ${round + 1} ${format}: ${run.seconds.toFixed(1)} s, CPU ${run.cpuSeconds?.toFixed(1) ?? 'n/a'} s, ${figures[format].peakRssMb?.toFixed(0) ?? 'n/a'} MB`,
        );
      }
      rounds.push(figures);
    }
    load.push(loadavg()[0]);
  } finally {
    await rxs.stop();
    rmSync(join(dir, 'db'), { recursive: true, force: true });
  }
  const of = (format, key) => {
    const values = rounds.map((r) => r[format][key]);
    return values.includes(null) ? null : median(values);
  };
  const ratioOf = (format, key) => {
    const values = rounds.map((r) => r[format][key] / r.xlsx[key]);
    return values.some((v) => !Number.isFinite(v)) ? null : median(values);
  };
  const formats = Object.fromEntries(
    FORMATS.map((format) => [
      format,
      {
        seconds: of(format, 'seconds'),
        cpuSeconds: of(format, 'cpuSeconds'),
        peakRssMb: of(format, 'peakRssMb'),
        maxPeakRssMb: rounds.some((r) => r[format].peakRssMb === null)
          ? null
          : Math.max(...rounds.map((r) => r[format].peakRssMb)),
        bytes: rounds[0][format].bytes,
        ...(format === 'xlsx'
          ? {}
          : { ratio: ratioOf(format, 'seconds'), cpuRatio: ratioOf(format, 'cpuSeconds') }),
      },
    ]),
  );
  return { records: RECORDS, traces: 3 * RECORDS, rounds: rounds.length, load, formats, runs: rounds };
}

const result = await measure();
const fmt = (x, d = 2) => (x === null || x === undefined ? 'n/a' : x.toFixed(d));
const mb = (x) => (x === null ? 'n/a' : `${fmt(x, 0)} MB`);
const verdicts = Object.fromEntries(
  DOCUMENTS.map((format) => {
    const f = result.formats[format];
    return [
      format,
      {
        time: f.cpuRatio === null ? null : f.cpuRatio <= TIME_TARGET_RATIO,
        memory: f.maxPeakRssMb === null ? null : f.maxPeakRssMb <= MEMORY_TARGET_MB,
      },
    ];
  }),
);
const met = (ok) => (ok === null ? 'not measured' : ok ? '**met**' : '**missed**');
const generatedAt = new Date().toISOString();
const lines = [
  '# Document benchmark',
  '',
  `Generated by \`node bench/document.mjs${smoke ? ' --smoke' : ''}\` on ${generatedAt}, on ${cpus().length} cores (raw figures: [benchmarks/documents.json](benchmarks/documents.json)). \`rxs export --baseline ${BASELINE} --traces --format xlsx|docx|pdf\` of a proposed baseline of ${result.records} records with ${result.traces} traces (the requirements topic of the traceability benchmark's data: each trace has a requirement at one end, a test at the other), the three formats taking turns in each of ${result.rounds} rounds. The XLSX export of the same baseline is the baseline of the comparison.`,
  '',
  `These machines are shared: wall times depend on what else runs (load average ${result.load.map((l) => fmt(l, 1)).join(' → ')} on ${cpus().length} cores), so the time target is judged by the CPU time of the command (user + system, GNU time) as a ratio to the XLSX export's CPU time in the same round, the median over the rounds. Times are of the whole command, start-up included; memory is peak RSS (GNU time), the largest of the rounds.`,
  '',
  '| format | wall time | CPU time | wall / XLSX | CPU / XLSX | peak RSS (max) | file size |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...FORMATS.map((format) => {
    const f = result.formats[format];
    const ratios = format === 'xlsx' ? ['1x', '1x'] : [`${fmt(f.ratio)}x`, `${fmt(f.cpuRatio)}x`];
    return `| ${format.toUpperCase()} | ${fmt(f.seconds)} s | ${fmt(f.cpuSeconds)} s | ${ratios.join(' | ')} | ${mb(f.maxPeakRssMb)} | ${fmt(f.bytes / 2 ** 20, 1)} MB |`;
  }),
  '',
  ...DOCUMENTS.map((format) => {
    const f = result.formats[format];
    return `- ${format.toUpperCase()}: at most ${TIME_TARGET_RATIO}x the XLSX time: ${fmt(f.cpuRatio)}x by CPU time (${fmt(f.ratio)}x by wall time), ${met(verdicts[format].time)}; at most ${MEMORY_TARGET_MB} MB: ${mb(f.maxPeakRssMb)}, ${met(verdicts[format].memory)}.`;
  }),
  '',
];
mkdirSync(work, { recursive: true });
const jsonFile = smoke ? join(work, 'results.json') : join(ROOT, 'docs/benchmarks/documents.json');
writeFileSync(
  jsonFile,
  `${JSON.stringify(
    {
      date: generatedAt,
      cores: cpus().length,
      targets: { timeRatio: TIME_TARGET_RATIO, peakRssMb: MEMORY_TARGET_MB },
      verdicts,
      ...result,
    },
    null,
    2,
  )}\n`,
);
const reportFile = smoke ? join(work, 'documents.md') : join(ROOT, 'docs/benchmarks-documents.md');
writeFileSync(reportFile, lines.join('\n'));
log(lines.join('\n'));
