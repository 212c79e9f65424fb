/** Command-line options of `bench/run.mjs`. */
import { parseArgs } from 'node:util';

export const USAGE = `Usage: node bench/run.mjs [options]     (npm run bench, npm run bench:smoke)

  --sizes N,N,...        record counts, one dataset each          (default 10000,100000)
  --runs N               rounds per timed comparison (median)      (default 3; the slow
                         baselines and sync: 1 at >= 1M records)
  --load-runs N          autocannon runs per point (median)        (default 3)
  --load-seconds S       autocannon duration per run               (default 2)
  --concurrency N,N,...  write concurrency levels                  (default 1,8,32)
  --lookup-connections N connections for the point lookups        (default 16)
  --only a,b,...         listing,export,sync,writes,lookups,history (default all)
  --history-baseline C   the commit the history measurement runs   (default 63a89d6, the
                         side by side with, or "none" (today's      release before history;
                         server only: no ratio)                     smoke: none)
  --report FILE          the Markdown report                       (default docs/benchmarks.md)
  --data-dir DIR         raw JSON and the SVG chart                (default docs/benchmarks)
  --work DIR             datasets (cached) and scratch files       (default bench/out)
  --postgres URL         also the listing on PostgreSQL: a server   (default env
                         where the bench may create databases       RXS_BENCH_POSTGRES_URL;
                         (e.g. scripts/pg-test-cluster.sh's URL)    none: not measured)
  --fresh                regenerate cached datasets
  --from FILE[,FILE...]  no measuring: rewrite the report, JSON and chart from results.json
                         files (several: their sizes in one report)
  --smoke                tiny and quick: 1000 records, 1 run, report in bench/out/smoke/
  --help`;

export const MEASUREMENTS = ['listing', 'export', 'sync', 'writes', 'lookups', 'history'];

const list = (value) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const positive = (value, name) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} takes a positive number, not "${value}"`);
  return n;
};

export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: 'string' },
      runs: { type: 'string' },
      'load-runs': { type: 'string' },
      'load-seconds': { type: 'string' },
      concurrency: { type: 'string' },
      'lookup-connections': { type: 'string' },
      only: { type: 'string' },
      report: { type: 'string' },
      'data-dir': { type: 'string' },
      work: { type: 'string' },
      fresh: { type: 'boolean' },
      postgres: { type: 'string' },
      from: { type: 'string' },
      smoke: { type: 'boolean' },
      'history-baseline': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const smoke = !!values.smoke;
  const options = {
    help: !!values.help,
    smoke,
    sizes: list(values.sizes ?? (smoke ? '1000' : '10000,100000')).map((s) =>
      Math.round(positive(s, 'sizes')),
    ),
    runs: values.runs ? Math.round(positive(values.runs, 'runs')) : undefined,
    loadRuns: Math.round(positive(values['load-runs'] ?? (smoke ? '1' : '3'), 'load-runs')),
    loadSeconds: positive(values['load-seconds'] ?? (smoke ? '1' : '2'), 'load-seconds'),
    concurrency: list(values.concurrency ?? (smoke ? '1,8' : '1,8,32')).map((s) =>
      Math.round(positive(s, 'concurrency')),
    ),
    lookupConnections: Math.round(positive(values['lookup-connections'] ?? '16', 'lookup-connections')),
    only: list(values.only ?? MEASUREMENTS.join(',')),
    report: values.report ?? (smoke ? 'bench/out/smoke/benchmarks.md' : 'docs/benchmarks.md'),
    dataDir: values['data-dir'] ?? (smoke ? 'bench/out/smoke' : 'docs/benchmarks'),
    work: values.work ?? 'bench/out',
    fresh: !!values.fresh,
    postgres: values.postgres ?? process.env.RXS_BENCH_POSTGRES_URL,
    from: values.from,
    // Smoke runs in CI must not depend on git history or spend a build on the side-by-side.
    historyBaseline: values['history-baseline'] ?? (smoke ? 'none' : '63a89d6'),
  };
  if (options.historyBaseline !== 'none' && !/^[0-9a-f]{7,40}$/.test(options.historyBaseline))
    throw new Error(`--history-baseline takes a commit id or "none", not "${options.historyBaseline}"`);
  for (const name of options.only) {
    if (!MEASUREMENTS.includes(name))
      throw new Error(`--only: unknown measurement "${name}" (${MEASUREMENTS.join(', ')})`);
  }
  return options;
}

/** Rounds for timed comparisons. */
export function runsFor(options) {
  if (options.runs) return options.runs;
  return options.smoke ? 1 : 3;
}

/**
 * Rounds for the slow parts (the curl | jq baseline, sync with its 1% of changes): one at a million
 * records and more, where each takes minutes.
 */
export function slowRunsFor(options, size) {
  return size >= 1_000_000 ? 1 : runsFor(options);
}
