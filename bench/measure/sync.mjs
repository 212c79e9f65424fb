/**
 * 3. Sync: after a first `rxs sync` of the topic, each round changes 1% of the records through the
 * API (`PATCH /records/{id}` with new data), then times `rxs export --format csv` and a second
 * `rxs sync` back to back. The overhead is `sync / export − 1`, a ratio taken within one round.
 * That sync reads the changes feed (sync/src/feed-cache.ts); beside it, in the same round, the
 * same sync of a second state through a proxy that hides the ETags takes the full path (it
 * downloads the topic and compares), as against a service without the feed.
 * Then, each round, a poll with nothing changed: `rxs sync` asks with the snapshot's ETags and
 * stops (sync/src/probe.ts), timed against a full export, its bytes counted by a proxy.
 * Every timed command starts with the server idle and the disk written back (`sync`): the one
 * before it, or the server's kept listing written after a change, does not share the disk with it.
 */
import { join } from 'node:path';
import { loadSamples, recordData } from '../lib/dataset.mjs';
import { flushDisk, settle } from '../lib/processes.mjs';
import { max, median, ratios } from '../lib/stats.mjs';
import { startCountingProxy } from '../lib/counting-proxy.mjs';
import { startPlainProxy } from '../lib/plain-proxy.mjs';
import { rxsExport, timedRxs } from './export.mjs';

/**
 * `rxs sync` of one topic with its state in `state`, writing the same CSV as the export it is
 * compared with: the difference between the two is the comparison (and the snapshot it keeps).
 */
export function rxsSync({ state, ...options }) {
  return timedRxs('sync', options, ['--state', state]);
}

/** PATCHes the records in `changes` ([id, index] pairs), `parallel` at a time. */
async function changeRecords({ rxs, apiKey, changes, round, parallel = 8 }) {
  const { records: samples } = loadSamples();
  let next = 0;
  let failures = 0;
  async function worker() {
    while (next < changes.length) {
      const [id, index] = changes[next++];
      const data = recordData(index, samples);
      data.justification = `${data.justification} (revised in sync round ${round + 1})`;
      data.priority = ['low', 'medium', 'high'][round % 3];
      const response = await fetch(`${rxs.url}/records/${id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ data }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) failures++;
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker));
  if (failures > 0) throw new Error(`${failures} of ${changes.length} PATCH /records/{id} failed`);
}

export async function measureSync({ rxs, revisionId, size, keyFile, apiKey, changeIds, workDir, runs, log }) {
  // Before each timed command: the server idle and nothing left to write back (see flushDisk).
  const quiet = async () => {
    await settle(rxs.pid);
    flushDisk();
  };
  const state = join(workDir, 'sync-state');
  const out = join(workDir, 'export.csv');
  const syncOut = join(workDir, 'sync.csv');
  const first = await rxsSync({ rxs, revisionId, keyFile, state, out: syncOut });
  const plain = await startPlainProxy(rxs.url);
  const fullState = join(workDir, 'sync-state-full');
  const fullOut = join(workDir, 'sync-full.csv');
  const seconds = { export: [], sync: [], fullSync: [] };
  const peak = { sync: [], export: [] };
  let report;
  let firstSplice;
  try {
    await rxsSync({ rxs: { ...rxs, url: plain.url }, revisionId, keyFile, state: fullState, out: fullOut });
    // The first spliced poll, after the first sync (a full run, which wrote the row index this poll
    // finds its records in; docs/sync.md, "The row index"): timed on its own, before the rounds.
    await changeRecords({ rxs, apiKey, changes: changeIds, round: runs });
    await quiet();
    firstSplice = await rxsSync({ rxs, revisionId, keyFile, state, out: syncOut });
    await rxsSync({ rxs: { ...rxs, url: plain.url }, revisionId, keyFile, state: fullState, out: fullOut });
    log?.(`  first spliced poll (by the index the first sync wrote): ${firstSplice.seconds.toFixed(2)} s`);
    for (let round = 0; round < runs; round++) {
      await changeRecords({ rxs, apiKey, changes: changeIds, round });
      await quiet();
      const exported = await rxsExport({ rxs, revisionId, keyFile, out });
      await quiet();
      const synced = await rxsSync({ rxs, revisionId, keyFile, state, out: syncOut });
      await quiet();
      const full = await rxsSync({ rxs: { ...rxs, url: plain.url }, revisionId, keyFile, state: fullState, out: fullOut });
      if (round === 0) report = synced.stdout.trim().split('\n').slice(0, 6).join('\n');
      seconds.export.push(exported.seconds);
      seconds.sync.push(synced.seconds);
      seconds.fullSync.push(full.seconds);
      peak.sync.push(synced.peakRss);
      peak.export.push(exported.peakRss);
      log?.(
        `  sync round ${round + 1}/${runs}: ${changeIds.length} changed, export ${exported.seconds.toFixed(2)} s, sync (feed) ${synced.seconds.toFixed(2)} s, sync (full) ${full.seconds.toFixed(2)} s`,
      );
    }
  } finally {
    await plain.close();
  }
  // Unchanged polls: the same sync again, through a proxy that counts the bytes both ways.
  const proxy = await startCountingProxy(rxs.url);
  const unchanged = { seconds: [], bytes: [], export: [] };
  try {
    for (let round = 0; round < runs; round++) {
      await quiet();
      const exported = await rxsExport({ rxs, revisionId, keyFile, out });
      await quiet();
      proxy.take();
      const polled = await rxsSync({ rxs: { ...rxs, url: proxy.url }, revisionId, keyFile, state, out: syncOut });
      const bytes = proxy.take();
      if (!/No changes since/.test(polled.stdout))
        throw new Error(`the unchanged poll did a full sync: ${polled.stdout.slice(0, 300)}`);
      unchanged.seconds.push(polled.seconds);
      unchanged.bytes.push(bytes.total);
      unchanged.export.push(exported.seconds);
      log?.(
        `  unchanged poll round ${round + 1}/${runs}: ${bytes.total} bytes, sync ${polled.seconds.toFixed(2)} s, export ${exported.seconds.toFixed(2)} s`,
      );
    }
  } finally {
    await proxy.close();
  }
  return {
    unchangedPoll: {
      seconds: unchanged.seconds,
      bytes: unchanged.bytes,
      median: { sync: median(unchanged.seconds), export: median(unchanged.export), bytes: median(unchanged.bytes) },
      ratio: { syncOverExport: median(ratios(unchanged.seconds, unchanged.export)) },
    },
    changed: changeIds.length,
    firstSync: { seconds: first.seconds, peakRss: first.peakRss },
    firstSplice: { seconds: firstSplice.seconds, peakRss: firstSplice.peakRss },
    seconds,
    median: { export: median(seconds.export), sync: median(seconds.sync), fullSync: median(seconds.fullSync) },
    maxPeakRss: { sync: max(peak.sync), export: max(peak.export) },
    ratio: {
      overhead: median(ratios(seconds.sync, seconds.export).map((r) => r - 1)),
      feedOverExport: median(ratios(seconds.sync, seconds.export)),
      feedOverFull: median(ratios(seconds.sync, seconds.fullSync)),
    },
    report,
  };
}
