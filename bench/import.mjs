#!/usr/bin/env node
/**
 * The import benchmark, side by side in one run:
 *   - a real import of IMPORT_ROWS CSV rows (100,000) into the reference topic, end to end, and
 *     `rxs export --format csv` of the same rows, for the ratio of the two;
 *   - `rxs import --dry-run` (every row read, matched and checked against the form: the file read
 *     for its ids, then again for the check) at each size, beside Python's csv
 *     module reading the same file once (the baseline a person would reach for), and its peak
 *     memory, which must stay flat as the file grows (1M rows).
 * Targets: at least 5,000 rows/s written, the import within 3x of the export, the dry run within 5x
 * of Python's csv, at most 250 MB at a million rows.
 *
 * The import runs `rxs import` as users run it (the executable, with the flags its first line gives
 * Node): read, matched, checked and written through `POST /records/bulk`.
 *
 *   npm run bench:import                      # 10k, 100k and 1M rows; the import at 100k
 *   node bench/import.mjs --sizes 100000,1000000 --import-rows 100000
 *   node bench/import.mjs --out bench/out/run # the report there, not in docs/
 *   node bench/import.mjs --smoke             # CI: 1k rows, report in bench/out/smoke/
 */
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createServices, openStorage } from '@rxs/server';
import { benchTenant, loadSamples } from './lib/dataset.mjs';
import { RXS_BIN, ROOT, startRxs } from './lib/servers.mjs';
import { cpuSecondsOf, timedOk } from './lib/processes.mjs';
import { median } from './lib/stats.mjs';

const log = (message) => process.stderr.write(`${message}\n`);
const { values: args } = parseArgs({
  options: {
    smoke: { type: 'boolean' },
    sizes: { type: 'string' },
    'import-rows': { type: 'string' },
    out: { type: 'string' },
  },
});
const smoke = args.smoke === true;
const SIZES = smoke ? [1_000] : (args.sizes?.split(',').map(Number) ?? [10_000, 100_000, 1_000_000]);
/** Rows of the real import (and of the export beside it). */
const IMPORT_ROWS = smoke ? 1_000 : Number(args['import-rows'] ?? 100_000);
/** Two runs a side, one at a million rows (a dry run of a million rows takes minutes). */
const roundsAt = (rows) => (smoke || rows >= 1_000_000 ? 1 : 2);
const work = resolve(ROOT, 'bench/out', smoke ? 'smoke' : 'run', 'import');
/** Where the report goes: docs/ for a full run, unless --out says otherwise. */
const outDir = args.out ? resolve(args.out) : smoke ? work : undefined;
const TARGETS = { rowsPerSecond: 5_000, importOverExport: 3, dryRunOverPython: 5, peakRssMbAtMillion: 250 };

/** A fresh database in `dir` with a tenant and the approved reference topic, open. */
async function openTopic(dir, tenantName) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const storage = await openStorage({ url: join(dir, 'rxs.db') });
  const services = createServices(storage);
  const { topic } = loadSamples();
  const { key, owner } = await benchTenant(services.accounts, tenantName);
  const draft = await services.techdoc.create(owner, {
    knowledge_topic_name: 'System Requirements',
    type: topic.type,
    knowledge_topic_schema: topic.knowledge_topic_schema,
  });
  return {
    storage,
    services,
    owner,
    apiKey: key.key,
    revision: (await services.techdoc.approve(owner, draft._id))._id,
  };
}

async function setUp(dir) {
  const { storage, apiKey, revision } = await openTopic(dir, 'Import bench');
  await storage.close();
  return { apiKey, revision };
}

/**
 * The service's own share of an import: `records` created again through RecordsService.bulkWrite
 * in this process, in a fresh database, in batches of 1,000 with an idempotency key each, as
 * `rxs import` sends them, but with no HTTP, no client and no file. No import can take less.
 */
async function serviceWrites(dir, records) {
  const { storage, services, owner, revision } = await openTopic(dir, 'Import bench, in process');
  try {
    const items = records.map((record, i) => ({
      name: record.name,
      form: record.form,
      data: record.data,
      context: { knowledge_unit_topic_id: revision },
      idempotency_key: `rxs-import-${String(i + 1).padStart(9, '0')}-in-process`,
    }));
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < items.length; i += 1000)
      await services.records.bulkWrite(owner, items.slice(i, i + 1000));
    const used = process.cpuUsage(cpu);
    return { seconds: (performance.now() - start) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
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
      dry.push(
        await timedOk(RXS_BIN, ['import', '--kt', meta.revision, file, '--dry-run', '--json', ...connection]),
      );
    }
    const report = JSON.parse(dry[0].stdout);
    if (report.planned.created !== rows || report.rejected !== 0)
      throw new Error(`dry run of ${rows} rows: ${dry[0].stdout.slice(0, 2000)}`);
    results.push({
      rows,
      dryRunSeconds: median(dry.map((r) => r.seconds)),
      dryRunPeakRssMb: median(dry.map((r) => r.peakRss ?? NaN)) / 2 ** 20,
      pythonSeconds: median(python.map((r) => r.seconds)),
      pythonPeakRssMb: median(python.map((r) => r.peakRss ?? NaN)) / 2 ** 20,
      // CPU time (user + system, GNU time): comparable on a loaded machine, where wall time is not.
      dryRunCpuSeconds: median(dry.map((r) => r.cpuSeconds ?? NaN)),
      pythonCpuSeconds: median(python.map((r) => r.cpuSeconds ?? NaN)),
    });
  }
  // The real import, into the topic the dry runs left empty, then the export of the same rows.
  const file = join(work, `rows-${IMPORT_ROWS}.csv`);
  if (!SIZES.includes(IMPORT_ROWS)) await writeCsv(file, IMPORT_ROWS);
  log(`import: writing ${IMPORT_ROWS} rows (rxs import)`);
  const serverCpuBefore = cpuSecondsOf(rxs.pid);
  const real = await timedOk(RXS_BIN, ['import', '--kt', meta.revision, file, '--json', ...connection]);
  const serverCpu = cpuSecondsOf(rxs.pid) - serverCpuBefore;
  const written = JSON.parse(real.stdout);
  if (written.created !== IMPORT_ROWS)
    throw new Error(`import of ${IMPORT_ROWS} rows: ${real.stdout.slice(0, 2000)}`);
  const exports = [];
  const exportServerCpu = [];
  for (let round = 0; round < roundsAt(IMPORT_ROWS); round++) {
    const out = join(work, 'export.csv');
    const before = cpuSecondsOf(rxs.pid);
    exports.push(
      await timedOk(RXS_BIN, [
        'export',
        '--kt',
        meta.revision,
        '--format',
        'csv',
        '--out',
        out,
        ...connection,
      ]),
    );
    exportServerCpu.push(cpuSecondsOf(rxs.pid) - before);
  }
  // A dry run of the same file into the topic that now holds its rows: each row matched to its
  // record and found unchanged (the topic listed, the file read twice). Shown, not a target.
  const recheck = [];
  for (let round = 0; round < roundsAt(IMPORT_ROWS); round++)
    recheck.push(
      await timedOk(RXS_BIN, ['import', '--kt', meta.revision, file, '--dry-run', '--json', ...connection]),
    );
  const rechecked = JSON.parse(recheck[0].stdout);
  if (rechecked.unchanged !== IMPORT_ROWS)
    throw new Error(`dry run of ${IMPORT_ROWS} imported rows: ${recheck[0].stdout.slice(0, 2000)}`);
  results.recheck = {
    rows: IMPORT_ROWS,
    seconds: median(recheck.map((r) => r.seconds)),
    cpuSeconds: median(recheck.map((r) => r.cpuSeconds ?? NaN)),
    peakRssMb: median(recheck.map((r) => r.peakRss ?? NaN)) / 2 ** 20,
    pythonSeconds: results.find((r) => r.rows === IMPORT_ROWS)?.pythonSeconds,
  };
  // The same records written by the service in this process: the floor of any import's time.
  const listed = await fetch(`${rxs.url}/records/?context__knowledge_unit_topic_id=${meta.revision}`, {
    headers: { 'x-api-key': meta.apiKey },
  });
  if (!listed.ok) throw new Error(`listing the imported records: ${listed.status} ${await listed.text()}`);
  const inProcess = await serviceWrites(join(work, 'in-process-db'), await listed.json());
  results.write = {
    rows: IMPORT_ROWS,
    serviceSeconds: inProcess.seconds,
    serviceCpuSeconds: inProcess.cpuSeconds,
    via: 'rxs import',
    seconds: real.seconds,
    peakRssMb: (real.peakRss ?? NaN) / 2 ** 20,
    exportSeconds: median(exports.map((r) => r.seconds)),
    exportPeakRssMb: median(exports.map((r) => r.peakRss ?? NaN)) / 2 ** 20,
    // CPU seconds (user + system) of the command and of the server while it ran: readable on a
    // loaded machine, where wall times stretch.
    clientCpuSeconds: real.cpuSeconds ?? NaN,
    serverCpuSeconds: serverCpu,
    exportClientCpuSeconds: median(exports.map((r) => r.cpuSeconds ?? NaN)),
    exportServerCpuSeconds: median(exportServerCpu),
  };
} finally {
  await rxs.stop();
}
load.push(loadavg()[0]);

const fmt = (x, d = 2) => (x === null || x === undefined || Number.isNaN(x) ? 'n/a' : x.toFixed(d));
const first = results[0];
const last = results[results.length - 1];
const write = results.write;
const atMillion = results.find((r) => r.rows >= 1_000_000);
const verdict = (ok) => (ok === undefined ? 'not measured' : ok ? '✅ met' : '❌ missed');
const rate = write.rows / write.seconds;
const targets = [
  [
    `Import at least ${TARGETS.rowsPerSecond.toLocaleString('en-US')} rows/s (${write.rows.toLocaleString('en-US')} rows, ${write.via})`,
    `${fmt(rate, 0)} rows/s`,
    verdict(rate >= TARGETS.rowsPerSecond),
  ],
  [
    `Import within ${TARGETS.importOverExport}x of \`rxs export --format csv\` of the same rows`,
    `${fmt(write.seconds)} s / ${fmt(write.exportSeconds)} s = ${fmt(write.seconds / write.exportSeconds, 1)}x`,
    verdict(write.seconds / write.exportSeconds <= TARGETS.importOverExport),
  ],
  // At every size measured: a ratio met for small files only is not met.
  [
    `Dry run within ${TARGETS.dryRunOverPython}x of Python's csv (${results.map((r) => r.rows.toLocaleString('en-US')).join(' and ')} rows)`,
    results
      .map(
        (r) =>
          `${fmt(r.dryRunSeconds / r.pythonSeconds, 1)}x (by CPU time ${fmt(r.dryRunCpuSeconds / r.pythonCpuSeconds, 1)}x)`,
      )
      .join('; '),
    verdict(results.every((r) => r.dryRunSeconds / r.pythonSeconds <= TARGETS.dryRunOverPython)),
  ],
  [
    `Dry run peak memory at most ${TARGETS.peakRssMbAtMillion} MB at 1,000,000 rows`,
    atMillion ? `${fmt(atMillion.dryRunPeakRssMb, 0)} MB` : 'n/a',
    verdict(atMillion && atMillion.dryRunPeakRssMb <= TARGETS.peakRssMbAtMillion),
  ],
];
const generatedAt = new Date().toISOString();
const command = `node bench/import.mjs${smoke ? ' --smoke' : ''}${args.sizes ? ` --sizes ${args.sizes}` : ''}${args['import-rows'] ? ` --import-rows ${args['import-rows']}` : ''}`;
const lines = [
  '# Import benchmark',
  '',
  `Generated by \`${command}\` on ${generatedAt}, on ${cpus().length} cores, load average (1 min) ${load.map((l) => fmt(l, 1)).join(' → ')} (raw figures: [benchmarks/import.json](benchmarks/import.json)). Times are wall times of the whole command; memory is the peak RSS (GNU time).`,
  '',
  '| target | measured | verdict |',
  '| --- | ---: | --- |',
  ...targets.map((row) => `| ${row.join(' | ')} |`),
  '',
  '## Writing',
  '',
  write.via === 'rxs import'
    ? `\`rxs import\` of a CSV of ${write.rows.toLocaleString('en-US')} rows into the empty reference topic, end to end: the file read, matched and checked, then written through \`POST /records/bulk\` (1,000 rows or 4 MiB a batch, two batches in flight, each one transaction of the service), took ${fmt(write.seconds)} s, ${fmt(rate, 0)} rows/s, peak RSS ${fmt(write.peakRssMb, 0)} MB. \`rxs export --format csv\` of the same rows took ${fmt(write.exportSeconds)} s (median of ${roundsAt(write.rows)}), peak RSS ${fmt(write.exportPeakRssMb, 0)} MB.`
    : `A CSV of ${write.rows.toLocaleString('en-US')} rows written into the empty reference topic by \`bench/lib/bulk-driver.mjs\` (the importer's CSV reader and its batch writer, without matching and checking against the form, which \`rxs import\` adds: its dry run below) through \`POST /records/bulk\`, 1,000 rows or 4 MiB a batch, two batches in flight, each one transaction of the service: ${fmt(write.seconds)} s, ${fmt(rate, 0)} rows/s, peak RSS ${fmt(write.peakRssMb, 0)} MB. \`rxs export --format csv\` of the same rows took ${fmt(write.exportSeconds)} s (median of ${roundsAt(write.rows)}), peak RSS ${fmt(write.exportPeakRssMb, 0)} MB.`,
  '',
  `CPU time (user + system): the import ${fmt(write.clientCpuSeconds)} s in \`rxs import\` and ${fmt(write.serverCpuSeconds)} s in the server, ${fmt(write.clientCpuSeconds + write.serverCpuSeconds)} s in all (${fmt(write.rows / (write.clientCpuSeconds + write.serverCpuSeconds), 0)} rows per CPU second); the export ${fmt(write.exportClientCpuSeconds)} s and ${fmt(write.exportServerCpuSeconds)} s, ${fmt(write.exportClientCpuSeconds + write.exportServerCpuSeconds)} s in all (import / export ${fmt((write.clientCpuSeconds + write.serverCpuSeconds) / (write.exportClientCpuSeconds + write.exportServerCpuSeconds), 1)}x).`,
  '',
  `The service's share alone: the same ${write.rows.toLocaleString('en-US')} records created again by the service in process (\`RecordsService.bulkWrite\`, batches of 1,000, each record with its first version and its idempotency key, in a fresh SQLite database; no HTTP, no client, no file) took ${fmt(write.serviceSeconds)} s (CPU ${fmt(write.serviceCpuSeconds)} s), ${fmt(write.serviceSeconds / write.exportSeconds, 1)}x the export: no import of these rows can take less, and \`rxs import\` took ${fmt(write.seconds / write.serviceSeconds, 1)}x that.`,
  '',
  '## Checking (dry run)',
  '',
  `\`rxs import --dry-run\` of CSV files into the empty reference topic (every row read, converted and checked against the form; into an empty topic the file is read once, each row checked as it is read), medians of two runs (one at a million rows), side by side with Python's \`csv.reader\` reading the same file once.`,
  '',
  '| rows | file | `rxs import --dry-run` | Python csv (one read) | rxs / Python | CPU: rxs / Python | rxs peak RSS | Python peak RSS |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...results.map(
    (r) =>
      `| ${r.rows.toLocaleString('en-US')} | ${fmt((r.rows * 190) / 2 ** 20, 0)} MB | ${fmt(r.dryRunSeconds)} s | ${fmt(r.pythonSeconds)} s | ${fmt(r.dryRunSeconds / r.pythonSeconds, 1)}x | ${fmt(r.dryRunCpuSeconds)} s / ${fmt(r.pythonCpuSeconds)} s = ${fmt(r.dryRunCpuSeconds / r.pythonCpuSeconds, 1)}x | ${fmt(r.dryRunPeakRssMb, 0)} MB | ${fmt(r.pythonPeakRssMb, 0)} MB |`,
  ),
  '',
];
if (results.length > 1)
  lines.push(
    `- Memory: ${last.rows / first.rows}x the rows take ${fmt(last.dryRunPeakRssMb / first.dryRunPeakRssMb)}x the peak RSS (${fmt(first.dryRunPeakRssMb, 0)} → ${fmt(last.dryRunPeakRssMb, 0)} MB). The rows are streamed; what grows is one entry per row with a readable id (to refuse a record twice in the file and to find the records to update): about ${fmt(((last.dryRunPeakRssMb - first.dryRunPeakRssMb) * 2 ** 20) / (last.rows - first.rows), 0)} bytes a row.`,
    '',
  );
const recheck = results.recheck;
if (recheck)
  lines.push(
    `- Into a topic that holds the rows (after the import above: every row matched to its record and found unchanged, the topic's ${recheck.rows.toLocaleString('en-US')} records listed for their ids, the file read twice, first for the rows' ids, then for the check, fetching the records each group of rows names), a dry run of the same ${recheck.rows.toLocaleString('en-US')} rows took ${fmt(recheck.seconds)} s${recheck.pythonSeconds ? `, ${fmt(recheck.seconds / recheck.pythonSeconds, 1)}x Python's csv` : ''} (CPU ${fmt(recheck.cpuSeconds)} s), peak RSS ${fmt(recheck.peakRssMb, 0)} MB (shown, not a target).`,
    '',
  );
const figures = {
  date: generatedAt,
  command,
  cores: cpus().length,
  load,
  targets: Object.fromEntries(targets.map(([what, measured, ok]) => [what, { measured, verdict: ok }])),
  dryRuns: results,
  recheck,
  write,
};
const jsonFile = outDir ? join(outDir, 'import.json') : join(ROOT, 'docs/benchmarks/import.json');
const reportFile = outDir ? join(outDir, 'import.md') : join(ROOT, 'docs/benchmarks-import.md');
mkdirSync(dirname(jsonFile), { recursive: true });
writeFileSync(jsonFile, `${JSON.stringify(figures, null, 2)}\n`);
writeFileSync(reportFile, lines.join('\n'));
log(lines.join('\n'));
