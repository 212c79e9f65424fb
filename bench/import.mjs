#!/usr/bin/env node
/**
 * The import benchmark: `rxs import` of CSV files of growing size into the reference
 * topic. A dry run (every row read, matched and checked against the form: two passes over the
 * file) at each size, side by side with Python's csv module reading the same file once (the
 * baseline a person would reach for), and its peak memory, which must stay flat as the file grows;
 * then a real import (creates, four writes in flight) at the smallest size, for its rate.
 *
 *   npm run bench:import                     # 10k, 100k and 1M rows
 *   node bench/import.mjs --sizes 10000,100000 # other sizes
 *   node bench/import.mjs --smoke            # CI: 1k rows, report in bench/out/smoke/
 */
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createServices, openStorage } from '@rxs/server';
import { loadSamples } from './lib/dataset.mjs';
import { RXS_BIN, ROOT, startRxs } from './lib/servers.mjs';
import { timedOk } from './lib/processes.mjs';
import { median } from './lib/stats.mjs';

const log = (message) => process.stderr.write(`${message}\n`);
const smoke = process.argv.includes('--smoke');
const sizesArg = process.argv.indexOf('--sizes');
const SIZES = smoke
  ? [1_000]
  : sizesArg > 0
    ? process.argv[sizesArg + 1].split(',').map(Number)
    : [10_000, 100_000, 1_000_000];
/** Two runs a side, one at a million rows (a dry run of a million rows takes minutes). */
const roundsAt = (rows) => (smoke || rows >= 1_000_000 ? 1 : 2);
const work = resolve(ROOT, 'bench/out', smoke ? 'smoke' : 'run', 'import');

async function setUp(dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const storage = await openStorage({ url: join(dir, 'rxs.db') });
  try {
    const { accounts, techdoc } = createServices(storage);
    const { topic } = loadSamples();
    const tenant = await accounts.createTenant('Import bench');
    const user = await accounts.createUser(tenant.id, { email: 'owner@bench.rxs.local', name: 'Owner', role: 'owner' });
    const key = await accounts.createApiKey(tenant.id, { userId: user.id, name: 'bench' });
    const owner = { tenantId: tenant.id, userId: user.id, role: 'owner' };
    const draft = await techdoc.create(owner, {
      knowledge_topic_name: 'System Requirements',
      type: topic.type,
      knowledge_topic_schema: topic.knowledge_topic_schema,
    });
    return { apiKey: key.key, revision: (await techdoc.approve(owner, draft._id))._id };
  } finally {
    await storage.close();
  }
}

/** A CSV as people bring them: a readable id in the title, text with commas, quotes and line breaks, options, a checklist. */
async function writeCsv(file, rows) {
  const out = createWriteStream(file);
  const priorities = ['low', 'medium', 'high'];
  const areas = ['Equipment', 'Infrastructure', 'Installation of Device'];
  out.write('\uFEFFname,Name,Description,Type,Priority,Requirement concerning,Justification\r\n');
  for (let i = 1; i <= rows; i++) {
    const id = `REQ_${String(i).padStart(7, '0')}`;
    const line =
      `Requirement ${i},${id} — temperature range ${i},"The device shall hold 121 °C ± 2 °C, ""always"".\nCycle ${i}.",functional,` +
      `${priorities[i % 3]},${areas[i % 3]}; ${areas[(i + 1) % 3]},Sterilization efficacy depends on it\r\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

const PYTHON_READ = `import csv,sys
n=0
with open(sys.argv[1],newline='',encoding='utf-8-sig') as f:
    for row in csv.reader(f): n+=1
print(n)`;

const dir = join(work, 'db');
const meta = await setUp(dir);
const keyFile = join(work, 'api.key');
writeFileSync(keyFile, `${meta.apiKey}\n`, { mode: 0o600 });
const rxs = await startRxs({ dataDir: dir, apiKey: meta.apiKey, logFile: join(work, 'rxs.log') });
const connection = ['--url', rxs.url, '--api-key-file', keyFile, '--quiet'];
const results = [];
// The machine's load average (1 min) before and after: these machines are shared.
const load = [loadavg()[0]];
try {
  for (const rows of SIZES) {
    const file = join(work, `rows-${rows}.csv`);
    log(`import: ${rows} rows`);
    await writeCsv(file, rows);
    const dry = [];
    const python = [];
    for (let round = 0; round < roundsAt(rows); round++) {
      python.push(await timedOk('python3', ['-c', PYTHON_READ, file]));
      dry.push(await timedOk(process.execPath, [RXS_BIN, 'import', '--kt', meta.revision, file, '--dry-run', '--json', ...connection]));
    }
    const report = JSON.parse(dry[0].stdout);
    if (report.planned.created !== rows || report.rejected !== 0) throw new Error(`dry run of ${rows} rows: ${dry[0].stdout.slice(0, 2000)}`);
    results.push({
      rows,
      dryRunSeconds: median(dry.map((r) => r.seconds)),
      dryRunPeakRssMb: median(dry.map((r) => r.peakRss ?? NaN)) / 2 ** 20,
      pythonSeconds: median(python.map((r) => r.seconds)),
      pythonPeakRssMb: median(python.map((r) => r.peakRss ?? NaN)) / 2 ** 20,
    });
  }
  const smallest = SIZES[0];
  const real = await timedOk(process.execPath, [RXS_BIN, 'import', '--kt', meta.revision, join(work, `rows-${smallest}.csv`), '--json', ...connection]);
  const report = JSON.parse(real.stdout);
  if (report.created !== smallest) throw new Error(`import of ${smallest} rows: ${real.stdout.slice(0, 2000)}`);
  results.write = { rows: smallest, seconds: real.seconds, peakRssMb: (real.peakRss ?? NaN) / 2 ** 20 };
} finally {
  await rxs.stop();
}
load.push(loadavg()[0]);

const fmt = (x, d = 2) => (x === null || x === undefined || Number.isNaN(x) ? 'n/a' : x.toFixed(d));
const first = results[0];
const last = results[results.length - 1];
const generatedAt = new Date().toISOString();
const lines = [
  '# Import benchmark',
  '',
  `Generated by \`node bench/import.mjs${smoke ? ' --smoke' : ''}\` on ${generatedAt}, on ${cpus().length} cores, load average (1 min) ${load.map((l) => fmt(l, 1)).join(' → ')} (raw figures: [benchmarks/import.json](benchmarks/import.json)): \`rxs import --dry-run\` of CSV files into the reference topic (every row read, matched, converted and checked against the form; the file is read twice), medians of two runs (one at a million rows), side by side with Python's \`csv.reader\` reading the same file once. Times are wall times of the whole command; memory is the peak RSS (GNU time).`,
  '',
  '| rows | file | `rxs import --dry-run` | Python csv (one read) | rxs / Python | rxs peak RSS | Python peak RSS |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...results.map(
    (r) =>
      `| ${r.rows.toLocaleString('en-US')} | ${fmt((r.rows * 190) / 2 ** 20, 0)} MB | ${fmt(r.dryRunSeconds)} s | ${fmt(r.pythonSeconds)} s | ${fmt(r.dryRunSeconds / r.pythonSeconds, 1)}x | ${fmt(r.dryRunPeakRssMb, 0)} MB | ${fmt(r.pythonPeakRssMb, 0)} MB |`,
  ),
  '',
];
if (results.length > 1)
  lines.push(
    `- Memory: ${last.rows / first.rows}x the rows take ${fmt(last.dryRunPeakRssMb / first.dryRunPeakRssMb)}x the peak RSS (${fmt(first.dryRunPeakRssMb, 0)} → ${fmt(last.dryRunPeakRssMb, 0)} MB). The rows are streamed; what grows is one entry per row with a readable id (to refuse a record twice in the file and to find the records to update): about ${fmt(((last.dryRunPeakRssMb - first.dryRunPeakRssMb) * 2 ** 20) / (last.rows - first.rows), 0)} bytes a row.`,
  );
if (results.write)
  lines.push(
    `- Writing: a real import of ${results.write.rows.toLocaleString('en-US')} rows (each a POST with its idempotency key, four in flight) took ${fmt(results.write.seconds)} s, ${fmt(results.write.rows / results.write.seconds, 0)} records/s, peak RSS ${fmt(results.write.peakRssMb, 0)} MB.`,
  );
lines.push('');
const jsonFile = smoke ? join(work, 'results.json') : join(ROOT, 'docs/benchmarks/import.json');
writeFileSync(
  jsonFile,
  `${JSON.stringify({ date: generatedAt, cores: cpus().length, load, dryRuns: results, write: results.write }, null, 2)}\n`,
);
const reportFile = smoke ? join(work, 'import.md') : join(ROOT, 'docs/benchmarks-import.md');
writeFileSync(reportFile, lines.join('\n'));
log(lines.join('\n'));
