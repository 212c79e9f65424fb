/**
 * The report's closing note: for every missed target, why it is missed and what would close the
 * gap. The diagnoses come from CPU profiles (`node --cpu-prof`) of the server and the CLI at 100k
 * records, taken after the listing, export and sync were made batch-based (2026-11-23); the figures
 * quoted from the current run are filled in from `results`. Re-profile after changing the code
 * these notes name.
 */

import { MB, secs, sizeLabel } from './format.mjs';

const x = (r) => (r === undefined ? 'n/a' : `${r.toFixed(r < 10 ? 1 : 0)}x`);

/** The figure at 100k records (the issue's size) if measured, else at the largest size that has it. */
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

const NOTES = {
  'listing-limit': (results) => {
    const l = headlineFigure(results, (s) => s.listing?.median?.rxs);
    const at = l
      ? ` At ${sizeLabel(l.s.size)} records RXS took ${secs(l.s.listing.median.rxs)} against ${secs(l.s.listing.median.limit)} for the same bytes from memory.`
      : '';
    return [
      `**Unchanged listing against the transfer limit.**${at} The kept listing is read from the page`,
      'cache 4 MiB at a time (services/records/listing-cache.ts) and piped to the socket; the request',
      'also authenticates the key (a hash and a lookup) and reads the listing tag. What is left is',
      "Node's file stream against one `res.end(buffer)`: reading the file into memory whole would close",
      "it, at the cost of the server's memory growing with the topic, which the streaming rule forbids.",
    ].join('\n');
  },
  'listing-built': (results) => {
    const l = headlineFigure(results, (s) => s.listing?.median?.rxsBuilt);
    const at = l
      ? ` At ${sizeLabel(l.s.size)} records a listing built from the database took ${secs(l.s.listing.median.rxsBuilt)} against ${secs(l.s.listing.median.limit)} for the same bytes from memory.`
      : '';
    return [
      `**Built listing against the transfer limit.**${at} SQLite builds the records' JSON lines itself`,
      '(`recordJsonSql`, services/records/repository.ts: the same text `recordJson` makes), joins',
      'about 256 KiB of them per statement (`group_concat`), keyset-paged by id inside one read',
      'transaction, and the chunks go to the socket with backpressure (services/records/service.ts,',
      'http/json-array-stream.ts). A CPU profile of a 100k listing (about 0.19 s of CPU): reading the',
      'rows through the `records_by_topic` index about 36 ms, building 100 MB of JSON text in SQLite',
      'about 65 ms, joining each page and copying it into a Buffer about 40 ms, socket writes 35 ms,',
      'garbage collection 20 ms.',
      '',
      "*Tried and left:* each record's finished JSON line stored in a column at write time. Measured",
      'on the 100k dataset (2026-11-25): only reading 100 MB of stored lines out of SQLite took 118 ms',
      'against 45 ms for the limit, and the paged listing of the stored lines 170-230 ms against 240-280',
      'ms for building them: a quarter faster, for a second copy of every record in the database and',
      'a rewrite on every re-approval. Listings of unchanged topics are served from disk instead (the',
      'target above); this figure is what the first listing after a change costs.',
    ].join('\n');
  },
  'listing-json-server': (results) => {
    const l = headlineFigure(results, (s) => s.listing?.ratio?.jsonServerOverRxs);
    return [
      `**Listing against json-server.** ${l ? `At ${sizeLabel(l.s.size)} records json-server took ${x(l.value)} the time of RXS (the target is 10x)` : 'RXS was not 10x faster than json-server'}`,
      '(json-server holds everything in memory and only filters and stringifies; RXS reads from disk).',
      'The fixes are those of the transfer-limit target above.',
    ].join('\n');
  },
  'listing-memory': (results) => {
    const l = headlineFigure(results, (s) => s.listing?.memory?.peakAboveIdle);
    return [
      `**Server memory during the listing.** ${l ? `Peak +${(l.value / MB).toFixed(0)} MB at ${sizeLabel(l.s.size)} records.` : ''}`,
      'The listing streams pages of about 256 KiB pulled as the socket drains; growth beyond that is',
      'garbage not yet collected.',
    ].join('\n');
  },
  'export-limit': (results) => {
    const e = headlineFigure(results, (s) => s.export?.median?.rxs);
    const figures = e
      ? ` At ${sizeLabel(e.s.size)} records: rxs export ${secs(e.s.export.median.rxs)}, the limit ${secs(e.s.export.median.limit)}, the limit downloading from RXS ${secs(e.s.export.median.limitRxs)}.`
      : '';
    return [
      `**Export against the limit.**${figures} The exporter parses every line with \`JSON.parse\`,`,
      'as the limit does once, and then does what the limit does not: it maps each record by the',
      "topic's form, formats and writes the CSV rows and keeps its memory flat. What remains, from a",
      'CPU profile of a 100k export:',
      '',
      '1. *The listing it downloads*: "limit via RXS" in the export table is the same download plus one',
      '   `JSON.parse`, from the RXS server instead of from memory; the listing target above explains',
      '   the difference.',
      '2. *Start-up*: Node and the CLI with the sdk (typebox, csv-stringify, stream-json, commander;',
      "   exceljs and xmlbuilder2 load only for their formats) cost about 0.1 s more than the limit's",
      '   bare Node process; this is most of the gap at 10k records.',
      '3. *Per record*: decoding the UTF-8 body into text (about 150 ms per 100k), mapping, CSV escaping,',
      '   and copying the rows from a temporary file after the header on close (the header must come',
      '   first, and a record carrying a key the schema does not know changes the columns).',
      '',
      '*What would close it*: the listing fixes first; then decoding each chunk once after a UTF-8',
      'check, and writing the rows straight after a provisional header when the schema is closed.',
    ].join('\n');
  },
  'export-jq': (results) => {
    const e = headlineFigure(results, (s) => s.export?.ratio?.jqOverRxs);
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
      'export table grows with the records). The fixes under the limit target narrow it further.',
    ].join('\n');
  },
  'export-memory': (results) => {
    const rows = results.sizes
      .filter((s) => s.export?.maxPeakRss?.rxs !== undefined)
      .map((s) => `${sizeLabel(s.size)}: ${(s.export.maxPeakRss.rxs / MB).toFixed(0)} MB`)
      .join(', ');
    return [
      `**Exporter memory.** Peak RSS ${rows}. Flat across sizes means the streaming works; most of it`,
      "is fixed: Node and the CLI's modules (about 100 MB before the first record), then the batches in",
      'flight (one network chunk of records at a time) and the write buffers.',
    ].join('\n');
  },
  'sync-overhead': (results) => {
    const y = headlineFigure(results, (s) => s.sync?.ratio?.overhead);
    return [
      `**Sync overhead.** ${y ? `At ${sizeLabel(y.s.size)} records the second sync took ${(y.value * 100).toFixed(0)}% longer than the export.` : ''}`,
      'The session (packages/sdk/src/sync/session.ts) serialises each record once, compares it with',
      "the previous snapshot's line as bytes (sync/line-cursor.ts; only changed lines are parsed) and",
      'writes the new snapshot. About 70% of what remains is `JSON.stringify` of each record (about',
      "125 ms per 100k): storing the service's raw record text in the snapshot would remove it. On these",
      'shared machines this figure varies by about ±10 points from run to run.',
    ].join('\n');
  },
  'sync-feed-time': (results) => {
    const y = headlineFigure(results, (s) => s.sync?.ratio?.feedOverExport);
    return [
      `**A poll after 1% changed.** ${y ? `At ${sizeLabel(y.s.size)} records the sync through the changes feed took ${(y.value * 100).toFixed(0)}% of an export's time.` : ''}`,
      'It downloads only the changed records and splices (docs/sync.md, "Spliced polls"; CSV and JSON',
      'lines of one topic without traces): it finds the changed records in the row index the poll before',
      'kept, copies everything between them as byte ranges of the previous output without reading a',
      'row, maps, renders and compares only the changed ones, keeps the snapshot\'s records file as the',
      'base of an overlay of the changes (linked, not copied) and links the kept listing with the',
      'changes beside it. What is left is the floor of a run that rewrites its output: starting Node and',
      'loading the CLI (the unchanged poll of section 3, which does nothing else, is itself more than',
      '10% of an export at 100k records), the service\'s answer to the feed and its parsing, copying',
      'the output (about 32 MB at 100k records, 320 MB at 1M) and its row index, and replacing the',
      'output (the old file freed). What the feed saves the service: a poll reads 1% of the',
      'records instead of all, and moves 1% of the bytes over the network.',
    ].join('\n');
  },
  'sync-unchanged-bytes': (results) => {
    const y = headlineFigure(results, (s) => s.sync?.unchangedPoll?.median?.bytes);
    return [
      `**Unchanged poll, bytes.** ${y ? `At ${sizeLabel(y.s.size)} records an unchanged \`rxs sync\` moved ${y.value} bytes.` : ''}`,
      'It makes one conditional request for the topic and its records',
      '(`GET /records/?…&limit=1&with_revision=true`), answered 304 without a body: the bytes are',
      "headers, about half of them the request's (the API key, the 43-character ETag, what Node's fetch",
      "adds) and half the answer's (ETag, request id, date, keep-alive). A shorter tag (22 characters,",
      '128 bits, is as safe) and fewer headers of its own would take off another 100 bytes or so.',
    ].join('\n');
  },
  'sync-unchanged-time': (results) => {
    const y = headlineFigure(results, (s) => s.sync?.unchangedPoll?.median?.sync);
    return [
      `**Unchanged poll, time.** ${y ? `At ${sizeLabel(y.s.size)} records it took ${secs(y.value)}.` : ''} The`,
      'requests take milliseconds; the rest is starting Node and loading the CLI.',
    ].join('\n');
  },
  'writes-json-server': (results) => {
    const worst = [];
    for (const s of results.sizes) {
      for (const l of s.writes?.levels ?? []) {
        if (l.ratio?.rxsOverJsonServer !== undefined && l.ratio.rxsOverJsonServer < 3)
          worst.push(
            `${sizeLabel(s.size)} records, ${l.connections} connections: ${x(l.ratio.rxsOverJsonServer)}`,
          );
      }
    }
    return [
      `**Writes.** Below 3x json-server at ${worst.join('; ') || 'some points'}. json-server rewrites its`,
      "whole `db.json` on every POST, so it falls behind as the data grows; at small sizes RXS's own cost",
      'per POST shows: in a CPU profile under load, about 2 ms per request in SQLite (API key lookup, the',
      'KT revision and its 8 KB schema loaded and parsed for every record, the insert, and one fsync per',
      "commit with `synchronous = FULL`, about 0.75 ms here), feelin re-parsing the form's FEEL",
      '`conditional.hide` expressions for every record (`HideConditions` in',
      'services/records/validation/conditions.ts caches results within one validation only; about',
      '0.8 ms per POST). Fix: a process-wide bounded cache of hide results keyed by expression and the',
      'values it reads; cache the parsed schema of approved revisions (they never change) in',
      '`TechdocService.loadRevision` or `RecordsService.create`; group commit (several POSTs per',
      'transaction and fsync) if more is needed.',
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
      'record (about 1.2 KB with its index entries, section 7) and entries in its indexes (the key',
      '`(record_id, n)` and `record_versions_as_of`), all written to the WAL',
      'and fsynced with the change. POST inserted a whole row before history too and keeps about 90%.',
      'A PATCH rewrote one row in place; now it also inserts one, which is why it sits at about 80%.',
      'Two experiments at 10k records (2026-11-25) moved PATCH by no more than the noise (±3 points):',
      'running its transaction synchronously on better-sqlite3 (no `await` between statements), and',
      'dropping a third index, on `(tenant_id, at)`, which no query used; it is gone since (it saves',
      'disk and an index entry per write). Beyond that, the extra row is the price of the audit trail.',
    ].join('\n');
  },
};

export function closingNotes(results, judged) {
  const missed = judged.filter((t) => t.verdict === 'MISSED');
  const lines = ['## Closing note', ''];
  if (missed.length === 0) {
    lines.push('Every target measured in this run was met.');
  } else {
    lines.push(
      `Missed in this run: ${missed.map((t) => `${t.label.replace(/^\d+b?\. /, '')} (at ${t.missedAt.map(sizeLabel).join(', ')})`).join('; ')}. Why, and what would close each gap:`,
      '',
    );
    for (const t of missed) {
      const note = NOTES[t.id];
      if (note) lines.push(note(results), '');
    }
  }
  const lookups = headlineFigure(results, (s) => s.lookups?.record?.rps);
  if (lookups) {
    lines.push(
      `**Point lookups** (no target): ${Math.round(lookups.s.lookups.kt.rps)} and ${Math.round(lookups.value)} requests/s at ${sizeLabel(lookups.s.size)} records`,
      '(`GET /kt/{id}` and `GET /records/{id}`), the load generator on the same two cores. Compiled',
      'statements are reused by SQL text (storage/database.ts), which halved the cost of a lookup query.',
    );
  }
  return lines.join('\n');
}
