/**
 * 1. Listing: `GET /records/?context__knowledge_unit_topic_id=REV` downloaded in full by curl, against
 * (a) the transfer limit (the same bytes from memory) and (b) json-server 0.17 with the same filter
 * (`?context.knowledge_unit_topic_id=REV`). RXS answers an unchanged topic from the listing it kept
 * on disk; `rxsBuilt`, a second RXS server on the same database with the cache off, is
 * what a listing built from the database costs (the first after a change, plus writing the file). The contenders take turns within each round, so every
 * ratio compares figures taken seconds apart. The same listing as of now (`&as_of=`, read from the
 * records' history) runs as one more contender: it must stream like the present listing,
 * in memory that does not grow with the record count. The RXS server's memory is its peak RSS
 * during a listing above its RSS just before it.
 */
import { memoryOf, resetPeakMemory, settle, timedOk } from '../lib/processes.mjs';
import { max, median, ratios } from '../lib/stats.mjs';

/** One full download with curl; returns seconds (curl's own time_total) and bytes. */
export async function download(url, headerFile) {
  const result = await timedOk('curl', [
    '-sS',
    '--fail',
    '-o',
    '/dev/null',
    '-H',
    `@${headerFile}`,
    '-w',
    '%{time_total} %{size_download}',
    url,
  ]);
  const [seconds, bytes] = result.stdout.trim().split(' ').map(Number);
  return { seconds, bytes };
}

/** Peak RSS above the RSS at the start, while `work` runs (peak from VmHWM, else sampled). */
export async function peakAboveStart(pid, work) {
  const before = memoryOf(pid);
  const exact = resetPeakMemory(pid);
  let sampled = before?.rss ?? 0;
  const timer = setInterval(() => {
    const now = memoryOf(pid);
    if (now && now.rss > sampled) sampled = now.rss;
  }, 5);
  try {
    const value = await work();
    const after = memoryOf(pid);
    const peak = exact && after ? Math.max(after.peak, sampled) : sampled;
    return { value, idle: before?.rss, peakAbove: before ? peak - before.rss : undefined };
  } finally {
    clearInterval(timer);
  }
}

export async function measureListing({ rxs, rxsBuilt, limit, jsonServer, revisionId, headerFile, runs, log }) {
  const path = `/records/?context__knowledge_unit_topic_id=${revisionId}`;
  const present = `${rxs.url}${path}`;
  // Any moment after the dataset was written: every record, as its newest version.
  const asOf = new Date().toISOString();
  const contenders = [
    { name: 'limit', url: `${limit.url}/`, pid: limit.pid },
    { name: 'rxs', url: present, pid: rxs.pid },
    { name: 'rxsAsOf', url: `${present}&as_of=${asOf}`, pid: rxs.pid },
  ];
  if (rxsBuilt) contenders.push({ name: 'rxsBuilt', url: `${rxsBuilt.url}${path}`, pid: rxsBuilt.pid });
  if (jsonServer) {
    contenders.push({
      name: 'jsonServer',
      url: `${jsonServer.url}/records?context.knowledge_unit_topic_id=${revisionId}`,
      pid: jsonServer.pid,
    });
  }
  const seconds = Object.fromEntries(contenders.map((c) => [c.name, []]));
  const bytes = {};
  const memory = { rxs: [], rxsAsOf: [], rxsBuilt: [] };
  // Warm-up: one request each (JIT, page cache), not counted.
  for (const c of contenders) bytes[c.name] = (await download(c.url, headerFile)).bytes;
  for (let round = 0; round < runs; round++) {
    // Rotate the order, so no contender always runs right after the heavy one.
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]);
    for (const c of order) {
      await settle(c.pid);
      if (c.name in memory) {
        const { value, idle, peakAbove } = await peakAboveStart(c.pid, () => download(c.url, headerFile));
        seconds[c.name].push(value.seconds);
        memory[c.name].push({ idle, peakAbove });
      } else {
        seconds[c.name].push((await download(c.url, headerFile)).seconds);
      }
    }
    log?.(
      `  listing round ${round + 1}/${runs}: ` +
        contenders.map((c) => `${c.name} ${seconds[c.name].at(-1).toFixed(3)} s`).join(', '),
    );
  }
  return {
    bytes,
    seconds,
    median: Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, median(v)])),
    ratio: {
      rxsOverLimit: median(ratios(seconds.rxs, seconds.limit)),
      jsonServerOverRxs: jsonServer ? median(ratios(seconds.jsonServer, seconds.rxs)) : undefined,
      asOfOverPresent: median(ratios(seconds.rxsAsOf, seconds.rxs)),
      builtOverLimit: rxsBuilt ? median(ratios(seconds.rxsBuilt, seconds.limit)) : undefined,
    },
    memory: memoryFigures(memory.rxs),
    asOfMemory: memoryFigures(memory.rxsAsOf),
    builtMemory: rxsBuilt ? memoryFigures(memory.rxsBuilt) : undefined,
    // The same records either way: the as-of listing of now is the present listing, byte for byte
    // in length (the route's tests compare the bytes themselves).
    asOfSameBytes: bytes.rxsAsOf === bytes.rxs,
    builtSameBytes: rxsBuilt ? bytes.rxsBuilt === bytes.rxs : undefined,
  };
}

function memoryFigures(samples) {
  return {
    idleRss: median(samples.map((m) => m.idle)),
    peakAboveIdle: max(samples.map((m) => m.peakAbove)),
    peakAboveIdleMedian: median(samples.map((m) => m.peakAbove)),
  };
}
