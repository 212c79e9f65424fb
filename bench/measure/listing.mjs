/**
 * 1. Listing: `GET /records/?context__knowledge_unit_topic_id=REV` downloaded in full by curl, against
 * (a) the transfer limit (the same bytes from memory) and (b) json-server 0.17 with the same filter
 * (`?context.knowledge_unit_topic_id=REV`). The contenders take turns within each round, so every
 * ratio compares figures taken seconds apart. The RXS server's memory is its peak RSS during the
 * listing above its RSS just before it.
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

export async function measureListing({ rxs, limit, jsonServer, revisionId, headerFile, runs, log }) {
  const contenders = [
    { name: 'limit', url: `${limit.url}/`, pid: limit.pid },
    { name: 'rxs', url: `${rxs.url}/records/?context__knowledge_unit_topic_id=${revisionId}`, pid: rxs.pid },
  ];
  if (jsonServer) {
    contenders.push({
      name: 'jsonServer',
      url: `${jsonServer.url}/records?context.knowledge_unit_topic_id=${revisionId}`,
      pid: jsonServer.pid,
    });
  }
  const seconds = Object.fromEntries(contenders.map((c) => [c.name, []]));
  const bytes = {};
  const memory = [];
  // Warm-up: one request each (JIT, page cache), not counted.
  for (const c of contenders) bytes[c.name] = (await download(c.url, headerFile)).bytes;
  for (let round = 0; round < runs; round++) {
    // Rotate the order, so no contender always runs right after the heavy one.
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]);
    for (const c of order) {
      await settle(c.pid);
      if (c.name === 'rxs') {
        const { value, idle, peakAbove } = await peakAboveStart(c.pid, () => download(c.url, headerFile));
        seconds.rxs.push(value.seconds);
        memory.push({ idle, peakAbove });
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
    },
    memory: {
      idleRss: median(memory.map((m) => m.idle)),
      peakAboveIdle: max(memory.map((m) => m.peakAbove)),
      peakAboveIdleMedian: median(memory.map((m) => m.peakAbove)),
    },
  };
}
