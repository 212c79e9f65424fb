/**
 * 7. The cost of record history: `POST /records/` and `PATCH /records/{id}` throughput
 * of today's server against the release before history (lib/baseline.mjs), side by side: both
 * servers on SQLite, each on its own copy of the same generated records, taking turns within every
 * round (A B B A, the first side alternating), so each ratio compares figures measured seconds
 * apart. Then the storage one version takes: the pages of `record_versions` and its indexes
 * (SQLite's dbstat) per row, and each database file's growth per acknowledged write.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { copyDataset, createBody, loadSamples, recordData } from '../lib/dataset.mjs';
import { load } from '../lib/load.mjs';
import { settle } from '../lib/processes.mjs';
import { startRxs } from '../lib/servers.mjs';
import { median, ratios } from '../lib/stats.mjs';
import { summarize } from './load.mjs';

/** POST and PATCH throughput with history must stay at or above this share of the release before. */
export const HISTORY_WRITE_TARGET = 0.8;

/** Bytes of the database file and its write-ahead log. */
function databaseBytes(dir) {
  let bytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      bytes += statSync(join(dir, `rxs.db${suffix}`)).size;
    } catch {
      // No WAL after a clean shutdown.
    }
  }
  return bytes;
}

/**
 * Bytes on disk per row of `table` (its pages and those of its indexes, from dbstat), or undefined
 * where the table does not exist (the release before history has no `record_versions`).
 */
function bytesPerRow(file, table) {
  const db = new Database(file, { readonly: true });
  try {
    const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
    if (!exists) return undefined;
    const rows = db.prepare(`SELECT count(*) AS n FROM "${table}"`).get().n;
    const { bytes } = db
      .prepare(
        'SELECT sum(pgsize) AS bytes FROM dbstat WHERE name IN ' +
          "(SELECT name FROM sqlite_master WHERE tbl_name = ? AND type IN ('table', 'index'))",
      )
      .get(table);
    return { rows, bytes, perRow: rows ? bytes / rows : undefined };
  } finally {
    db.close();
  }
}

/**
 * Every acknowledged POST and PATCH appended exactly one version, and nothing else did: what the
 * audit trail promises, checked on the benchmark's own load. autocannon stops each run with up to
 * one request per connection in flight, which the server may still commit without it being counted:
 * those are the tolerance. Runs with timeouts or connection errors are not checked.
 */
function checkOneVersionPerWrite(name, storage, versionsBefore, levels) {
  if (versionsBefore === undefined || !storage.versions) return;
  const runs = levels.flatMap((l) =>
    [...l.post[name].runs, ...l.patch[name].runs].flatMap((run) =>
      (run.halves ?? [run]).map((half) => ({ ...half, connections: l.connections })),
    ),
  );
  if (runs.some((run) => run.timeouts + run.errors > 0)) return;
  const expected = versionsBefore + storage.writes;
  const inFlight = runs.reduce((sum, run) => sum + run.connections, 0);
  const rows = storage.versions.rows;
  if (rows < expected || rows > expected + inFlight) {
    throw new Error(
      `record_versions holds ${rows} rows after ${storage.writes} acknowledged writes on ${versionsBefore} ` +
        `versions: expected ${expected} (up to ${expected + inFlight} with the requests in flight when each ` +
        'run stopped). A write lost its version or a version has no write; see storage/records-write.ts.',
    );
  }
}

/** The request of one operation for one side: POSTs of one valid body, PATCHes of new data. */
function operations(meta, samples) {
  const post = {
    method: 'POST',
    path: '/records/',
    body: JSON.stringify(createBody(meta.revisionId, samples)),
  };
  // PATCHes go round the records the sync benchmark changes, each with data no earlier request sent.
  const targets = meta.changeIds;
  const patch = {
    method: 'PATCH',
    path: (n) => `/records/${targets[n % targets.length][0]}`,
    body: (n) => {
      const [, index] = targets[n % targets.length];
      const data = recordData(index, samples);
      data.justification = `${data.justification} (benchmark revision ${n})`;
      return JSON.stringify({ data });
    },
  };
  return { post, patch };
}

/** Two load runs of one side within a round, as one: requests over their joint duration. */
function combine(runs) {
  const sum = (pick) => runs.reduce((total, r) => total + pick(r), 0);
  const seconds = sum((r) => r.seconds);
  const ok = sum((r) => r.ok);
  return {
    rps: seconds ? ok / seconds : 0,
    ok,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    // The worse half's percentiles: a conservative figure for the round.
    latencyMs: {
      p50: Math.max(...runs.map((r) => r.latencyMs.p50)),
      p90: Math.max(...runs.map((r) => r.latencyMs.p90)),
      p99: Math.max(...runs.map((r) => r.latencyMs.p99)),
      max: Math.max(...runs.map((r) => r.latencyMs.max)),
    },
    seconds,
    halves: runs,
  };
}

/**
 * `sides`: `{ history, before }`, each `{ label, bin?, cacheDir, meta }`: the build to run (default:
 * this tree's) and its cached dataset. Starts both servers on copies in `workDir`, runs the loads,
 * stops them, and measures the storage.
 */
export async function measureHistoryCost({ sides, workDir, concurrency, seconds, runs, log }) {
  const { records: samples } = loadSamples();
  const names = Object.keys(sides);
  const live = {};
  try {
    for (const name of names) {
      const side = sides[name];
      const dataDir = join(workDir, `history-${name}`);
      copyDataset(side.cacheDir, dataDir);
      const bytesBefore = databaseBytes(dataDir);
      const versionsBefore = bytesPerRow(join(dataDir, 'rxs.db'), 'record_versions')?.rows;
      const server = await startRxs({
        dataDir,
        apiKey: side.meta.apiKey,
        logFile: join(workDir, 'logs', `rxs-history-${name}.log`),
        bin: side.bin,
      });
      live[name] = {
        server,
        dataDir,
        bytesBefore,
        versionsBefore,
        ops: operations(side.meta, samples),
        apiKey: side.meta.apiKey,
      };
    }

    const levels = [];
    for (const connections of concurrency) {
      const level = { connections };
      for (const op of ['post', 'patch']) {
        const collected = Object.fromEntries(names.map((n) => [n, []]));
        for (let round = 0; round < runs; round++) {
          // A B B A, each half as long: a load change on the machine that drifts through the
          // round weighs on both sides alike instead of on whichever ran second.
          const order = round % 2 === 0 ? names : [...names].reverse();
          const halves = Object.fromEntries(names.map((n) => [n, []]));
          for (const name of [...order, ...[...order].reverse()]) {
            const { server, ops, apiKey } = live[name];
            await settle(server.pid);
            halves[name].push(
              await load({
                url: server.url,
                ...ops[op],
                headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
                connections,
                seconds: Math.max(1, seconds / 2),
              }),
            );
          }
          for (const name of names) collected[name].push(combine(halves[name]));
          log?.(
            `  history ${op.toUpperCase()} c=${connections} round ${round + 1}/${runs}: ` +
              names.map((n) => `${sides[n].label} ${collected[n].at(-1).rps.toFixed(1)}/s`).join(', '),
          );
        }
        level[op] = {
          ...Object.fromEntries(names.map((n) => [n, summarize(collected[n])])),
          // With history over before, per round; none without the release before to compare with.
          ratio: collected.before
            ? median(
                ratios(
                  collected.history.map((s) => s.rps),
                  collected.before.map((s) => s.rps),
                ),
              )
            : undefined,
        };
      }
      levels.push(level);
    }

    for (const name of names) {
      const side = live[name];
      await side.server.stop();
      side.server = undefined;
    }

    const storage = {};
    for (const name of names) {
      const { dataDir, bytesBefore } = live[name];
      const writes = levels.reduce((sum, l) => sum + l.post[name].ok + l.patch[name].ok, 0);
      const file = join(dataDir, 'rxs.db');
      storage[name] = {
        writes,
        growthPerWrite: writes ? (databaseBytes(dataDir) - bytesBefore) / writes : undefined,
        records: bytesPerRow(file, 'records'),
        versions: bytesPerRow(file, 'record_versions'),
      };
      checkOneVersionPerWrite(name, storage[name], live[name].versionsBefore, levels);
    }
    return {
      target: HISTORY_WRITE_TARGET,
      labels: Object.fromEntries(names.map((n) => [n, sides[n].label])),
      levels,
      storage,
    };
  } finally {
    for (const side of Object.values(live)) await side.server?.stop('SIGKILL');
  }
}
