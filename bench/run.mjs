#!/usr/bin/env node
/**
 * The RXS benchmark: generates data, runs every measurement against its baselines
 * in the same run, and writes the report (Markdown with a table per measurement, targets met or
 * missed, an SVG chart) and the raw figures as JSON. See bench/README.md.
 *
 *   npm run bench                                   # 10k and 100k records, a few minutes
 *   npm run bench -- --sizes 10000,100000,1000000   # and 1M
 *   npm run bench:smoke                             # CI: 1000 records, report in bench/out/smoke/
 */
import { execFileSync } from 'node:child_process';
import { constants } from 'node:buffer';
import { cpus, loadavg, totalmem, release } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { copyDataset, createBody, ensureDataset, loadSamples } from './lib/dataset.mjs';
import { parseOptions, runsFor, slowRunsFor, USAGE } from './lib/options.mjs';
import { ROOT, startJsonServer, startLimitServer, startRxs, writeJsonServerDb } from './lib/servers.mjs';
import { GNU_TIME, timedOk } from './lib/processes.mjs';
import { measureListing } from './measure/listing.mjs';
import { measureListingPostgres } from './measure/listing-postgres.mjs';
import { measureExport } from './measure/export.mjs';
import { measureSync } from './measure/sync.mjs';
import { measureLookups, measureWrites } from './measure/load.mjs';
import { measureHistoryCost } from './measure/history.mjs';
import { ensureBaselineDataset, prepareHistoryBaseline } from './lib/baseline.mjs';
import { writeReport } from './lib/report.mjs';

const { MAX_STRING_LENGTH } = constants;
const log = (message) => process.stderr.write(`${message}\n`);

function version(command, args, pattern = /[\d.]+/) {
  try {
    return pattern.exec(
      execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    )?.[0];
  } catch {
    return undefined;
  }
}

function environment() {
  const pkg = (name) =>
    JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  let commit;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'packages'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    if (dirty) commit += ' (packages/ with uncommitted changes)';
  } catch {
    commit = undefined;
  }
  return {
    date: new Date().toISOString(),
    commit,
    cpu: cpus()[0]?.model?.trim(),
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    curl: version('curl', ['--version']),
    jq: version('jq', ['--version']),
    jsonServer: pkg('json-server'),
    autocannon: pkg('autocannon'),
    betterSqlite3: pkg('better-sqlite3'),
    gnuTime: !!GNU_TIME,
  };
}

/** Runs `work`, recording its result or its failure under `key` of `into`. */
async function step(into, key, work, failures) {
  const started = Date.now();
  try {
    into[key] = await work();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    into[key] = { error: message };
    failures.push(`${key}: ${message}`);
    log(`  ${key} FAILED: ${message}`);
  }
  log(`  ${key}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function benchSize(size, options, failures) {
  const runs = runsFor(options);
  const slowRuns = slowRunsFor(options, size);
  const work = resolve(options.work);
  const cacheDir = join(work, 'cache', `n${size}`);
  const dir = join(work, 'run', `n${size}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'db'), { recursive: true });
  mkdirSync(join(dir, 'json-server'), { recursive: true });
  mkdirSync(join(dir, 'logs'), { recursive: true });

  log(`\n${size} records`);
  const generationStart = Date.now();
  if (options.fresh) rmSync(cacheDir, { recursive: true, force: true });
  const meta = await ensureDataset(cacheDir, size, log);
  copyDataset(cacheDir, join(dir, 'db'));
  log(
    `  dataset ready in ${((Date.now() - generationStart) / 1000).toFixed(1)} s (generated in ${meta.generatedInSeconds.toFixed(1)} s)`,
  );

  // The key goes to the CLI in a file and to curl as a header file, never on a command line.
  const keyFile = join(dir, 'api.key');
  const headerFile = join(dir, 'headers.txt');
  writeFileSync(keyFile, `${meta.apiKey}\n`, { mode: 0o600 });
  writeFileSync(headerFile, `X-API-Key: ${meta.apiKey}\n`, { mode: 0o600 });

  // The machine's load average (1 min) at the start and end of this size: how noisy it was.
  const result = { size, runs, slowRuns, loadAverage: { start: loadavg()[0] } };
  const rxs = await startRxs({
    dataDir: join(dir, 'db'),
    apiKey: meta.apiKey,
    logFile: join(dir, 'logs', 'rxs.log'),
  });
  try {
    // The listing once, as served: the bytes of the limit server and json-server's records.
    const listingFile = join(dir, 'listing.json');
    await timedOk('curl', [
      '-sS',
      '--fail',
      '-o',
      listingFile,
      '-H',
      `@${headerFile}`,
      `${rxs.url}/records/?context__knowledge_unit_topic_id=${meta.revisionId}`,
    ]);
    const ktFile = join(dir, 'kt.json');
    await timedOk('curl', [
      '-sS',
      '--fail',
      '-o',
      ktFile,
      '-H',
      `@${headerFile}`,
      `${rxs.url}/kt/${meta.revisionId}`,
    ]);
    result.listingBytes = statSync(listingFile).size;
    result.bytesPerRecord = result.listingBytes / size;
    const jsonServerDb = await writeJsonServerDb(listingFile, join(dir, 'json-server'));

    // json-server reads db.json into one string: past V8's string limit it cannot start at all.
    const jsonServer = async (source, name) => {
      const bytes = statSync(jsonServerDb.dbFile).size;
      if (bytes > MAX_STRING_LENGTH) {
        const why =
          `json-server reads its database into one string, and ${(bytes / 1e6).toFixed(0)} MB of JSON is past ` +
          `V8's string limit (${(MAX_STRING_LENGTH / 1e6).toFixed(0)} M characters, ERR_STRING_TOO_LONG)`;
        log(`  json-server cannot serve ${size} records: ${why}`);
        return { unavailable: why };
      }
      try {
        return await startJsonServer({
          source,
          dir: join(dir, 'json-server'),
          logFile: join(dir, 'logs', `${name}.log`),
        });
      } catch (error) {
        log(`  json-server could not serve ${size} records: ${error.message}`);
        return { unavailable: error.message };
      }
    };

    // The transfer-limit server (the listing's bytes from memory) serves the listing and export.
    const limit =
      options.only.includes('listing') || options.only.includes('export')
        ? await startLimitServer({ file: listingFile, logFile: join(dir, 'logs', 'limit.log') })
        : undefined;
    try {
      if (options.only.includes('listing')) {
        await step(
          result,
          'listing',
          async () => {
            const js = await jsonServer(jsonServerDb.dbFile, 'json-server-listing');
            // The same database, every listing built from it: what the first listing after a change costs.
            const rxsBuilt = await startRxs({
              dataDir: join(dir, 'db'),
              apiKey: meta.apiKey,
              logFile: join(dir, 'logs', 'rxs-built.log'),
              extraArgs: ['--listing-cache-mb', '0'],
            });
            try {
              const measured = await measureListing({
                rxs,
                rxsBuilt,
                limit,
                jsonServer: js.unavailable ? undefined : js,
                revisionId: meta.revisionId,
                headerFile,
                runs,
                log,
              });
              if (js.unavailable) measured.jsonServerUnavailable = js.unavailable;
              return measured;
            } finally {
              await rxsBuilt.stop();
              if (!js.unavailable) await js.stop();
            }
          },
          failures,
        );
      }

      if (options.only.includes('listing') && options.postgres) {
        await step(
          result,
          'listingPostgres',
          () =>
            measureListingPostgres({
              adminUrl: options.postgres,
              sqliteFile: join(cacheDir, 'rxs.db'),
              meta,
              size,
              headerFile,
              dir,
              runs,
              log,
            }),
          failures,
        );
      }

      if (options.only.includes('export')) {
        await step(
          result,
          'export',
          () =>
            measureExport({
              rxs,
              limit,
              revisionId: meta.revisionId,
              size,
              keyFile,
              headerFile,
              ktFile,
              workDir: dir,
              runs,
              jqRuns: slowRuns,
              log,
            }),
          failures,
        );
      }
    } finally {
      await limit?.stop();
    }

    if (options.only.includes('sync')) {
      await step(
        result,
        'sync',
        () =>
          measureSync({
            rxs,
            revisionId: meta.revisionId,
            size,
            keyFile,
            apiKey: meta.apiKey,
            changeIds: meta.changeIds,
            workDir: dir,
            runs: slowRuns,
            log,
          }),
        failures,
      );
    }

    if (options.only.includes('lookups')) {
      await step(
        result,
        'lookups',
        () =>
          measureLookups({
            rxs,
            revisionId: meta.revisionId,
            recordIds: meta.sampleIds,
            apiKey: meta.apiKey,
            connections: options.lookupConnections,
            seconds: options.loadSeconds,
            runs: options.loadRuns,
            log,
          }),
        failures,
      );
    }

    if (options.only.includes('writes')) {
      await step(
        result,
        'writes',
        async () => {
          // json-server on db.json rewrites the whole file per write and keeps working through its
          // queue long after a load run ends: it is started afresh for every run instead of waited for.
          const targets = [
            { name: 'rxs', path: '/records/', server: rxs },
            {
              name: 'jsonServer',
              path: '/records',
              start: () => jsonServer(jsonServerDb.dbFile, 'json-server-writes'),
              perRun: true,
            },
            {
              name: 'jsonServerMemory',
              path: '/records',
              start: () => jsonServer(jsonServerDb.memoryModule, 'json-server-memory-writes'),
            },
          ];
          try {
            return await measureWrites({
              targets,
              body: createBody(meta.revisionId, loadSamples().records),
              apiKey: meta.apiKey,
              concurrency: options.concurrency,
              seconds: options.loadSeconds,
              runs: options.loadRuns,
              log,
            });
          } finally {
            for (const t of targets)
              if (t.start && t.server && !t.server.unavailable) await t.server.stop('SIGKILL');
          }
        },
        failures,
      );
    }
  } finally {
    await rxs.stop();
  }

  // After the other measurements, on fresh copies: the writes above changed this size's database.
  if (options.only.includes('history')) {
    await step(
      result,
      'history',
      async () => {
        const sides = { history: { label: 'with history', cacheDir, meta } };
        if (options.historyBaseline !== 'none') {
          const baseline = prepareHistoryBaseline({ commit: options.historyBaseline, log });
          const baselineCache = join(work, 'cache', `before-history-${baseline.commit}`, `n${size}`);
          sides.before = {
            label: `before history (${baseline.commit})`,
            bin: baseline.rxsBin,
            cacheDir: baselineCache,
            meta: ensureBaselineDataset(baseline, baselineCache, size),
          };
        }
        const measured = await measureHistoryCost({
          sides,
          workDir: dir,
          concurrency: options.concurrency,
          seconds: options.loadSeconds,
          runs: options.loadRuns,
          log,
        });
        if (sides.before) measured.baselineCommit = options.historyBaseline;
        else measured.sideBySideSkipped = 'no baseline (--history-baseline none)';
        return measured;
      },
      failures,
    );
  }
  result.loadAverage.end = loadavg()[0];
  // Scratch files of this size (the cached dataset stays).
  for (const name of ['listing.json', 'json-server', 'export.csv', 'db', 'history-history', 'history-before'])
    rmSync(join(dir, name), { recursive: true, force: true });
  return result;
}

/**
 * Several runs' results as one report (e.g. 10k and 100k from one run, 1M from a later one): the
 * sizes of all in order, the first run's environment, and each run's date and commit in `runs`.
 */
function mergeResults(all) {
  if (all.length === 1) return all[0];
  const [first] = all;
  return {
    ...first,
    options: { ...first.options, sizes: all.flatMap((r) => r.sizes.map((s) => s.size)) },
    sizes: all.flatMap((r) => r.sizes),
    seconds: all.reduce((sum, r) => sum + (r.seconds ?? 0), 0),
    failures: all.flatMap((r) => r.failures ?? []),
    runs: all.map((r) => ({
      date: r.environment.date,
      commit: r.environment.commit,
      sizes: r.sizes.map((s) => s.size),
    })),
  };
}

async function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    log(`bench: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (options.from) {
    // Re-render only (e.g. after editing the report's wording): the figures stay those measured.
    const results = mergeResults(
      options.from.split(',').map((file) => JSON.parse(readFileSync(file, 'utf8'))),
    );
    const written = writeReport(results, {
      report: resolve(options.report),
      dataDir: resolve(options.dataDir),
    });
    log(`Report ${relative(process.cwd(), written.reportFile)} rewritten from ${options.from}`);
    return;
  }
  if (!existsSync(join(ROOT, 'packages/cli/dist/bin.js'))) {
    log('bench: packages are not built; run `npm run build` first (npm run bench does).');
    process.exit(2);
  }
  for (const tool of ['curl', 'jq']) {
    if (!version(tool, ['--version'])) {
      log(`bench: ${tool} is missing (apt-get install ${tool}).`);
      process.exit(2);
    }
  }
  const started = Date.now();
  const failures = [];
  const results = { options: { ...options }, environment: environment(), sizes: [] };
  log(`RXS benchmark: sizes ${options.sizes.join(', ')}; measurements ${options.only.join(', ')}`);
  for (const size of options.sizes) results.sizes.push(await benchSize(size, options, failures));
  results.seconds = (Date.now() - started) / 1000;
  results.failures = failures;

  const { reportFile, jsonFile, chartFile } = writeReport(results, {
    report: resolve(options.report),
    dataDir: resolve(options.dataDir),
  });
  log(
    `\nReport ${relative(process.cwd(), reportFile)}, raw figures ${relative(process.cwd(), jsonFile)}, chart ${relative(process.cwd(), chartFile)} (${results.seconds.toFixed(0)} s in all)`,
  );
  if (failures.length > 0) {
    log(`bench: ${failures.length} measurement(s) failed:\n  ${failures.join('\n  ')}`);
    process.exitCode = 1;
  }
}

await main();
