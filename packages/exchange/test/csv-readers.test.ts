import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cellText } from '../src/export/writers/cells.js';
import { protectedText } from '../src/export/writers/csv-text.js';
import { HOSTILE_VALUES } from './support/hostile-corpus.js';
import {
  asUtf8,
  jsonExport,
  libreOfficeSheets,
  missingReader,
  PYTHON,
  pythonCsvRows,
  READER_CASES,
  scratchDir,
  shouldSkip,
  writeFile,
  type JsonExport,
} from './support/spreadsheet-readers.js';

/**
 * The CSV export read back by the programs that really read it: Python's csv module and
 * LibreOffice. Every value must come back equal to what the JSON export carries, after the
 * documented changes (docs/formats/csv.md): an apostrophe before a formula start at the start of
 * text and after a semicolon, tab or line break inside it (protectedText), and U+FFFD for a lone surrogate (UTF-8
 * cannot hold one).
 */

const python = missingReader(PYTHON, 'python3');
const libreOffice = missingReader('soffice', 'libreoffice-calc-nogui');
const scratch = scratchDir();
afterAll(() => scratch.dispose());

/** A value as the CSV documents it: text of the value, formula starts protected, UTF-8 safe. */
function csvValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  return protectedText(asUtf8(cellText(value)));
}

/** The table the JSON export says the CSV holds: header, then one row per record. */
function expectedTable(json: JsonExport): string[][] {
  const [topic] = json.topics;
  const names = topic!.fields.map((f) => f.name);
  const links = (id: string) =>
    json.traces
      .filter((t) => t.source.id === id)
      .flatMap((t) =>
        t.relationTypes.map(
          (relation) =>
            (t.target.readableId === undefined
              ? `${relation}:${t.target.id}`
              : `${relation}:${t.target.readableId} (${t.target.id})`) + (t.suspect ? ' [suspect]' : ''),
        ),
      )
      .join('; ');
  return [
    ['_id', 'readable_id', 'name', 'version', 'topic_revision_id', 'source_id', ...names, 'links'],
    ...topic!.records.map((r) => [
      r.id,
      r.readableId,
      csvValue(r.name),
      r.version,
      r.topicRevisionId,
      csvValue(r.sourceId ?? ''),
      ...names.map((name) => csvValue(r.values[name])),
      links(r.id),
    ]),
  ];
}

describe.each(READER_CASES)('CSV of $label', ({ label, load }) => {
  const base = label.replaceAll(' ', '-');

  it.skipIf(shouldSkip(python))(
    "reads back in Python's csv as one row per record, every value equal to the JSON export",
    async () => {
      if (python) throw new Error(python);
      const parts = await load();
      const json = await jsonExport(parts, scratch.path);
      const file = join(scratch.path, `${base}.csv`);
      await writeFile('csv', parts, file);
      const rows = pythonCsvRows(file);
      const expected = expectedTable(json);
      expect(rows.length).toBe(json.topics[0]!.records.length + 1);
      expect(rows).toEqual(expected);
      if (label === 'the hostile corpus') {
        expect(rows.length).toBe(HOSTILE_VALUES.length + 1);
        // The first record links to the next two by readable id and _id.
        const [, first, second] = json.topics[0]!.records;
        expect(rows[1]!.at(-1)).toContain(`relates_to:${first!.readableId} (${first!.id})`);
        expect(rows[1]!.at(-1)).toContain(`relates_to:${second!.readableId} (${second!.id})`);
      }
    },
  );

  it.skipIf(shouldSkip(libreOffice))(
    'opens in LibreOffice with the same values, whitespace and line breaks kept',
    async () => {
      if (libreOffice) throw new Error(libreOffice);
      const parts = await load();
      const json = await jsonExport(parts, scratch.path);
      const dir = join(scratch.path, `${base}-lo`);
      const file = join(scratch.path, `${base}-lo-input.csv`);
      await writeFile('csv', parts, file);
      const expected = expectedTable(json);
      // Every column as text (format 2), as a user imports a requirements table: no number or
      // date guessing, so "1.0" stays "1.0".
      const columns = expected[0]!.map((_, i) => `${i + 1}/2`).join('/');
      const sheets = libreOfficeSheets(
        file,
        dir,
        `Text - txt - csv (StarCalc):44,34,76,1,${columns},0,true,false`,
      );
      const [converted] = [...sheets.values()];
      const rows = pythonCsvRows(converted!);
      expect(rows.length).toBe(expected.length);
      expect(rows).toEqual(expected.map((row) => row.map(libreOfficeText)));
    },
    120_000,
  );
});

/**
 * What LibreOffice makes of a value (documented in docs/formats/csv.md): its cells store line
 * breaks as LF, so CR and CRLF inside a quoted value read as LF, and it drops NUL.
 */
function libreOfficeText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replaceAll('\u0000', '');
}
