import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRowSource } from '../src/import/open-source.js';
import { openZipDirectory } from '../src/import/zip-bounds.js';
import { writeZip } from './support/bounded-uploads.js';
import { libreOfficeSave, type Save } from './support/libreoffice.js';
import {
  besidesLineBreaksAsLf,
  changes,
  startRoundTripServer,
  UGLY_CRLF,
  type RoundTripServer,
  type RoundTripTopic,
} from './support/round-trip-topic.js';
import { missingReader, scratchDir, shouldSkip } from './support/spreadsheet-readers.js';

/**
 * A person opens an export in LibreOffice Calc, changes one cell and saves it: as a workbook, as
 * CSV with a comma, a semicolon or a tab, or as UTF-16 text. Imported back into its topic, the
 * file changes exactly that cell: LibreOffice's own rewriting (numbers for the version, dates,
 * TRUE and FALSE, shared strings, quoting, line breaks) changes nothing. Headless LibreOffice saves
 * but does not type: the one edit is made in the file it opens.
 */

const libreOffice = missingReader('soffice', 'libreoffice-calc-nogui');
const scratch = scratchDir();

const CALC_CSV = 'Text - txt - csv (StarCalc)';
const WORKBOOK = { name: 'Calc MS Excel 2007 XML' };
/** Comma separated, double quotes, UTF-8, from line 1; the Code column (19) as text, as it holds codes like 007. */
const OUR_CSV = { name: CALC_CSV, options: '44,34,76,1,19/2' };

const COMMAS = { name: CALC_CSV, options: '44,34,76,1' };
const SEMICOLONS = { name: CALC_CSV, options: '59,34,76,1' };
const TABS = { name: CALC_CSV, options: '9,34,76,1' };
/** Unicode text (character set 65535): UTF-16 with a byte order mark, tab separated. */
const UTF16 = { name: CALC_CSV, options: '9,34,65535,1' };

/** The round trips: the export the person opens and how LibreOffice saves it. */
const ROUND_TRIPS = [
  { label: 'XLSX saved as XLSX', input: 'xlsx', output: 'xlsx', save: WORKBOOK },
  { label: 'XLSX saved as CSV with commas', input: 'xlsx', output: 'csv', save: COMMAS },
  { label: 'XLSX saved as CSV with semicolons', input: 'xlsx', output: 'csv', save: SEMICOLONS },
  { label: 'XLSX saved as text with tabs', input: 'xlsx', output: 'tsv', save: TABS },
  { label: 'XLSX saved as UTF-16 text', input: 'xlsx', output: 'txt', save: UTF16 },
  { label: 'CSV saved as CSV with commas', input: 'csv', output: 'csv', save: COMMAS },
  { label: 'CSV saved as CSV with semicolons', input: 'csv', output: 'csv', save: SEMICOLONS },
  { label: 'CSV saved as UTF-16 text', input: 'csv', output: 'txt', save: UTF16 },
  // Numbers, dates and TRUE/FALSE are typed cells of the workbook: the version 1.0 is the number 1.
  { label: 'CSV saved as XLSX', input: 'csv', output: 'xlsx', save: WORKBOOK },
] as const;

/** The one edit: Requirements-1's priority, from high to low. */
const EDIT = { record: 'Requirements-1', key: 'priority', column: 'Priority', from: 'high', to: 'low' };

/** Our CSV with the edit made as a person types it. The record's row has no quoted cell. */
function editCsv(file: string, id: string): void {
  const rows = readFileSync(file, 'utf8').split('\r\n');
  const column = rows[0]!.split(',').indexOf(EDIT.column);
  const at = rows.findIndex((row) => row.startsWith(`${id},`));
  const cells = rows[at]!.split(',');
  expect(cells[column]).toBe(EDIT.from);
  cells[column] = EDIT.to;
  rows[at] = cells.join(',');
  writeFileSync(file, rows.join('\r\n'));
}

/** Our workbook with the edit, in the topic's sheet (its first). */
async function editXlsx(file: string, id: string): Promise<void> {
  const zip = await openZipDirectory(file, 'a workbook');
  const parts: { name: string; bytes: Buffer }[] = [];
  try {
    for (const entry of zip.entries.values()) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry.stream() as Readable) chunks.push(chunk as Buffer);
      parts.push({ name: entry.path, bytes: Buffer.concat(chunks) });
    }
  } finally {
    zip.close();
  }
  const sheet = parts.find((part) => part.name === 'xl/worksheets/sheet1.xml')!;
  const xml = sheet.bytes.toString('utf8');
  // The export writes text as inline strings: <c r="P1" t="inlineStr"><is><r><t>Priority</t></r></is></c>.
  const textCell = (ref: string) => `<c r="${ref}"[^>]*><is><r><t[^>]*>`;
  const column = xml.match(new RegExp(`${textCell('([A-Z]+)1')}${EDIT.column}</t>`))![1];
  const row = xml.match(
    new RegExp(`<row r="(\\d+)"[^>]*>(?:(?!</row>).)*?${textCell('A\\d+')}${id}</t>`, 's'),
  )![1];
  const edited = xml.replace(
    new RegExp(`(${textCell(`${column}${row}`)})${EDIT.from}</t>`),
    `$1${EDIT.to}</t>`,
  );
  expect(edited).not.toBe(xml);
  sheet.bytes = Buffer.from(edited);
  await writeZip(
    file,
    parts.map((part) => ({ name: part.name, chunks: () => [part.bytes] })),
  );
}

describe.skipIf(shouldSkip(libreOffice))('round trips through LibreOffice Calc', () => {
  let service: RoundTripServer;
  const trips: { topic: RoundTripTopic; saved: string }[] = [];

  beforeAll(async () => {
    if (libreOffice) throw new Error(libreOffice);
    service = await startRoundTripServer();
    const saves: Save[] = [];
    for (const [i, trip] of ROUND_TRIPS.entries()) {
      const topic = await service.topic(`LibreOffice ${i + 1}`);
      const file = await topic.exportFile(trip.input, join(scratch.path, `export-${i + 1}.${trip.input}`));
      const id = topic.ids.get(EDIT.record)!;
      if (trip.input === 'csv') editCsv(file, id);
      else await editXlsx(file, id);
      const saved = join(scratch.path, `saved-${i + 1}.${trip.output}`);
      saves.push({
        input: file,
        ...(trip.input === 'csv' && { open: OUR_CSV }),
        output: saved,
        save: trip.save,
      });
      trips.push({ topic, saved });
    }
    await libreOfficeSave(saves);
  }, 180_000);
  afterAll(async () => {
    await service?.close();
    scratch.dispose();
  });

  it.each(ROUND_TRIPS.map((trip, i) => ({ ...trip, i })))(
    '$label: imports back with exactly the one edit',
    async ({ i, input }) => {
      const { topic, saved } = trips[i]!;
      const before = await topic.state();
      // LibreOffice reads our CSV's version 1.0 as the number 1 and writes it so; our workbook has it as text.
      for await (const row of openRowSource(saved).rows()) {
        expect(row.facts.version).toBe(input === 'csv' ? '1' : '1.0');
        break;
      }
      const report = await topic.importFile(saved);
      expect(report.rowProblems).toEqual([]);
      expect(report.problems).toEqual([]);
      const found = besidesLineBreaksAsLf(changes(before, await topic.state()));
      expect(found.changes).toEqual([
        { record: topic.ids.get(EDIT.record), key: EDIT.key, from: EDIT.from, to: EDIT.to },
      ]);
      // The one record whose texts hold CRLF: LibreOffice's only change of its own.
      expect([...found.records]).toEqual([topic.ids.get(UGLY_CRLF)]);
      const updated = 1 + found.records.size;
      expect(report).toMatchObject({
        rows: before.size,
        created: 0,
        updated,
        unchanged: before.size - updated,
      });
      // Again: the file is what the topic holds now.
      expect(await topic.importFile(saved)).toMatchObject({
        updated: 0,
        unchanged: before.size,
        rejected: 0,
      });
    },
  );
});
