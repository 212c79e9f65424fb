/**
 * The report: `docs/benchmarks.md`, and beside it in `docs/benchmarks/` one JSON file per section
 * (`listing.json`, `sync.json`, ...) with the raw figures of that section's latest run at every
 * size, and the chart. A run replaces the figures of the sections and sizes it measured and keeps
 * the others, so the report always holds the latest figure of each section at each size, with the
 * date, commit, load and command of the run that measured it; earlier runs live in git history.
 * The report is rendered from those files alone: what it says can always be traced to them.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { renderChart } from './chart.mjs';
import { missedTargetNotes } from './notes.mjs';
import { MB, secs, sizeLabel } from './format.mjs';
import { parseOptions } from './options.mjs';

const num = (v, digits = 0) =>
  v === undefined || v === null || Number.isNaN(v)
    ? 'n/a'
    : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const mb = (b) => (b === undefined ? 'n/a' : `${(b / MB).toFixed(b < 10 * MB ? 1 : 0)} MB`);
export const ratio = (r) => (r === undefined ? 'n/a' : `${r.toFixed(r < 10 ? 2 : 1)}x`);
const ms = (v) => (v === undefined ? 'n/a' : `${v.toFixed(v < 10 ? 1 : 0)} ms`);
const mark = (ok) => (ok === undefined ? '' : ok ? ' ✅' : ' ❌');
const percent = (v, digits = 0) => `${(v * 100).toFixed(digits)}%`;
const signedPercent = (v) => `${v >= 0 ? '+' : ''}${percent(v)}`;
const utc = (iso) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;
const count = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A run's load averages (1 min, `[start, end]` pairs), flagged when above the core count. */
function loadText(pairs, cores) {
  const shown = pairs.map(([start, end]) => `${start.toFixed(1)} → ${end?.toFixed(1) ?? '?'}`).join(', ');
  const above = pairs.flat().some((l) => l > cores);
  return `load average (1 min) ${shown} on ${cores} cores${above ? ' (above the core count: times slow in absolute terms, ratios still comparable)' : ''}`;
}

/**
 * The report's targets, each judged at every size where it was measured. `section` is the key of
 * the measurement it reads, `value` extracts the figure, `ok` judges it, `show` formats it.
 */
export const TARGETS = [
  {
    id: 'listing-limit',
    section: 'listing',
    label: '1. Listing of an unchanged topic within 2x of the transfer limit (issue 14)',
    value: (s) => s.listing?.ratio?.rxsOverLimit,
    ok: (v) => v <= 2,
    show: (v) => `${ratio(v)} the limit`,
  },
  {
    id: 'listing-built',
    section: 'listing',
    label: '1. Listing built from the database within 3x of the transfer limit (issue 7)',
    value: (s) => s.listing?.ratio?.builtOverLimit,
    ok: (v) => v <= 3,
    show: (v) => `${ratio(v)} the limit`,
  },
  {
    id: 'listing-json-server',
    section: 'listing',
    label: '1. Listing at least 10x faster than json-server',
    value: (s) => s.listing?.ratio?.jsonServerOverRxs,
    ok: (v) => v >= 10,
    show: (v) => `json-server takes ${ratio(v)}`,
  },
  {
    id: 'listing-memory',
    section: 'listing',
    label: '1. Server memory during the listing under 100 MB above idle',
    value: (s) => s.listing?.memory?.peakAboveIdle,
    ok: (v) => v < 100 * MB,
    show: (v) => `+${mb(v)}`,
  },
  {
    id: 'listing-as-of-memory',
    section: 'listing',
    label: '1. As-of listing streamed: server memory under 100 MB above idle (issue 13)',
    value: (s) => s.listing?.asOfMemory?.peakAboveIdle,
    ok: (v) => v < 100 * MB,
    show: (v) => `+${mb(v)}`,
  },
  {
    id: 'listing-postgres',
    section: 'listingPostgres',
    label: '1b. PostgreSQL: listing of an unchanged topic within 1.5x of psql \\copy (issue 14)',
    value: (s) => s.listingPostgres?.ratio?.rxsOverPsql,
    ok: (v) => v <= 1.5,
    show: (v) => `${ratio(v)} psql`,
  },
  {
    id: 'listing-postgres-built',
    section: 'listingPostgres',
    label: '1b. PostgreSQL: listing built from the database within 1.5x of psql \\copy (issue 14)',
    value: (s) => s.listingPostgres?.ratio?.builtOverPsql,
    ok: (v) => v <= 1.5,
    show: (v) => `${ratio(v)} psql`,
  },
  {
    id: 'export-limit',
    section: 'export',
    label: '2. Export within 1.5x of the limit (curl + JSON.parse)',
    value: (s) => s.export?.ratio?.rxsOverLimit,
    ok: (v) => v <= 1.5,
    show: (v) => `${ratio(v)} the limit`,
  },
  {
    id: 'export-jq',
    section: 'export',
    label: '2. Export at least 5x faster than curl | jq',
    value: (s) => s.export?.ratio?.jqOverRxs,
    ok: (v) => v >= 5,
    show: (v) => `jq takes ${ratio(v)}`,
  },
  {
    id: 'export-memory',
    section: 'export',
    label: "2. Exporter's peak memory under 150 MB",
    value: (s) => s.export?.maxPeakRss?.rxs,
    ok: (v) => v < 150 * MB,
    show: (v) => mb(v),
  },
  {
    id: 'sync-overhead',
    section: 'sync',
    label: '3. Sync after 1% changed adds under 20% to the export time',
    value: (s) => s.sync?.ratio?.overhead,
    ok: (v) => v < 0.2,
    show: (v) => signedPercent(v),
  },
  {
    id: 'sync-feed-time',
    section: 'sync',
    label:
      "3. A poll after 1% changed (`rxs sync` through the changes feed) at most 10% of a full export's time (issue 14)",
    value: (s) => s.sync?.ratio?.feedOverExport,
    ok: (v) => v <= 0.1,
    show: (v) => `${percent(v, v < 0.1 ? 1 : 0)} of an export`,
  },
  {
    id: 'sync-unchanged-bytes',
    section: 'sync',
    label: '3. An unchanged poll (`rxs sync`) sends and receives under 1 KB (issue 14)',
    value: (s) => s.sync?.unchangedPoll?.median?.bytes,
    ok: (v) => v < 1024,
    show: (v) => `${num(v)} bytes`,
  },
  {
    id: 'sync-unchanged-time',
    section: 'sync',
    label: '3. An unchanged poll (`rxs sync`) under 0.5 s (issue 14; judged at 1M records)',
    value: (s) => (s.size >= 1_000_000 ? s.sync?.unchangedPoll?.median?.sync : undefined),
    ok: (v) => v < 0.5,
    show: (v) => secs(v),
  },
  {
    id: 'writes-json-server',
    section: 'writes',
    label: "4. POST throughput at least 3x json-server's (db.json), every concurrency",
    value: (s) => {
      const r = (s.writes?.levels ?? [])
        .map((l) => l.ratio?.rxsOverJsonServer)
        .filter((x) => x !== undefined);
      return r.length ? Math.min(...r) : undefined;
    },
    ok: (v) => v >= 3,
    show: (v) => `${ratio(v)} (lowest)`,
  },
  {
    id: 'history-writes',
    section: 'history',
    label: '7. POST and PATCH with history at least 80% of the release before it, every concurrency',
    value: (s) => {
      const r = (s.history?.levels ?? [])
        .flatMap((l) => [l.post?.ratio, l.patch?.ratio])
        .filter((x) => x !== undefined);
      return r.length ? Math.min(...r) : undefined;
    },
    ok: (v) => v >= 0.8,
    show: (v) => `${percent(v, 1)} (lowest)`,
  },
];

export function judge(results) {
  return TARGETS.map((t) => {
    const perSize = results.sizes.map((s) => {
      const v = t.value(s);
      return { size: s.size, value: v, ok: v === undefined ? undefined : t.ok(v) };
    });
    const judged = perSize.filter((p) => p.ok !== undefined);
    const verdict = judged.length === 0 ? 'not measured' : judged.every((p) => p.ok) ? 'met' : 'MISSED';
    return { ...t, perSize, verdict, missedAt: judged.filter((p) => !p.ok).map((p) => p.size) };
  });
}

/** A GitHub Markdown table; `|` inside cells (as in "curl | jq") is escaped. */
function table(header, rows) {
  const cell = (c) => String(c ?? '').replace(/\|/g, '\\|');
  return [
    `| ${header.map(cell).join(' | ')} |`,
    `| ${header.map((h, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

// Each section renderer gets the section's view: `sizes`, its figures (one per size, the section's
// own measurement under its key), and `options`, those of the newest run that measured it.

function listingSection({ sizes }) {
  const rows = sizes.map((s) => {
    const l = s.listing;
    return [
      sizeLabel(s.size),
      mb(s.listingBytes),
      secs(l.median.limit),
      secs(l.median.rxs),
      l.median.rxsBuilt !== undefined
        ? `${secs(l.median.rxsBuilt)} (${ratio(l.ratio.builtOverLimit)}${mark(l.ratio.builtOverLimit <= 3)})${l.builtSameBytes === false ? ' (other bytes!)' : ''}`
        : 'n/a',
      l.median.jsonServer !== undefined
        ? secs(l.median.jsonServer)
        : `n/a${l.jsonServerUnavailable ? '¹' : ''}`,
      ratio(l.ratio.rxsOverLimit) + mark(l.ratio.rxsOverLimit <= 2),
      l.ratio.jsonServerOverRxs !== undefined
        ? ratio(l.ratio.jsonServerOverRxs) + mark(l.ratio.jsonServerOverRxs >= 10)
        : 'n/a',
      mb(l.memory.idleRss),
      `+${mb(l.memory.peakAboveIdle)}${mark(l.memory.peakAboveIdle < 100 * MB)}`,
      l.median.rxsAsOf !== undefined
        ? `${secs(l.median.rxsAsOf)} (${ratio(l.ratio.asOfOverPresent)})`
        : 'n/a',
      l.asOfMemory?.peakAboveIdle !== undefined
        ? `+${mb(l.asOfMemory.peakAboveIdle)}${mark(l.asOfMemory.peakAboveIdle < 100 * MB)}${l.asOfSameBytes ? '' : ' (other bytes!)'}`
        : 'n/a',
    ];
  });
  const unavailable = sizes.find((s) => s.listing.jsonServerUnavailable);
  return {
    description: [
      'The whole topic downloaded by `curl -o /dev/null` (its own `time_total`). **Limit**, the baseline',
      'of the ratios: a plain Node HTTP server sending the same bytes from memory. **RXS** answers an',
      'unchanged topic from the listing it kept on disk when it first streamed it (issue 14;',
      'docs/sync.md, "Listings served from disk"): the harness downloads the listing once before',
      'measuring. **Built**: a second RXS server on the same database with `--listing-cache-mb 0`, so',
      'every listing is built from the database, as the first one after a change is; in brackets, its',
      'time over the limit. **json-server**: 0.17 on a `db.json` holding the same records,',
      "`GET /records?context.knowledge_unit_topic_id=REV`. Server memory: the RXS process's peak RSS",
      'during the listing (VmHWM, reset before each request) minus its RSS just before; the worst run.',
      '**As of**: the same listing with `&as_of=` a moment after the data was written, read from the',
      "records' history (each record's newest version up to that moment); in brackets, its time over",
      "the present listing's.",
    ],
    body: [
      table(
        [
          'records',
          'bytes',
          'limit',
          'RXS',
          'built (/ limit, ≤ 3x)',
          'json-server',
          'RXS / limit (≤ 2x)',
          'json-server / RXS (≥ 10x)',
          'server RSS idle',
          'RSS growth (< 100 MB)',
          'as of',
          'as-of RSS growth (< 100 MB)',
        ],
        rows,
      ),
      unavailable
        ? `\n¹ json-server could not load the records: ${unavailable.listing.jsonServerUnavailable}.`
        : '',
    ],
  };
}

function listingPostgresSection({ sizes }) {
  const rows = sizes.map((s) => {
    const p = s.listingPostgres;
    return [
      sizeLabel(s.size),
      `${p.copySeconds.toFixed(0)} s`,
      `${secs(p.median.psql)} (${mb(p.bytes.psql)})`,
      secs(p.median.rxs),
      secs(p.median.rxsBuilt),
      ratio(p.ratio.rxsOverPsql) + mark(p.ratio.rxsOverPsql <= 1.5),
      ratio(p.ratio.builtOverPsql) + mark(p.ratio.builtOverPsql <= 1.5),
    ];
  });
  return {
    description: [
      "The benchmark's dataset copied into a fresh PostgreSQL database (`rxs migrate-data`, then",
      '`VACUUM ANALYZE`; "copy in" below), served by `rxs serve --database postgres://...`. **psql**, the',
      'baseline of the ratios: `psql -c "\\copy (SELECT <each record as the JSON text RXS sends, built by',
      'PostgreSQL from the stored columns> FROM records WHERE <the same rows> ORDER BY id) to stdout"`,',
      'its output counted by `wc -c` (COPY doubles backslashes). **Kept**: the same `GET /records/` of',
      'an unchanged topic (answered from disk); **built**: a second server with `--listing-cache-mb 0`,',
      'which streams one COPY of those lines. Measured only with `--postgres URL` (or',
      '`RXS_BENCH_POSTGRES_URL`), e.g. the URL `eval "$(scripts/pg-test-cluster.sh)"` sets as',
      '`RXS_TEST_POSTGRES_URL`.',
    ],
    body: [
      table(
        [
          'records',
          'copy in',
          'psql \\copy',
          'RXS kept',
          'RXS built',
          'kept / psql (≤ 1.5x)',
          'built / psql (≤ 1.5x)',
        ],
        rows,
      ),
    ],
  };
}

function exportSection({ sizes }) {
  const rows = sizes.map((s) => {
    const e = s.export;
    return [
      sizeLabel(s.size),
      mb(e.csvBytes),
      secs(e.median.limit),
      secs(e.median.limitRxs),
      secs(e.median.rxs),
      secs(e.median.jq),
      ratio(e.ratio.rxsOverLimit) +
        (e.ratio.rxsOverLimit !== undefined ? mark(e.ratio.rxsOverLimit <= 1.5) : ''),
      ratio(e.ratio.rxsOverLimitRxs),
      ratio(e.ratio.jqOverRxs) + (e.ratio.jqOverRxs !== undefined ? mark(e.ratio.jqOverRxs >= 5) : ''),
      mb(e.maxPeakRss.rxs) + (e.maxPeakRss.rxs !== undefined ? mark(e.maxPeakRss.rxs < 150 * MB) : ''),
      `${mb(e.maxPeakRss.limit)} / ${mb(e.maxPeakRss.jq)}`,
    ];
  });
  const notes = sizes.flatMap((s) => (s.export.notes ?? []).map((n) => `- ${sizeLabel(s.size)}: ${n}`));
  return {
    description: [
      'Wall time from start to exit of each process (Node start-up counts on both sides), peak RSS by',
      'GNU time. **Limit**, the baseline the target is judged against: `curl -o FILE` of the listing',
      'from the transfer-limit server (the same bytes from memory) plus one `JSON.parse` of the file in',
      'Node, as the issue measured it. **Limit via RXS**: the same, downloading from the RXS server, so',
      '`rxs / limit via RXS` is what the exporter adds to the listing it downloads. **curl | jq**:',
      '`curl … | jq -r --slurpfile kt kt.json -f bench/tools/records-to-csv.jq > out.csv` against the RXS',
      "server, mapping the form keys to the schema's names (what a user would write without rxs).",
    ],
    body: [
      table(
        [
          'records',
          'CSV',
          'limit',
          'limit via RXS',
          'rxs export',
          'curl | jq',
          'rxs / limit (≤ 1.5x)',
          'rxs / limit via RXS',
          'jq / rxs (≥ 5x)',
          'rxs peak RSS (< 150 MB)',
          'peak RSS limit / jq',
        ],
        rows,
      ),
      notes.length ? `\nNotes:\n${notes.join('\n')}` : '',
    ],
  };
}

function syncSection({ sizes }) {
  const rows = sizes.map((s) => {
    const y = s.sync;
    const poll = y.unchangedPoll;
    return [
      sizeLabel(s.size),
      num(y.changed),
      secs(y.median.export),
      secs(y.median.sync),
      `${signedPercent(y.ratio.overhead)}${mark(y.ratio.overhead < 0.2)}`,
      `${percent(y.ratio.feedOverExport, y.ratio.feedOverExport < 0.1 ? 1 : 0)}${mark(y.ratio.feedOverExport <= 0.1)}`,
      y.firstSplice ? secs(y.firstSplice.seconds) : 'n/a',
      y.median.fullSync === undefined ? 'n/a' : secs(y.median.fullSync),
      y.ratio.feedOverFull === undefined ? 'n/a' : percent(y.ratio.feedOverFull),
      mb(y.maxPeakRss?.sync),
      poll ? `${secs(poll.median.sync)} (${percent(poll.ratio.syncOverExport, 1)} of an export)` : 'n/a',
      poll ? `${num(poll.median.bytes)} B${mark(poll.median.bytes < 1024)}` : 'n/a',
    ];
  });
  return {
    description: [
      'After a first `rxs sync`, each round changes 1% of the records (`PATCH /records/{id}`, new data),',
      'then times `rxs export --format csv`, the baseline, and `rxs sync --format csv` (the same CSV,',
      'plus the comparison with the previous snapshot and the new snapshot) of the same topic back to',
      'back, each started with the server idle and the disk written back; the overhead is the median',
      'of `sync / export − 1` over the rounds. That sync reads the changes feed and splices the output',
      'and the snapshot: only the changed records are mapped and written anew, the rest copied as byte',
      'ranges found in the row index the poll before kept (issue 14; docs/sync.md). **First spliced',
      'poll**: the one after the first sync, before the rounds, which finds its records in the row',
      'index that first sync wrote. **Full path**: in the same round, the same sync of a second state',
      'through a proxy that hides the ETags, which downloads the topic and compares, as against a',
      'service without the feed. **Unchanged poll**: then, each round, `rxs sync` again with nothing',
      "changed: it asks with the snapshot's ETags (one request, answered 304) and stops; its time",
      'against a full export taken in the same round, and the bytes both ways on the wire (headers',
      'included), counted by a proxy.',
    ],
    body: [
      table(
        [
          'records',
          'changed per round',
          'export',
          'sync',
          'sync overhead (< 20%)',
          'sync / export (≤ 10%)',
          'first spliced poll',
          'sync, full path',
          'feed / full',
          'sync peak RSS',
          'unchanged poll',
          'its bytes (< 1 KB)',
        ],
        rows,
      ),
    ],
  };
}

function writesSection({ sizes, options }) {
  const rows = sizes.flatMap((s) =>
    s.writes.levels.map((l) => [
      sizeLabel(s.size),
      String(l.connections),
      num(l.rxs?.rps),
      ms(l.rxs?.p99),
      l.jsonServer ? num(l.jsonServer.rps, l.jsonServer.rps < 10 ? 1 : 0) : 'n/a',
      l.jsonServer ? ms(l.jsonServer.p99) : 'n/a',
      l.jsonServerMemory ? num(l.jsonServerMemory.rps) : 'n/a',
      l.jsonServerMemory ? ms(l.jsonServerMemory.p99) : 'n/a',
      `${l.ratio.lowerBound?.jsonServer ? '> ' : ''}${ratio(l.ratio.rxsOverJsonServer)}${l.ratio.rxsOverJsonServer !== undefined ? mark(l.ratio.rxsOverJsonServer >= 3) : ''} / ${l.ratio.lowerBound?.jsonServerMemory ? '> ' : ''}${ratio(l.ratio.rxsOverJsonServerMemory)}`,
    ]),
  );
  const problems = sizes.flatMap((s) => [
    ...s.writes.levels.flatMap((l) =>
      ['rxs', 'jsonServer', 'jsonServerMemory']
        .filter((k) => l[k] && (l[k].failures || l[k].timeouts))
        .map(
          (k) =>
            `- ${sizeLabel(s.size)}, ${l.connections} connections, ${k}: ${l[k].failures} failed, ${l[k].timeouts} timed out`,
        ),
    ),
    ...Object.entries(s.writes.unavailable ?? {}).map(
      ([k, why]) => `- ${sizeLabel(s.size)}: ${k} could not start: ${why}`,
    ),
  ]);
  return {
    description: [
      `autocannon, ${options.loadSeconds} s per run, median of ${options.loadRuns} runs per point; every request creates a`,
      "record (201). RXS validates the data against the topic's form and commits with",
      'the WAL synced (on disk before the 201). **json-server (db.json)**, the baseline of the',
      'target: its usual mode, every POST rewrites the whole file. **json-server in memory**: loaded',
      'from a `.cjs` module, nothing persisted, its best case, shown for reference. "> N x": the',
      'baseline completed no request in some run (fewer than one per run), so the ratio is a lower bound.',
    ],
    body: [
      table(
        [
          'records',
          'connections',
          'RXS req/s',
          'RXS p99',
          'json-server req/s',
          'json-server p99',
          'in-memory req/s',
          'in-memory p99',
          'RXS / json-server (≥ 3x) / in-memory',
        ],
        rows,
      ),
      problems.length ? `\n${problems.join('\n')}` : '',
    ],
  };
}

function lookupsSection({ sizes, options }) {
  const rows = sizes.flatMap((s) =>
    Object.values(s.lookups).map((e) => [
      sizeLabel(s.size),
      `\`${e.label}\``,
      String(e.connections),
      num(e.rps),
      ms(e.p50),
      ms(e.p99),
    ]),
  );
  return {
    description: [
      `autocannon, ${options.lookupConnections} connections, ${options.loadSeconds} s per run, median of ${options.loadRuns} runs; record ids`,
      'are spread over the whole topic; the load generator runs on the same cores as the server. No',
      'target and no baseline: reported for capacity planning.',
    ],
    body: [table(['records', 'endpoint', 'connections', 'req/s', 'p50', 'p99'], rows)],
  };
}

const bytes = (b) => (b === undefined ? 'n/a' : b < 10_000 ? `${num(b)} B` : `${(b / 1024).toFixed(0)} KiB`);

function historySection({ sizes, options }) {
  const rows = sizes.flatMap((s) =>
    s.history.levels.flatMap((l) =>
      ['post', 'patch'].map((op) => {
        const m = l[op];
        return [
          sizeLabel(s.size),
          op === 'post' ? '`POST /records/`' : '`PATCH /records/{id}`',
          String(l.connections),
          num(m.history?.rps),
          ms(m.history?.p99),
          m.before ? num(m.before.rps) : 'n/a',
          m.before ? ms(m.before.p99) : 'n/a',
          m.ratio === undefined ? 'n/a' : `${percent(m.ratio, 1)}${mark(m.ratio >= s.history.target)}`,
        ];
      }),
    ),
  );
  const storageRows = sizes.map((s) => {
    const st = s.history.storage;
    return [
      sizeLabel(s.size),
      num(st.history?.versions?.rows),
      bytes(st.history?.versions?.perRow),
      bytes(st.history?.records?.perRow),
      bytes(st.history?.growthPerWrite),
      bytes(st.before?.growthPerWrite),
    ];
  });
  const problems = sizes.flatMap((s) =>
    s.history.levels.flatMap((l) =>
      ['post', 'patch'].flatMap((op) =>
        ['history', 'before']
          .filter((k) => l[op]?.[k] && (l[op][k].failures || l[op][k].timeouts))
          .map(
            (k) =>
              `- ${sizeLabel(s.size)}, ${op.toUpperCase()}, ${l.connections} connections, ${k}: ${l[op][k].failures} failed, ${l[op][k].timeouts} timed out`,
          ),
      ),
    ),
  );
  const commit = sizes.find((s) => s.history.baselineCommit)?.history.baselineCommit;
  const skipped = sizes.find((s) => s.history.sideBySideSkipped)?.history.sideBySideSkipped;
  return {
    description: [
      `Today's server and, as the baseline, the release before history (commit ${commit ?? 'given by --history-baseline'}), built from`,
      'git next to this tree by bench/lib/baseline.mjs, both `rxs serve` on SQLite, each on its own copy',
      'of the same generated records, taking turns within every round: A B B A, each run half as long,',
      "the first side alternating (a drift in the machine's load weighs on both sides alike).",
      `autocannon, ${options.loadSeconds} s per side and round, median of ${options.loadRuns} rounds per point. POST creates a record`,
      '(201); PATCH sends new data to records spread over the topic (200). With history each write',
      'also appends the version in the same transaction. The ratio is the median of per-round ratios',
      "(with history / before); it moves with the machine's load by tens of points from run to run.",
      skipped ? `\nSide by side skipped in this run: ${skipped}.` : '',
    ],
    body: [
      table(
        [
          'records',
          'request',
          'connections',
          'with history req/s',
          'p99',
          'before history req/s',
          'p99',
          'with / before (≥ 80%)',
        ],
        rows,
      ),
      problems.length ? `\n${problems.join('\n')}` : '',
      '',
      'Storage: `record_versions` rows after the run (one per generated record, plus one per',
      'acknowledged write) and their pages with those of their indexes per row (SQLite `dbstat`), next',
      "to a live record's; and each database file's growth (with its WAL) per acknowledged write.",
      '',
      table(
        [
          'records',
          'versions',
          'bytes per version',
          'bytes per record',
          'file growth per write, with history',
          'before history',
        ],
        storageRows,
      ),
    ],
  };
}

/**
 * The measured sections, in the report's order: `key` is the measurement's key in a run's results
 * (one per size), `file` the JSON file beside the report holding its latest figures.
 */
const SECTIONS = [
  {
    key: 'listing',
    file: 'listing.json',
    title: '1. Listing: `GET /records/?context__knowledge_unit_topic_id=REV`',
    rounds: (s) => count(s.runs, 'round'),
    render: listingSection,
  },
  {
    key: 'listingPostgres',
    file: 'listing-postgres.json',
    title: '1b. Listing on PostgreSQL',
    rounds: (s) => count(s.runs, 'round'),
    render: listingPostgresSection,
  },
  {
    key: 'export',
    file: 'export.json',
    title: '2. Export: `rxs export --format csv`',
    rounds: (s) => `${count(s.runs, 'round')}${s.slowRuns < s.runs ? ` (curl | jq: ${s.slowRuns})` : ''}`,
    render: exportSection,
  },
  {
    key: 'sync',
    file: 'sync.json',
    title: '3. Sync: a second `rxs sync` after 1% of the records changed',
    rounds: (s) => count(s.slowRuns, 'round'),
    render: syncSection,
  },
  {
    key: 'writes',
    file: 'writes.json',
    title: '4. Writes: `POST /records/` with schema validation',
    rounds: (s, options) => `${count(options.loadRuns, 'run')} of ${options.loadSeconds} s per point`,
    render: writesSection,
  },
  {
    key: 'lookups',
    file: 'lookups.json',
    title: '5. Point lookups under load',
    rounds: (s, options) => `${count(options.loadRuns, 'run')} of ${options.loadSeconds} s`,
    render: lookupsSection,
  },
  {
    key: 'history',
    file: 'history.json',
    title: '7. The cost of record history: writes side by side with the release before it',
    rounds: (s, options) =>
      `${count(options.loadRuns, 'round')} of ${options.loadSeconds} s per side and point`,
    render: historySection,
  },
];

/** What the report keeps of a run's options: those that change what is measured (no paths, no URL). */
function keptOptions(options) {
  return {
    smoke: options.smoke,
    sizes: options.sizes,
    runs: options.runs,
    loadRuns: options.loadRuns,
    loadSeconds: options.loadSeconds,
    concurrency: options.concurrency,
    lookupConnections: options.lookupConnections,
    only: options.only,
    historyBaseline: options.historyBaseline,
    postgres: options.postgres ? true : undefined,
  };
}

/** The command line that repeats a run (a PostgreSQL URL shown as URL). */
function commandOf(options) {
  const defaults = parseOptions(options.smoke ? ['--smoke'] : []);
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const args = ['node bench/run.mjs'];
  if (options.smoke) args.push('--smoke');
  if (!same(options.only, defaults.only)) args.push(`--only ${options.only.join(',')}`);
  if (!same(options.sizes, defaults.sizes)) args.push(`--sizes ${options.sizes.join(',')}`);
  if (options.runs !== undefined) args.push(`--runs ${options.runs}`);
  if (options.loadRuns !== defaults.loadRuns) args.push(`--load-runs ${options.loadRuns}`);
  if (options.loadSeconds !== defaults.loadSeconds) args.push(`--load-seconds ${options.loadSeconds}`);
  if (!same(options.concurrency, defaults.concurrency))
    args.push(`--concurrency ${options.concurrency.join(',')}`);
  if (options.lookupConnections !== defaults.lookupConnections)
    args.push(`--lookup-connections ${options.lookupConnections}`);
  if (options.historyBaseline !== defaults.historyBaseline)
    args.push(`--history-baseline ${options.historyBaseline}`);
  if (options.postgres) args.push('--postgres URL');
  return args.join(' ');
}

/**
 * The runs in `results`: one, or several where `run.mjs --from` joined results files (`runs` then
 * names each one's date, commit and sizes).
 */
function runsIn(results) {
  const options = keptOptions(results.options);
  if (!(results.runs?.length > 1))
    return [{ environment: results.environment, options, sizes: results.sizes }];
  return results.runs.map((r) => ({
    environment: { ...results.environment, date: r.date, commit: r.commit },
    options: { ...options, sizes: r.sizes },
    sizes: results.sizes.filter((s) => r.sizes.includes(s.size)),
  }));
}

function readSection(dataDir, section) {
  const file = join(dataDir, section.file);
  if (!existsSync(file)) return { section: section.key, runs: [], failures: [] };
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * `stored` with `run`'s figures of this section: at each size the newer of the two figures is kept
 * (so joining an older results file changes nothing it supersedes), runs left without a size are
 * dropped, and a failed measurement is listed, not kept as a figure, until a newer run succeeds.
 */
function mergeSection(stored, section, run) {
  const date = run.environment.date;
  const measured = run.sizes.filter((s) => s[section.key] !== undefined);
  const figures = measured.filter((s) => !s[section.key].error);
  const incoming = {
    environment: run.environment,
    options: run.options,
    command: run.command ?? commandOf(run.options),
    sizes: [],
  };
  const holder = new Map();
  for (const r of stored.runs) for (const s of r.sizes) holder.set(s.size, { run: r, figure: s });
  for (const s of figures) {
    const held = holder.get(s.size);
    if (!held || held.run.environment.date <= date) {
      const { size, runs, slowRuns, loadAverage, listingBytes, bytesPerRecord } = s;
      const figure = {
        size,
        runs,
        slowRuns,
        loadAverage,
        listingBytes,
        bytesPerRecord,
        [section.key]: s[section.key],
      };
      holder.set(s.size, { run: incoming, figure });
    }
  }
  const runs = [];
  for (const { run: r } of holder.values()) if (!runs.includes(r)) runs.push(r);
  for (const r of runs) {
    r.sizes = [...holder.values()].filter((h) => h.run === r).map((h) => h.figure);
    r.sizes.sort((a, b) => a.size - b.size);
  }
  runs.sort((a, b) => (a.environment.date < b.environment.date ? 1 : -1));
  const failed = measured
    .filter((s) => s[section.key].error)
    .map((s) => ({
      size: s.size,
      date,
      commit: run.environment.commit,
      command: incoming.command,
      error: s[section.key].error,
    }));
  const failures = [
    ...stored.failures.filter((f) => !failed.some((n) => n.size === f.size)),
    ...failed,
  ].filter((f) => !(holder.get(f.size)?.run.environment.date >= f.date));
  return { section: section.key, runs, failures };
}

/** Every section's figures joined by size, as one run's results read (for the targets, scaling and chart). */
function combine(stored) {
  const bySize = new Map();
  for (const [key, file] of Object.entries(stored)) {
    for (const r of file.runs) {
      for (const s of r.sizes) {
        const joined = bySize.get(s.size) ?? { size: s.size };
        joined[key] = s[key];
        joined.listingBytes ??= s.listingBytes;
        bySize.set(s.size, joined);
      }
    }
  }
  return { sizes: [...bySize.values()].sort((a, b) => a.size - b.size) };
}

function measuredLines(section, file, jsonLink) {
  const lines = [`Measured (raw figures: [${jsonLink}](${jsonLink})):`, ''];
  for (const r of file.runs) {
    const env = r.environment;
    const load = loadText(
      r.sizes.filter((s) => s.loadAverage).map((s) => [s.loadAverage.start, s.loadAverage.end]),
      env.cores,
    );
    const rounds = r.sizes.map((s) => section.rounds(s, r.options));
    const roundsText = rounds.every((x) => x === rounds[0])
      ? rounds[0]
      : rounds.map((x, i) => `${x} at ${sizeLabel(r.sizes[i].size)}`).join(', ');
    lines.push(
      `- ${r.sizes.map((s) => sizeLabel(s.size)).join(', ')}: ${utc(env.date)}, commit ${env.commit ?? 'unknown'}, ` +
        `${env.cpu ?? 'unknown CPU'}, ${roundsText}, ${load}: \`${r.command}\``,
    );
  }
  return [...lines, ...failureLines(file)];
}

/** Failed measurements newer than the section's figure at their size (which stays the one shown). */
function failureLines(file) {
  return file.failures.map(
    (f) =>
      `- ${sizeLabel(f.size)}: **failed** on ${utc(f.date)}, commit ${f.commit ?? 'unknown'} (\`${f.command}\`): ${f.error.split('\n')[0].slice(0, 300)}`,
  );
}

function targetLines(judged, section) {
  const mine = judged.filter((t) => t.section === section.key && t.verdict !== 'not measured');
  if (mine.length === 0) return [];
  return [
    '**Targets:**',
    '',
    ...mine.map((t) => {
      const at = t.perSize
        .filter((p) => p.ok !== undefined)
        .map((p) => `${sizeLabel(p.size)} ${t.show(p.value)}${mark(p.ok)}`)
        .join(', ');
      const verdict =
        t.verdict === 'MISSED' ? `**missed** at ${t.missedAt.map(sizeLabel).join(', ')}` : 'met';
      return `- ${t.label.replace(/^\d+b?\. /, '')}: ${verdict} (${at}).`;
    }),
  ];
}

function scalingSection(combined) {
  const per = (v, n) => (v === undefined ? undefined : (v / n) * 1e6);
  const us = (v) => (v === undefined ? 'n/a' : `${v.toFixed(v < 10 ? 2 : 1)} µs`);
  const rows = combined.sizes.map((s) => [
    sizeLabel(s.size),
    us(per(s.listing?.median?.rxs, s.size)),
    us(per(s.listing?.median?.limit, s.size)),
    us(per(s.export?.median?.rxs, s.size)),
    us(per(s.export?.median?.limit, s.size)),
    us(per(s.sync?.median?.sync, s.size)),
    mb(s.export?.maxPeakRss?.rxs),
    mb(s.listing?.memory?.peakAboveIdle),
    s.writes?.levels?.length ? num(Math.max(...s.writes.levels.map((l) => l.rxs?.rps ?? 0))) : 'n/a',
    s.lookups?.record ? num(s.lookups.record.rps) : 'n/a',
  ]);
  return [
    '## 6. Scaling',
    '',
    'Cost per record at each size (median time ÷ records), from the sections above (each its latest',
    'run at that size): flat columns mean linear cost. Memory columns should stay flat as the size',
    'grows tenfold.',
    '',
    table(
      [
        'records',
        'listing / record',
        'limit / record',
        'export / record',
        'export limit / record',
        'sync / record',
        'exporter peak RSS',
        'server RSS growth',
        'best POST req/s',
        'GET /records/{id} req/s',
      ],
      rows,
    ),
  ].join('\n');
}

/** Raw figures of a benchmark with its own script and report, if it has run here. */
function readSeparate(dataDir, file) {
  const path = join(dataDir, file);
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined;
}

/** Section 8: the traceability, import and document benchmarks, each with its own script and report beside this one. */
function separateSection(dataDir, rel) {
  const traces = readSeparate(dataDir, 'traceability.json');
  const imports = readSeparate(dataDir, 'import.json');
  const documents = readSeparate(dataDir, 'documents.json');
  const link = (name) => `[${name}](${name})`;
  const lines = [
    '## 8. Traceability, import and documents',
    '',
    'Each has its own script and report, and keeps the raw figures of its last run beside this file:',
    '',
  ];
  const unkept = (file) =>
    `its figures are in its report; the raw figures are kept in ${rel(join(dataDir, file))} from its next run.`;
  const tracesDoc = link('benchmarks-traceability.md');
  if (traces) {
    const largest = traces.scales.at(-1);
    const met = largest.report.seconds < traces.targetSeconds;
    const load = loadText([largest.load], traces.cores);
    lines.push(
      `- **Traceability** (issue 16; \`npm run bench:traces\`, report ${tracesDoc}, raw figures ${link(rel(join(dataDir, 'traceability.json')))}):`,
      `  \`rxs trace-report --format html\` of ${num(largest.requirements)} requirements, ${num(largest.tests)} tests and ${num(largest.traces)} traces took`,
      `  ${secs(largest.report.seconds)}, against ${secs(largest.export.seconds)} for \`rxs export --traces\` of the same topics (the baseline);`,
      `  target under ${traces.targetSeconds} s: ${met ? 'met' : '**missed**'}. Measured ${utc(traces.date)}, ${load}.`,
    );
  } else {
    lines.push(
      `- **Traceability** (issue 16; \`npm run bench:traces\`, report ${tracesDoc}): ${unkept('traceability.json')}`,
    );
  }
  const importDoc = link('benchmarks-import.md');
  if (imports) {
    const largest = imports.dryRuns.at(-1);
    const load = loadText([imports.load], imports.cores);
    const write = imports.write
      ? ` A real import of ${num(imports.write.rows)} rows: ${num(imports.write.rows / imports.write.seconds)} records/s.`
      : '';
    lines.push(
      `- **Import** (issue 15; \`npm run bench:import\`, report ${importDoc}, raw figures ${link(rel(join(dataDir, 'import.json')))}):`,
      `  \`rxs import --dry-run\` of ${num(largest.rows)} CSV rows took ${secs(largest.dryRunSeconds)}, ${ratio(largest.dryRunSeconds / largest.pythonSeconds)} the time`,
      `  of Python's \`csv.reader\` reading the same file once (the baseline), peak RSS ${num(largest.dryRunPeakRssMb)} MB.${write}`,
      `  No target. Measured ${utc(imports.date)}, ${load}.`,
    );
  } else {
    lines.push(
      `- **Import** (issue 15; \`npm run bench:import\`, report ${importDoc}): ${unkept('import.json')}`,
    );
  }
  lines.push(...documentLines(documents, { link, rel: (file) => rel(join(dataDir, file)), unkept }));
  return lines.join('\n');
}

/** The document benchmark's headline: DOCX and PDF against the XLSX of the same baseline. */
function documentLines(documents, { link, rel, unkept }) {
  const doc = link('benchmarks-documents.md');
  if (!documents)
    return [
      `- **Documents** (issue 36; \`npm run bench:documents\`, report ${doc}): ${unkept('documents.json')}`,
    ];
  const { formats, targets, verdicts } = documents;
  const known = (v) => (v === null ? undefined : v);
  const side = (format) => {
    const f = formats[format];
    return `${format.toUpperCase()} ${ratio(known(f.cpuRatio))} by CPU time (${ratio(known(f.ratio))} by wall time), ${mb(f.maxPeakRssMb === null ? undefined : f.maxPeakRssMb * MB)}`;
  };
  const judged = (ok) => (ok === null ? 'n/a' : ok ? 'met' : '**missed**');
  const verdict = (format) =>
    `${format.toUpperCase()} ${judged(verdicts[format].time)} (time) and ${judged(verdicts[format].memory)} (memory)`;
  return [
    `- **Documents** (issue 36; \`npm run bench:documents\`, report ${doc}, raw figures ${link(rel('documents.json'))}):`,
    `  \`rxs export --baseline --traces\` of ${num(documents.records)} records with ${num(documents.traces)} traces, against the XLSX of the same baseline`,
    `  (${secs(formats.xlsx.seconds)}): ${side('docx')}; ${side('pdf')}. Targets at most ${targets.timeRatio}x and ${targets.peakRssMb} MB:`,
    `  ${verdict('docx')}, ${verdict('pdf')}. Measured ${utc(documents.date)}, ${loadText([documents.load], documents.cores)}.`,
  ];
}

function renderMarkdown(stored, combined, { dataDir, reportDir, chartPath }) {
  const rel = (p) => relative(reportDir, p).split('\\').join('/');
  const judged = judge(combined);
  const allRuns = SECTIONS.flatMap((s) => stored[s.key].runs);
  const newest = allRuns.reduce((a, b) => (a && a.environment.date > b.environment.date ? a : b), undefined);
  const machines = [
    ...new Set(
      allRuns.map(
        ({ environment: e }) =>
          `${e.cpu ?? 'unknown CPU'}, ${e.cores} cores, ${e.memoryGb} GB, Linux ${e.kernel}; Node ${e.node}`,
      ),
    ),
  ];
  const env = newest?.environment;
  const targetRows = judged.map((t) => [
    t.label,
    ...combined.sizes.map((s) => {
      const p = t.perSize.find((x) => x.size === s.size);
      return p?.value === undefined ? 'n/a' : `${t.show(p.value)}${mark(p.ok)}`;
    }),
    t.verdict === 'MISSED' ? `**MISSED** (at ${t.missedAt.map(sizeLabel).join(', ')})` : t.verdict,
  ]);
  const out = [
    '# Benchmarks',
    '',
    'RXS against its baselines (GitHub issues 7, 13, 14, 15 and 16): each section says what is',
    'measured, the baseline its ratios are taken against, the targets and whether they are met, and',
    'the run its figures come from (date, commit, load, the command that repeats it), with that',
    "run's raw figures beside this file. The report is generated by `bench/run.mjs`",
    '(bench/README.md): a run replaces the figures of the sections and sizes it measured and keeps the',
    'others, so each section shows its latest run at each size; earlier runs are in git history.',
    '',
    '```sh',
    'npm run bench                                            # build, then every section at 10k and 100k records, then section 8',
    'node bench/run.mjs --only sync --sizes 100000,1000000    # one section at other sizes (the packages built)',
    'node bench/run.mjs --from docs/benchmarks/sync.json      # no measuring: render this report again',
    '```',
    '',
    `Machine${machines.length > 1 ? 's' : ''}: ${machines.join('; ') || 'none yet'}.`,
    env
      ? `Tools (newest run): better-sqlite3 ${env.betterSqlite3}, curl ${env.curl}, jq ${env.jq}, json-server ${env.jsonServer}, autocannon ${env.autocannon}.`
      : '',
    '',
    'These machines are shared and noisy (other jobs run beside the benchmark on the same two cores:',
    'each section gives the load average during its run), so every figure is the median of several',
    'rounds, and every comparison is the median of ratios whose two sides were measured within the',
    'same round, seconds apart. Figures taken at a load above the core count are slow in absolute',
    'terms; the ratios stay meaningful.',
    '',
    `![Listing, export, writes and memory](${chartPath})`,
    '',
    '## Targets',
    '',
    table(['target', ...combined.sizes.map((s) => sizeLabel(s.size)), 'verdict'], targetRows),
    '',
  ];
  for (const section of SECTIONS) {
    if (section.key === 'history') out.push(scalingSection(combined), '');
    const file = stored[section.key];
    out.push(`## ${section.title}`, '');
    if (file.runs.length === 0) {
      out.push(
        `Not measured yet: \`node bench/run.mjs --only ${section.key === 'listingPostgres' ? 'listing --postgres URL' : section.key}\`.`,
        ...failureLines(file),
        '',
      );
      continue;
    }
    const view = {
      sizes: file.runs.flatMap((r) => r.sizes).sort((a, b) => a.size - b.size),
      options: file.runs[0].options,
    };
    const { description, body } = section.render(view);
    out.push(
      ...description,
      '',
      ...targetLines(judged, section),
      '',
      ...measuredLines(section, file, rel(join(dataDir, section.file))),
      '',
      ...body,
      '',
      missedTargetNotes(
        combined,
        judged.filter((t) => t.section === section.key && t.verdict === 'MISSED'),
      ),
      '',
    );
  }
  out.push(separateSection(dataDir, rel));
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

/**
 * Joins `results` (one run of bench/run.mjs, several joined by `--from`, or a section file written
 * here) into the section files in `dataDir`, then writes the chart and the report from them.
 */
export function writeReport(results, { report, dataDir }) {
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(dirname(report), { recursive: true });
  const incoming = results.section && results.runs ? results.runs : runsIn(results);
  const stored = {};
  for (const section of SECTIONS) {
    let file = readSection(dataDir, section);
    for (const run of incoming) file = mergeSection(file, section, run);
    stored[section.key] = file;
    if (file.runs.length > 0 || file.failures.length > 0)
      writeFileSync(join(dataDir, section.file), `${JSON.stringify(file, null, 2)}\n`);
  }
  const combined = combine(stored);
  const newest = SECTIONS.flatMap((s) => stored[s.key].runs).sort((a, b) =>
    a.environment.date < b.environment.date ? 1 : -1,
  )[0];
  const chartFile = join(dataDir, 'chart.svg');
  if (newest) writeFileSync(chartFile, renderChart({ ...combined, environment: newest.environment }));
  const reportDir = dirname(report);
  const chartPath = relative(reportDir, chartFile).split('\\').join('/');
  writeFileSync(report, renderMarkdown(stored, combined, { dataDir, reportDir, chartPath }));
  return { reportFile: report, jsonFile: dataDir, chartFile };
}
