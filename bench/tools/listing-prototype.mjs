#!/usr/bin/env node
/**
 * A prototype of the listing the closing note of docs/benchmarks.md proposes, for whoever applies
 * it to packages/server: SQLite builds each record's JSON line itself (the same text as
 * `recordJson` in packages/server/src/services/records/repository.ts), joins 1000 of them per
 * statement (`group_concat`, as a BLOB), keyset-paged by id inside one read transaction, and the
 * Buffers go to the socket with backpressure. No API key, no other filter: a measuring aid only.
 *
 *   node bench/tools/listing-prototype.mjs path/to/rxs.db PORT
 *   curl -o proto.json "http://127.0.0.1:PORT/records/?context__knowledge_unit_topic_id=REV"
 *   # compare with the real server's bytes: cmp proto.json rxs.json
 */
import { createRequire } from 'node:module';
import { once } from 'node:events';
import { createServer } from 'node:http';

// better-sqlite3 is the server's dependency; resolve it from there.
const SQLite = createRequire(new URL('../../packages/server/package.json', import.meta.url))(
  'better-sqlite3',
);

const [file, port] = process.argv.slice(2);
if (!file || !port) {
  process.stderr.write('usage: node bench/tools/listing-prototype.mjs DB PORT\n');
  process.exit(2);
}

/** One record as the listing's JSON line, built by SQLite from the stored columns. */
const LINE = `'{"_id":"' || id || '","name":' || json_quote(name) || ',"form":' || form ||
  ',"version":' || json_quote(version) || ',"data":' || data ||
  ',"read_only":' || (CASE WHEN read_only THEN 'true' ELSE 'false' END) ||
  ',"metadata":{"tenant_id":' || json_quote(tenant_id) || '}' ||
  ',"context":{"knowledge_unit_topic_id":' || json_quote(kt_revision_id) ||
  (CASE WHEN length(context) > 2 THEN ',' || substr(context, 2) ELSE '}' END) ||
  ',"audit_info":{"user_id_created":' || json_quote(created_by) ||
  ',"timestamp_created":' || json_quote(created_at) ||
  ',"user_id_last_updated":' || json_quote(updated_by) ||
  ',"timestamp_last_updated":' || json_quote(updated_at) ||
  ',"last_action":' || json_quote(last_action) || '}}'`;

const CHUNK = `SELECT count(*) AS n, max(id) AS last, CAST(group_concat(line, ',' || char(10)) AS BLOB) AS text
  FROM (SELECT id, ${LINE} AS line FROM records
        WHERE tenant_id = ? AND kt_revision_id = ? AND id > ? ORDER BY id LIMIT 1000)`;

createServer(async (request, response) => {
  const revision = new URL(request.url, 'http://localhost').searchParams.get(
    'context__knowledge_unit_topic_id',
  );
  const db = new SQLite(file, { readonly: true });
  try {
    // The real server knows the tenant from the API key; the prototype takes the revision's.
    const tenant = db.prepare('SELECT tenant_id FROM kt_revisions WHERE id = ?').pluck().get(revision);
    const chunk = db.prepare(CHUNK);
    db.exec('BEGIN'); // one snapshot for the whole listing, as one cursor gives today
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    response.write('[\n');
    let after = '';
    let first = true;
    for (;;) {
      const row = chunk.get(tenant, revision, after);
      if (!row.n) break;
      if (!first) response.write(',\n');
      first = false;
      after = row.last;
      if (!response.write(row.text)) await once(response, 'drain');
    }
    db.exec('COMMIT');
    response.end(first ? ']\n' : '\n]\n');
  } finally {
    db.close();
  }
}).listen(Number(port), '127.0.0.1', () => process.stdout.write(`listing prototype on ${port}\n`));
