/**
 * What the report says under a missed target: why it is missed and what would close the gap, with
 * the figures filled in from the results it renders. The diagnoses come from CPU profiles
 * (`node --cpu-prof`) and `strace` of the server and the CLI; they describe the code the figures
 * were measured on, so re-profile after changing the code a note names.
 */

import { MB, secs, sizeLabel } from './format.mjs';

const x = (r) => (r === undefined ? 'n/a' : `${r.toFixed(r < 10 ? 1 : 0)}x`);
const percent = (v) => `${(v * 100).toFixed(v < 0.1 ? 1 : 0)}%`;

/** The figure at 100k records (the targets' size) if measured, else at the largest size that has it. */
function headlineFigure(results, pick) {
  const order = [...results.sizes].reverse();
  const headline = order.findIndex((s) => s.size === 100_000);
  if (headline > 0) order.unshift(...order.splice(headline, 1));
  for (const s of order) {
    const value = pick(s);
    if (value !== undefined && value !== null && !(typeof value === 'number' && Number.isNaN(value)))
      return { s, value };
  }
  return undefined;
}

/** The figure where `target` was missed: at 100k records if missed there, else at the largest such size. */
function missedFigure(results, target, pick) {
  return headlineFigure({ sizes: results.sizes.filter((s) => target.missedAt.includes(s.size)) }, pick);
}

const NOTES = {
  'listing-limit': (results, target) => {
    const l = missedFigure(results, target, (s) => s.listing?.median?.rxs);
    const at = l
      ? ` At ${sizeLabel(l.s.size)} records RXS took ${secs(l.s.listing.median.rxs)} against ${secs(l.s.listing.median.limit)} for the same bytes from memory.`
      : '';
    return [
      `**Unchanged listing against the transfer limit.**${at} The kept listing is read from the page`,
      'cache into a few buffers that are reused once the response no longer holds them',
      '(services/records/kept-file-stream.ts) and piped to the socket; the request also authenticates',
      'the key (a hash and a lookup) and reads the listing tag. Reading the file into memory whole',
      "would be faster, at the cost of the server's memory growing with the topic, which the",
      'streaming rule forbids.',
    ].join('\n');
  },
  'listing-built': (results, target) => {
    const l = missedFigure(results, target, (s) => s.listing?.median?.rxsBuilt);
    const at = l
      ? ` At ${sizeLabel(l.s.size)} records a listing built from the database took ${secs(l.s.listing.median.rxsBuilt)} against ${secs(l.s.listing.median.limit)} for the same bytes from memory.`
      : '';
    return [
      `**Built listing against the transfer limit.**${at} SQLite builds the records' JSON lines itself`,
      '(`recordJsonSql`, services/records/repository.ts: the same text `recordJson` makes), joins',
      'about 256 KiB of them per statement (`group_concat`), keyset-paged by id inside one read',
      'transaction, and the chunks go to the socket with backpressure (storage/sqlite/line-pages.ts,',
      'http/json-array-stream.ts). A CPU profile of a 100k listing (about 0.19 s of CPU): reading the',
      'rows through the `records_by_topic` index about 36 ms, building 100 MB of JSON text in SQLite',
      'about 65 ms, joining each page and copying it into a Buffer about 40 ms, socket writes 35 ms,',
      'garbage collection 20 ms.',
      '',
      "*Tried and left:* each record's finished JSON line stored in a column at write time. On the",
      '100k dataset, only reading 100 MB of stored lines out of SQLite took 118 ms against 45 ms for the',
      'limit, and the paged listing of the stored lines 170-230 ms against 240-280 ms for building',
      'them: a quarter faster, for a second copy of every record in the database and a rewrite on',
      'every re-approval. Listings of unchanged topics are served from disk instead (the target',
      'above); this figure is what the first listing after a change costs.',
    ].join('\n');
  },
  'listing-json-server': (results, target) => {
    const l = missedFigure(results, target, (s) => s.listing?.ratio?.jsonServerOverRxs);
    return [
      `**Listing against json-server.** ${l ? `At ${sizeLabel(l.s.size)} records json-server took ${x(l.value)} the time of RXS (the target is 10x)` : 'RXS was not 10x faster than json-server'}`,
      '(json-server holds everything in memory and only filters and stringifies; RXS reads from disk).',
      'The fixes are those of the transfer-limit target above.',
    ].join('\n');
  },
  'listing-memory': (results, target) => {
    const l = missedFigure(results, target, (s) => s.listing?.memory?.peakAboveIdle);
    return [
      `**Server memory during the listing.** ${l ? `Peak +${(l.value / MB).toFixed(0)} MB at ${sizeLabel(l.s.size)} records.` : ''}`,
      'The listing streams pages of about 256 KiB pulled as the socket drains; growth beyond that is',
      'garbage not yet collected.',
    ].join('\n');
  },
  'export-limit': (results, target) => {
    const e = missedFigure(results, target, (s) => s.export?.median?.rxs);
    const figures = e
      ? ` At ${sizeLabel(e.s.size)} records: rxs export ${secs(e.s.export.median.rxs)}, the limit ${secs(e.s.export.median.limit)}, the limit downloading from RXS ${secs(e.s.export.median.limitRxs)}.`
      : '';
    return [
      `**Export against the limit.**${figures} The exporter parses every line with \`JSON.parse\`,`,
      'as the limit does once, and then does what the limit does not: it maps each record by the',
      "topic's form, formats and writes the CSV rows and keeps its memory flat. What remains, from a",
      'CPU profile of a 100k export:',
      '',
      '1. *The listing it downloads*: "limit via RXS" in the table is the same download plus one',
      '   `JSON.parse`, from the RXS server instead of from memory; section 1 explains the difference.',
      "2. *Start-up*: starting Node and loading the CLI cost more than the limit's bare Node process;",
      '   this is most of the gap at 10k records.',
      '3. *Per record*: decoding the UTF-8 body into text (about 150 ms per 100k), mapping, CSV escaping,',
      '   and copying the rows from a temporary file after the header on close (the header must come',
      '   first, and a record carrying a key the schema does not know changes the columns).',
      '',
      '*What would close it*: the listing fixes first; then decoding each chunk once after a UTF-8',
      'check, and writing the rows straight after a provisional header when the schema is closed.',
    ].join('\n');
  },
  'export-jq': (results, target) => {
    const e = missedFigure(results, target, (s) => s.export?.ratio?.jqOverRxs);
    const l = headlineFigure(results, (s) =>
      s.export?.median?.jq !== undefined && s.export?.median?.limit !== undefined
        ? s.export.median.jq / s.export.median.limit
        : undefined,
    );
    return [
      `**Export against curl | jq.** ${e ? `At ${sizeLabel(e.s.size)} records curl | jq took ${x(e.value)} the time of rxs export (the target is 5x).` : ''}`,
      `${l ? `On this machine curl | jq took only ${x(l.value)} the time of the limit itself at ${sizeLabel(l.s.size)} records (the issue measured 0.7 s and 6.6 s, about 9x), so` : 'Here'}`,
      'being 5x faster than jq would mean beating one `JSON.parse` of the listing, which no exporter that',
      'parses the records can: jq 1.6 parses in C and keeps everything in memory (its peak RSS in the',
      'table grows with the records). The fixes under the limit target narrow it further.',
    ].join('\n');
  },
  'export-memory': (results) => {
    const sizes = results.sizes.filter((s) => s.export?.maxPeakRss?.rxs !== undefined);
    const rows = sizes
      .map((s) => `${sizeLabel(s.size)} ${(s.export.maxPeakRss.rxs / MB).toFixed(0)} MB`)
      .join(', ');
    const [before, last] = sizes.slice(-2);
    const growth =
      before && last
        ? ` From ${sizeLabel(before.size)} to ${sizeLabel(last.size)} records it grows by about ${(
            (last.export.maxPeakRss.rxs - before.export.maxPeakRss.rxs) /
            (last.size - before.size)
          ).toFixed(
            0,
          )} bytes a record: something the exporter holds grows with the topic, and no heap profile has named it yet.`
        : '';
    return [
      `**Exporter memory.** Peak RSS ${rows}.${growth} Most of the peak is fixed: Node and the CLI's`,
      'modules before the first record, then the batches in flight (one network chunk of records at a',
      'time) and the write buffers. *What would close it*: a heap snapshot of a 1M export near its peak,',
      'to find what is kept per record.',
    ].join('\n');
  },
  'sync-overhead': (results, target) => {
    const y = missedFigure(results, target, (s) => s.sync?.ratio?.overhead);
    return [
      `**Sync overhead.** ${y ? `At ${sizeLabel(y.s.size)} records the second sync took ${(y.value * 100).toFixed(0)}% longer than the export.` : ''}`,
      'A sync that can splice (CSV or JSON lines of one topic without traces, the row index of the poll',
      'before at hand; docs/sync.md) writes only the changed records; one that cannot downloads the',
      "topic and compares every record with the previous snapshot's line as bytes",
      '(sync/line-cursor.ts), which costs the export and the comparison.',
    ].join('\n');
  },
  'sync-feed-time': (results, target) => {
    const y = missedFigure(results, target, (s) => s.sync?.ratio?.feedOverExport);
    const met = results.sizes.filter((s) => s.sync?.ratio?.feedOverExport <= 0.1);
    const poll = y?.s.sync.unchangedPoll;
    return [
      `**A poll after 1% changed.** ${
        y
          ? `At ${sizeLabel(y.s.size)} records the sync through the changes feed took ${percent(y.value)} of an export's time (${secs(y.s.sync.median.sync)} against ${secs(y.s.sync.median.export)})${met.length ? `; at ${met.map((s) => `${sizeLabel(s.size)} ${percent(s.sync.ratio.feedOverExport)}`).join(', ')}, within the target` : ''}.`
          : ''
      }`,
      'It downloads only the changed records and splices (docs/sync.md, "Spliced polls"): it finds them',
      'in the row index the poll before kept, copies everything between them as byte ranges of the',
      'previous output without reading a row, maps, renders and compares only the changed ones, writes',
      "the snapshot as an overlay of the changes on the previous snapshot's records file, and links the",
      'kept listing with the changes beside it. What is left at 100k records (CPU profiles and `strace`',
      'of single polls): starting Node (`node -e 0` alone takes about 0.1 s here), loading the bundled',
      `CLI and the requests that find a change (about 0.1 s more${poll ? `; the unchanged poll, which does nothing else, took ${percent(poll.ratio.syncOverExport)} of an export in the same rounds` : ''}),`,
      "the feed's 1,000 records and their parsing (about 0.05 s), the splice (0.25-0.35 s: copying the",
      "34 MB output by byte ranges, the index's 100,000 entries, the snapshot's changed lines) and the",
      'commit (the kept changes, the report, renames and their fsyncs, about 0.1 s). Start-up and the',
      'requests cost the same at any size: at a million records, where the export takes ten times as',
      'long, the poll is within the target. What would close the gap at 100k is an output changed in place, which the',
      'atomic replace that readers of the file rely on does not allow. What the feed saves the service:',
      'a poll reads 1% of the records instead of all, and moves 1% of the bytes over the network.',
    ].join('\n');
  },
  'sync-unchanged-bytes': (results, target) => {
    const y = missedFigure(results, target, (s) => s.sync?.unchangedPoll?.median?.bytes);
    return [
      `**Unchanged poll, bytes.** ${y ? `At ${sizeLabel(y.s.size)} records an unchanged \`rxs sync\` moved ${y.value} bytes.` : ''}`,
      'It makes one conditional request for the topic and its records, answered 304 without a body:',
      "the bytes are headers, the request's (the API key, the ETags) and the answer's (ETag, request",
      'id, date, keep-alive).',
    ].join('\n');
  },
  'sync-unchanged-time': (results, target) => {
    const y = missedFigure(results, target, (s) => s.sync?.unchangedPoll?.median?.sync);
    return [
      `**Unchanged poll, time.** ${y ? `At ${sizeLabel(y.s.size)} records it took ${secs(y.value)}.` : ''} The`,
      'request takes milliseconds; the rest is starting Node and loading the CLI.',
    ].join('\n');
  },
  'writes-json-server': (results) => {
    const worst = results.sizes.flatMap((s) =>
      (s.writes?.levels ?? [])
        .filter((l) => l.ratio?.rxsOverJsonServer !== undefined && l.ratio.rxsOverJsonServer < 3)
        .map(
          (l) =>
            `${sizeLabel(s.size)} records, ${l.connections} connections: ${x(l.ratio.rxsOverJsonServer)}`,
        ),
    );
    return [
      `**Writes.** Below 3x json-server at ${worst.join('; ') || 'some points'}. json-server rewrites its`,
      "whole `db.json` on every POST, so it falls behind as the data grows; at small sizes RXS's own cost",
      'per POST shows: the API key lookup, the topic revision and its schema, validation (including',
      "the form's FEEL `conditional.hide` expressions), the insert with its history row, and one fsync",
      'per commit (the WAL synced before the 201). Group commit (several POSTs per transaction)',
      'would raise it further.',
    ].join('\n');
  },
  'history-writes': (results) => {
    const worst = results.sizes.flatMap((s) =>
      (s.history?.levels ?? []).flatMap((l) =>
        ['post', 'patch']
          .filter((op) => l[op]?.ratio !== undefined && l[op].ratio < 0.8)
          .map(
            (op) =>
              `${op.toUpperCase()} at ${l.connections} connections, ${sizeLabel(s.size)} records: ${(l[op].ratio * 100).toFixed(1)}%`,
          ),
      ),
    );
    return [
      `**Writes with history.** Below 80% of the release before history at ${worst.join('; ') || 'some points'}.`,
      'Each change appends its version in the same transaction: one more row about the size of the',
      'record (about 1.2 KB with its index entries, see the storage table) and entries in its indexes',
      '(the key `(record_id, n)` and `record_versions_as_of`), all written to the WAL and fsynced with',
      'the change. A PATCH rewrote one row in place before history; now it also inserts one, which is',
      'why it loses most. Running its transaction synchronously on better-sqlite3 (no `await` between',
      'statements) moved it by no more than the noise (±3 points). The ratio also moves with the',
      "machine's load by tens of points from run to run: re-measure on a quiet machine before reading a",
      'miss as a regression. Beyond that, the extra row is the price of the audit trail.',
    ].join('\n');
  },
};

/** The notes under a section's missed targets (`missed`: entries of `judge`), or '' when none missed. */
export function missedTargetNotes(results, missed) {
  return missed
    .map((t) => NOTES[t.id]?.(results, t))
    .filter(Boolean)
    .join('\n\n');
}
