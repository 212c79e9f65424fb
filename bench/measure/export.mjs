/**
 * 2. Export: `rxs export --format csv` of the topic, against (a) the limit, downloading the listing
 * with curl to a file and parsing it once with JSON.parse in Node, and (b) what a user would write
 * otherwise, curl piped through a jq program that maps the form keys by the schema and writes CSV.
 * Wall time from spawn to exit (Node start-up included on both sides) and peak RSS (GNU time).
 *
 * The limit is taken twice: from the transfer-limit server (the same bytes from memory: the target
 * is judged against it), and from the RXS server itself, which isolates what the exporter adds to the listing it downloads.
 */
import { createReadStream, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, RXS_BIN } from '../lib/servers.mjs';
import { settle, timedOk } from '../lib/processes.mjs';
import { max, median, ratios } from '../lib/stats.mjs';

const PARSE_ONCE = join(ROOT, 'bench/tools/parse-once.mjs');
const JQ_PROGRAM = join(ROOT, 'bench/tools/records-to-csv.jq');

/** Newlines in a file (CSV rows, when no cell holds a newline, as in the generated data). */
async function countLines(file) {
  let lines = 0;
  for await (const chunk of createReadStream(file)) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return lines;
}

export function listingUrl(rxs, revisionId) {
  return `${rxs.url}/records/?context__knowledge_unit_topic_id=${revisionId}`;
}

/** `rxs <command>` of one topic, `format` (CSV by default) to `out`, plus `extra` options; returns { seconds, peakRss }. */
export function timedRxs(command, { rxs, revisionId, keyFile, out, format = 'csv' }, extra = []) {
  return timedOk(RXS_BIN, [
    command,
    '--url',
    rxs.url,
    '--api-key-file',
    keyFile,
    '--kt',
    revisionId,
    ...extra,
    '--format',
    format,
    '--out',
    out,
    '--quiet',
  ]);
}

/** `rxs export` of one topic to `out`; returns { seconds, peakRss }. */
export function rxsExport(options) {
  return timedRxs('export', options);
}

/** The limit: curl the listing (from `url`) to a file, then JSON.parse it once. */
export async function limitExport({ url, headerFile, file }) {
  const download = await timedOk('curl', ['-sS', '--fail', '-o', file, '-H', `@${headerFile}`, url]);
  const parse = await timedOk(process.execPath, [PARSE_ONCE, file]);
  rmSync(file, { force: true });
  return {
    seconds: download.seconds + parse.seconds,
    download: download.seconds,
    parse: parse.seconds,
    peakRss: parse.peakRss,
    records: Number(parse.stdout.trim()),
  };
}

/** curl | jq: the records mapped by the schema to CSV. */
export async function jqExport({ rxs, revisionId, headerFile, ktFile, out }) {
  const script = 'set -o pipefail; curl -sS --fail -H "@$1" "$2" | jq -r --slurpfile kt "$3" -f "$4" > "$5"';
  return timedOk('bash', [
    '-c',
    script,
    'jq-export',
    headerFile,
    listingUrl(rxs, revisionId),
    ktFile,
    JQ_PROGRAM,
    out,
  ]);
}

export async function measureExport({
  rxs,
  limit,
  revisionId,
  size,
  keyFile,
  headerFile,
  ktFile,
  workDir,
  runs,
  jqRuns,
  log,
}) {
  const rxsOut = join(workDir, 'export.csv');
  const jqOut = join(workDir, 'jq.csv');
  const limitFile = join(workDir, 'limit-listing.json');
  const seconds = { limit: [], limitRxs: [], rxs: [], jq: [] };
  const peak = { limit: [], limitRxs: [], rxs: [], jq: [] };
  const parts = { limit: [], limitRxs: [] };
  const notes = [];
  const limitUrls = { limit: `${limit.url}/`, limitRxs: listingUrl(rxs, revisionId) };

  // Warm-up, and a check that both CSVs hold every record.
  await rxsExport({ rxs, revisionId, keyFile, out: rxsOut });
  const rxsRows = (await countLines(rxsOut)) - 1;
  if (rxsRows !== size) notes.push(`rxs export wrote ${rxsRows} CSV rows for ${size} records`);
  const csvBytes = statSync(rxsOut).size;

  let limitPossible = true;
  for (let round = 0; round < runs; round++) {
    const contenders = ['limit', 'rxs', 'limitRxs', 'jq'];
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]);
    for (const name of order) {
      await settle(rxs.pid);
      if (name === 'rxs') {
        const r = await rxsExport({ rxs, revisionId, keyFile, out: rxsOut });
        seconds.rxs.push(r.seconds);
        peak.rxs.push(r.peakRss);
      } else if (name === 'limit' || name === 'limitRxs') {
        if (!limitPossible) continue;
        try {
          const r = await limitExport({ url: limitUrls[name], headerFile, file: limitFile });
          seconds[name].push(r.seconds);
          peak[name].push(r.peakRss);
          parts[name].push({ download: r.download, parse: r.parse });
        } catch (error) {
          limitPossible = false;
          const reason = String(error.message)
            .split('\n')
            .find((l) => /RangeError|Cannot create a string|Invalid string/.test(l));
          notes.push(
            `the limit cannot be measured: one JSON.parse of the whole listing fails (${(reason ?? error.message.split('\n')[0]).trim()})`,
          );
        }
      } else if (round < jqRuns) {
        const r = await jqExport({ rxs, revisionId, headerFile, ktFile, out: jqOut });
        seconds.jq.push(r.seconds);
        peak.jq.push(r.peakRss);
        if (round === 0) {
          const jqRows = (await countLines(jqOut)) - 1;
          if (jqRows !== size) notes.push(`jq wrote ${jqRows} CSV rows for ${size} records`);
        }
      }
    }
    log?.(
      `  export round ${round + 1}/${runs}: ` +
        Object.entries(seconds)
          .filter(([, v]) => v.length > round)
          .map(([k, v]) => `${k} ${v.at(-1).toFixed(2)} s`)
          .join(', '),
    );
  }
  rmSync(jqOut, { force: true });
  const medianOf = (list, key) => median(list.map((p) => p[key]));
  return {
    csvBytes,
    seconds,
    peakRss: peak,
    limitParts: {
      limit: { download: medianOf(parts.limit, 'download'), parse: medianOf(parts.limit, 'parse') },
      limitRxs: { download: medianOf(parts.limitRxs, 'download'), parse: medianOf(parts.limitRxs, 'parse') },
    },
    median: Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, median(v)])),
    maxPeakRss: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, max(v)])),
    ratio: {
      rxsOverLimit: median(ratios(seconds.rxs, seconds.limit)),
      rxsOverLimitRxs: median(ratios(seconds.rxs, seconds.limitRxs)),
      jqOverRxs: median(ratios(seconds.jq, seconds.rxs)),
    },
    notes,
  };
}
