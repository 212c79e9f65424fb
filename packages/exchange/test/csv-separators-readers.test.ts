import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KnowledgeTopicRevision } from '../../contract/src/knowledge-topic.js';
import type { ServiceRecord } from '../../contract/src/record.js';
import type { ExportSource } from '../src/export/procedure.js';
import { protectedText, restoredText } from '../src/export/writers/csv-text.js';
import {
  collectParts,
  libreOfficeSheets,
  missingReader,
  PYTHON,
  pythonCsvRows,
  scratchDir,
  shouldSkip,
  writeFile,
} from './support/spreadsheet-readers.js';

/**
 * The CSV export is written with commas, but a spreadsheet may be told to split it at semicolons
 * or tabs (LibreOffice's and Excel's import dialog; the default in many locales). Whichever it
 * splits at, no cell of the file may become a formula: LibreOffice's sheet is the same with its
 * formula evaluation on and off. Split at commas, every value reads back as written, in its
 * documented protected form (docs/formats/csv.md), in LibreOffice and in Python's csv.
 */

const python = missingReader(PYTHON, 'python3');
const libreOffice = missingReader('soffice', 'libreoffice-calc-nogui');
const scratch = scratchDir();
afterAll(() => scratch.dispose());

/** Text that starts a formula where a reader splitting at `,`, `;`, tab or a line break starts a cell. */
const HOSTILE = [
  'safe;=2+5',
  'safe\t=2+5',
  'safe;+2+5',
  'safe;-2+5',
  'safe;@SUM(1)',
  'safe;\uFF1D2+5',
  'a;\t=1+1',
  'a;"=1+1"',
  "a;'=1+1",
  'a;\'"=1+1',
  ';=8+8',
  'line\n=5+5',
  'cr\r=6+6',
  'crlf\r\n=7+7',
  'Title\n=====\n\nBody',
  '- one\n- two',
  '=2+5',
  '+2+5',
  '-2+5',
  '@SUM(1)',
  '\t=2+5',
  '\r=2+5',
  "'=2+5",
  'x,=2+5',
  '"q";=3+4',
  'q";=3+4',
  '"";=3+4',
  'checked; =4+4',
];

const REVISION = '7c0000000000000000000011';
const topic = {
  _id: REVISION,
  knowledge_topic_history_id: '7c00000000000000000000b1',
  knowledge_topic_name: 'Separators',
  knowledge_topic_schema: { type: 'default', components: [{ type: 'textarea', key: 'note', label: 'Note' }] },
  version: '1.0',
  status: 'approved',
  latest_revision_id: REVISION,
} as unknown as KnowledgeTopicRevision;

/** One record per hostile text, in its name and its note. */
const records = HOSTILE.map(
  (text, i) =>
    ({
      _id: `7d${(0x100 + i).toString(16).padStart(22, '0')}`,
      name: text,
      form: { components: [], id: 'form_1', type: 'default', schemaVersion: 19 },
      version: '1.0',
      data: { note: text },
      read_only: false,
      metadata: { tenant_id: 'separators' },
      context: { knowledge_unit_topic_id: REVISION },
      audit_info: {
        user_id_created: 'u1',
        timestamp_created: '2026-08-10T12:00:00.000000',
        last_action: 'created',
      },
    }) as unknown as ServiceRecord,
);

const source: ExportSource = {
  servers: { techdoc: 'http://techdoc.test', records: 'http://records.test', tracer: 'http://tracer.test' },
  getTopic: async () => structuredClone(topic),
  async *listRecords() {
    for (const record of records) yield structuredClone(record);
  },
  listTraces: async () => [],
};

async function exportCsv(name: string): Promise<string> {
  const file = join(scratch.path, name);
  await writeFile('csv', await collectParts(source, [REVISION]), file);
  return file;
}

/** The `name` and `note` cells of each record's row. */
function hostileCells(rows: string[][]): string[][] {
  const [header, ...body] = rows;
  expect(header).toEqual(expect.arrayContaining(['name', 'Note']));
  const name = header!.indexOf('name');
  const note = header!.indexOf('Note');
  return body.map((row) => [row[name]!, row[note]!]);
}

/**
 * The file as LibreOffice's sheet holds it, split at `separator` (a character code), with its
 * formula evaluation on or off, written out as CSV text.
 */
function libreOfficeSheet(file: string, separator: number, evaluate: boolean): string {
  const dir = join(scratch.path, `lo-${separator}-${evaluate}`);
  // Separator, quote, UTF-8, from line 1, standard cell format; token 13 evaluates formulas.
  const filter = `Text - txt - csv (StarCalc):${separator},34,76,1,,0,false,false,false,false,false,-1,${evaluate}`;
  const [converted] = [...libreOfficeSheets(file, dir, filter).values()];
  return readFileSync(converted!, 'utf8');
}

describe('CSV export read with another separator than the comma', () => {
  it.skipIf(shouldSkip(python))(
    "reads back in Python's csv as the protected text of each value",
    async () => {
      if (python) throw new Error(python);
      const cells = hostileCells(pythonCsvRows(await exportCsv('python.csv')));
      expect(cells).toEqual(HOSTILE.map((text) => [protectedText(text), protectedText(text)]));
      expect(cells.map(([name]) => restoredText(name!))).toEqual(HOSTILE);
    },
  );

  describe.skipIf(shouldSkip(libreOffice))('in LibreOffice', () => {
    for (const [label, separator] of [
      ['a comma', 44],
      ['a semicolon', 59],
      ['a tab', 9],
    ] as const) {
      it(`split at ${label}, no cell is a formula`, async () => {
        if (libreOffice) throw new Error(libreOffice);
        const file = await exportCsv(`lo-${separator}.csv`);
        const evaluated = libreOfficeSheet(file, separator, true);
        expect(evaluated).not.toMatch(/Err:\d+|#NAME\?|#VALUE!/);
        expect(evaluated).toBe(libreOfficeSheet(file, separator, false));
        if (separator !== 44) return;
        // Split at commas, each value is its protected text (LibreOffice keeps line breaks as LF).
        const converted = join(scratch.path, 'lo-44-converted.csv');
        writeFileSync(converted, evaluated);
        expect(hostileCells(pythonCsvRows(converted))).toEqual(
          HOSTILE.map((text) => {
            const shown = protectedText(text).replace(/\r\n?/g, '\n');
            return [shown, shown];
          }),
        );
      }, 60_000);
    }
  });
});
