#!/usr/bin/env node
/**
 * A small import for the benchmark, until `rxs import` writes through `POST /records/bulk`: reads
 * a CSV with the importer's own reader, fills each row's form fields by their labels, and writes
 * the rows as creates with the importer's batch writer (packages/exchange/src/import/bulk-writer.ts:
 * 500 rows or 4 MiB a batch, two batches in flight, every row and batch under its idempotency key).
 * It leaves out what `rxs import` adds: matching against the topic's records and the check against
 * the form before writing (the service checks every row again anyway).
 *
 *   node bench/lib/bulk-driver.mjs URL KEY_FILE REVISION FILE.csv   # prints {"rows":N,"created":N}
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '@rxs/client';
import { openRowSource } from '@rxs/exchange';
import { ROOT } from './servers.mjs';

const { BulkWriter } = await import(join(ROOT, 'packages/exchange/dist/import/bulk-writer.js'));
const { HashedCounts } = await import(join(ROOT, 'packages/exchange/dist/export/id-table.js'));

const [url, keyFile, revision, file] = process.argv.slice(2);
const client = createClient({
  techdocUrl: url,
  recordsUrl: url,
  tracerUrl: url,
  apiKey: readFileSync(keyFile, 'utf8').trim(),
});
const topic = await client.techdoc.getTopic(revision);
/** The form's fields by label, as the importer maps columns; checklists take `; `-separated values. */
const fields = new Map();
const walk = (components = []) => {
  for (const component of components) {
    if (component.key && component.label && component.input !== false)
      fields.set(component.label, { key: component.key, list: component.type === 'checklist' });
    walk(component.components);
    for (const column of component.columns ?? []) walk(column.components);
  }
};
walk(topic.knowledge_topic_schema.components);

const key = (parts) =>
  `rxs-import-${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 40)}`;
const writer = new BulkWriter(client, 2, true, false, async () => new HashedCounts());
let rows = 0;
for await (const row of openRowSource(file).rows()) {
  rows++;
  const data = {};
  for (const [column, cell] of row.values) {
    const field = fields.get(column);
    const text = 'text' in cell ? cell.text : String(cell.value ?? '');
    if (!field || text === '') continue;
    data[field.key] = field.list ? text.split(';').map((value) => value.trim()) : text;
  }
  const create = { name: row.facts.name, form: {}, data, context: { knowledge_unit_topic_id: revision } };
  await writer.write({
    where: row.where,
    action: 'create',
    problems: [],
    warnings: [],
    datesOfDateTimes: [],
    create,
    idempotencyKey: key([revision, 'create', row.where, create]),
  });
}
await writer.drain();
if (writer.fatal || writer.failures.length > 0) {
  process.stderr.write(
    `${JSON.stringify({ fatal: writer.fatal?.message, failures: writer.failures.slice(0, 5) })}\n`,
  );
  process.exit(1);
}
process.stdout.write(`${JSON.stringify({ rows, created: writer.created, requests: writer.requests })}\n`);
