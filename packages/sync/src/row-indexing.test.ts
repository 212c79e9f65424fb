import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type {
  ExportedField,
  ExportedRecord,
  ExportedTopic,
  ExportPart,
  RowObserver,
} from '../../exchange/src/export/model.js';
import { createWriter } from '../../exchange/src/export/writers/index.js';
import { missingReader, PYTHON, shouldSkip } from '../../exchange/test/support/spreadsheet-readers.js';
import { createSyncSession, readSyncState, renderingOf, type SpliceFormat } from './index.js';
import { readableIdHash, RowIndexReader } from './row-index.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-row-indexing-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

const oid = (n: number, prefix = '6a') => `${prefix}${n.toString(16).padStart(22, '0')}`;
const FIELDS: ExportedField[] = [
  { key: 'title_k', name: 'title', source: 'service-key', type: 'textfield' },
  { key: 'text_k', name: 'text', source: 'service-key', type: 'textarea' },
];
const TOPIC: ExportedTopic = {
  revisionId: oid(1, 'bb'),
  historyId: oid(1, 'aa'),
  name: 'System Requirements',
  version: '1.0',
  status: 'approved',
  latestRevisionId: oid(1, 'bb'),
  schema: { components: [] },
  fields: FIELDS,
};

function* parts(records: readonly ExportedRecord[]): Generator<ExportPart> {
  yield {
    kind: 'header',
    header: {
      exportedAt: '2026-11-26T12:00:00.000Z',
      servers: { techdoc: 'http://t.test', records: 'http://r.test', tracer: 'http://x.test' },
      revisionIds: [TOPIC.revisionId],
      withTraces: false,
    },
  };
  yield { kind: 'topic', topic: TOPIC };
  for (const record of records) yield { kind: 'record', record };
  yield { kind: 'topic-end', topic: TOPIC, recordCount: records.length };
  yield { kind: 'end', warnings: ['a warning, "quoted"\nover two lines'] };
}

/**
 * A full run as `rxs sync` makes it: the parts go, in batches of `batch`, to the format's own
 * writer (into a file) and to a session that indexes the rows, side by side; the writer tells the
 * session each row; then the output's size decides whether the index stays (`sizeSeen`: a wrong one).
 */
async function fullRun(
  format: SpliceFormat,
  records: readonly ExportedRecord[],
  batch = 7,
  sizeSeen = 0,
  tell = (onRow: RowObserver) => onRow,
) {
  const dir = join(root, `run-${++runs}`);
  const output = join(root, `run-${runs}.${format}`);
  const stream = createWriteStream(output);
  const session = await createSyncSession(dir);
  const writer = createWriter(format, stream, {
    tempDir: root,
    onRow: tell(session.indexRows(renderingOf(format))),
  });
  const all = [...parts(records)];
  for (let at = 0; at < all.length; at += batch) {
    const parts = all.slice(at, at + batch);
    await Promise.all([
      (async () => {
        for (const part of parts) await writer.write(part);
      })(),
      session.writeParts(parts),
    ]);
  }
  await writer.close();
  if (!stream.writableFinished) await finished(stream);
  const kept = await session.finishRowIndex(statSync(output).size + sizeSeen);
  await session.commit();
  const state = (await readSyncState(dir))!;
  const stored = state.topics[0]!;
  return { dir, output, state, stored, kept, generation: join(dir, state.generation) };
}

async function entries(file: string) {
  const reader = await RowIndexReader.open(file);
  const found: { id: string; hash: readonly [number, number]; line: number; row: number }[] = [];
  try {
    while (await reader.fill()) {
      found.push({
        id: reader.nextId(),
        hash: reader.nextHash(),
        line: reader.nextLine(),
        row: reader.nextRow(),
      });
      reader.skip();
    }
    return { header: reader.header, found };
  } finally {
    await reader.close();
  }
}

/** Values as users write them: line breaks, quotes, separators, markup, formulas, non-ASCII, emoji. */
const awkward = fc.string({
  unit: fc.constantFrom(
    'a',
    'Z',
    ' ',
    '\n',
    '\r\n',
    '"',
    ',',
    ';',
    '<b>',
    '=',
    'é',
    '€',
    '😀',
    '\u2028',
    '\\',
  ),
  maxLength: 24,
});
const recordsOf = fc.uniqueArray(fc.nat({ max: 5000 }), { minLength: 1, maxLength: 40 }).chain((numbers) =>
  fc.tuple(
    ...[...numbers]
      .sort((a, b) => a - b)
      .map((n) =>
        fc.record({ title: awkward, text: awkward }).map((values): ExportedRecord => ({
          id: oid(n),
          readableId: `REQ-${n}`,
          name: `Requirement ${n}`,
          version: '1',
          topicRevisionId: TOPIC.revisionId,
          values,
        })),
      ),
  ),
);

const python = missingReader(PYTHON, 'python3');

/**
 * Each text read by Python's csv module on its own (`newline=''`, as a file of it would be):
 * the records it holds, cell by cell.
 */
function pythonCsvRecords(texts: readonly string[]): string[][][] {
  const script = [
    'import csv, io, json, sys',
    'texts = json.load(sys.stdin)',
    "print(json.dumps([list(csv.reader(io.StringIO(t, newline=''))) for t in texts]))",
  ].join('\n');
  return JSON.parse(execFileSync(PYTHON, ['-c', script], { input: JSON.stringify(texts), encoding: 'utf8' }));
}

describe('the row index of a full run', () => {
  // What a poll copies by the index must be whole CSV records as a real reader sees them: a slice
  // that cut a quoted line break would splice half records into the next output.
  it.skipIf(shouldSkip(python))(
    "csv: each row the index points at is exactly one record to Python's csv, whose cells are the record's",
    async () => {
      if (python) throw new Error(python);
      await fc.assert(
        fc.asyncProperty(recordsOf, fc.integer({ min: 1, max: 50 }), async (records, batch) => {
          const { output, stored, generation } = await fullRun('csv', records, batch);
          const { header, found } = await entries(join(generation, stored.rows!));
          const written = readFileSync(output).toString('utf8');
          const bytes = Buffer.from(written);
          const slices = found.map((entry, i) =>
            bytes.subarray(entry.row, found[i + 1]?.row ?? header.rowsEnd).toString('utf8'),
          );
          const [whole, ...each] = pythonCsvRecords([written.replace(/^\uFEFF/, ''), ...slices]);
          const columns = whole![0]!;
          expect(whole!.slice(1)).toEqual(each.map((rows) => rows[0]));
          each.forEach((rows, i) => {
            expect(rows).toHaveLength(1);
            const cells = Object.fromEntries(columns.map((column, c) => [column, rows[0]![c]]));
            expect(cells).toMatchObject({ _id: records[i]!.id, readable_id: records[i]!.readableId });
            expect(rows[0]).toHaveLength(columns.length);
          });
        }),
        { numRuns: 15 },
      );
    },
  );

  for (const format of ['csv', 'jsonl'] as const) {
    it(`${format}: each entry points at its record's row in the output the writer wrote and at its snapshot line`, async () => {
      await fc.assert(
        fc.asyncProperty(recordsOf, fc.integer({ min: 1, max: 50 }), async (records, batch) => {
          const { output, stored, kept, generation } = await fullRun(format, records, batch);
          expect(kept).toBe(true);
          expect(stored.rows).toBe('topic-1.rows');
          const { header, found } = await entries(join(generation, stored.rows!));
          const written = readFileSync(output);
          const lines = readFileSync(join(generation, stored.file));
          expect(header.count).toBe(records.length);
          expect(header.linesEnd).toBe(lines.length);
          expect(found.map((entry) => entry.id)).toEqual(records.map((record) => record.id));
          found.forEach((entry, i) => {
            const rowEnd = found[i + 1]?.row ?? header.rowsEnd;
            const row = written.subarray(entry.row, rowEnd).toString('utf8');
            const line = lines.subarray(entry.line, found[i + 1]?.line ?? header.linesEnd).toString('utf8');
            expect(JSON.parse(line).id).toBe(entry.id);
            if (format === 'csv') {
              // A row starts with the id cell and the readable id, and ends a CSV record.
              expect(row.startsWith(`${entry.id},REQ-`)).toBe(true);
              expect(row.endsWith('\r\n')).toBe(true);
              expect(entry.hash).toEqual(readableIdHash(records[i]!.readableId));
            } else {
              expect(JSON.parse(row)).toMatchObject({ kind: 'record', id: entry.id });
              expect(entry.hash).toEqual(readableIdHash(JSON.stringify(records[i]!.readableId)));
            }
          });
          // The records end where the index says: a CSV there, JSON lines with the topic's end.
          if (format === 'csv') expect(header.rowsEnd).toBe(written.length);
          else
            expect(JSON.parse(written.subarray(header.rowsEnd).toString('utf8').split('\n')[0]!).kind).toBe(
              'topic-end',
            );
        }),
        { numRuns: 25 },
      );
    });
  }

  it('an output that does not end where the index says keeps no index; nor does a record with a key the form lacks', async () => {
    const records = [1, 2, 3].map((n): ExportedRecord => ({
      id: oid(n),
      readableId: `REQ-${n}`,
      name: `R${n}`,
      version: '1',
      topicRevisionId: TOPIC.revisionId,
      values: { title: `T${n}` },
    }));
    const wrong = await fullRun('csv', records, 7, 1);
    expect(wrong.kept).toBe(false);
    expect(wrong.stored.rows).toBeUndefined();
    expect(() => statSync(join(wrong.generation, 'topic-1.rows'))).toThrow();

    // Rows told for other records than the session's lines (the same lengths): no index.
    const swapped = await fullRun('jsonl', records, 7, 0, (onRow) => {
      let told = 0;
      return (record, bytes) => onRow(++told === 2 ? records[2]! : told === 3 ? records[1]! : record, bytes);
    });
    expect(swapped.kept).toBe(false);
    expect(swapped.stored.rows).toBeUndefined();

    records[1]!.values = { title: 'T2', extra: 'a column the form does not have' };
    for (const format of ['csv', 'jsonl'] as const) {
      const extra = await fullRun(format, records);
      expect(extra.stored.rows).toBeUndefined();
      expect(() => statSync(join(extra.generation, 'topic-1.rows'))).toThrow();
    }
  });

  it('is asked for before the first part; a failed run leaves no index behind', async () => {
    const dir = join(root, `run-${++runs}`);
    const session = await createSyncSession(dir);
    const all = [...parts([])];
    await session.write(all[0]!);
    expect(() => session.indexRows(renderingOf('csv'))).toThrow(/before the first part/);
    await expect(session.finishRowIndex(0)).rejects.toThrow(/after the end/);
    await session.abort();

    const failing = await createSyncSession(dir);
    failing.indexRows(renderingOf('csv'));
    await failing.write(all[0]!);
    await failing.write(all[1]!);
    await failing.abort();
    expect(await readSyncState(dir)).toBeUndefined();
  });
});
