import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { exportParts } from '../src/export/procedure.js';
import { createWriter, writeExport } from '../src/export/writers/index.js';
import type { ExportFormat } from '../src/export/model.js';
import { HOSTILE_VALUES, hostileRevisionIds, hostileSource } from './support/hostile-corpus.js';

/**
 * The JSON and JSON Lines exports of the hostile corpus, read by Python's json module (the reader
 * of most scripts that consume them): every value comes back exactly as the service held it.
 */

const PYTHON = '/usr/bin/python3';

async function exportText(format: ExportFormat, limits = { maxColumns: 20_000 }): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const writer = createWriter(format, out);
  await writeExport(
    writer,
    exportParts(hostileSource({ wide: true }), {
      revisionIds: hostileRevisionIds({ wide: true }),
      traces: true,
      // The wide record is past the default column limit; these formats carry it when allowed.
      ...limits,
    }),
  );
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs Python over the export on stdin; it prints, as ASCII-escaped JSON, what it read. */
function python(script: string, input: string): unknown {
  const run = spawnSync(PYTHON, ['-c', script], { input, maxBuffer: 1 << 30 });
  if (run.error || run.status !== 0)
    throw new Error(`${PYTHON} failed (install Debian's python3): ${run.error ?? run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString('utf8'));
}

const READ_JSON = `
import json, sys
doc = json.loads(sys.stdin.buffer.read().decode('utf-8', 'surrogatepass'))
recs = [r for t in doc['topics'] for r in t['records']]
print(json.dumps({'records': [{'name': r['name'], 'readableId': r['readableId'], 'values': r['values']} for r in recs],
                  'traces': doc['traces']}, ensure_ascii=True))
`;

const READ_JSONL = `
import json, sys
recs = []
for line in sys.stdin.buffer.read().decode('utf-8', 'surrogatepass').split('\\n'):
    if not line: continue
    obj = json.loads(line)
    if obj['kind'] == 'record': recs.append({'name': obj['name'], 'readableId': obj['readableId'], 'values': obj['values']})
print(json.dumps({'records': recs}, ensure_ascii=True))
`;

type Read = { records: { name: string; readableId: string; values: Record<string, unknown> }[] };

function expectCorpus(read: Read) {
  const hostile = read.records.slice(0, HOSTILE_VALUES.length);
  expect(hostile.map((r) => r.name)).toEqual(HOSTILE_VALUES.map((v) => v.value));
  for (const [i, { value }] of HOSTILE_VALUES.entries())
    expect(hostile[i]!.values).toEqual({ Title: value, Description: value, Status: value, Note: value });
  const wide = read.records[HOSTILE_VALUES.length]!;
  expect(wide.readableId).toBe('WIDE_001');
  expect(Object.keys(wide.values)).toHaveLength(16_401);
  expect(new Set(read.records.map((r) => r.readableId)).size).toBe(read.records.length);
}

describe('JSON and JSON Lines read by Python', () => {
  it('stops at the column limit by default, naming the topic', async () => {
    await expect(exportText('json', {})).rejects.toThrow(/"Wide Tests".*more than the limit of 5000/);
  });

  it('json: every hostile value, the wide record and the traces come back exactly', async () => {
    const read = python(READ_JSON, await exportText('json')) as Read & {
      traces: { source: { readableId?: string } }[];
    };
    expectCorpus(read);
    expect(read.traces).toHaveLength(2);
    expect(read.traces[0]!.source.readableId).toBe(read.records[0]!.readableId);
  });

  it('jsonl: one record line per record, every value exact', async () => {
    expectCorpus(python(READ_JSONL, await exportText('jsonl')) as Read);
  });
});
