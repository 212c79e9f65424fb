import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cellText } from '../src/export/writers/cells.js';
import { MAX_CELL_TEXT, SheetTooWideError, TRUNCATION_MARKER } from '../src/export/writers/xlsx.js';
import { HOSTILE_VALUES, hostileRevisionIds, hostileSource } from './support/hostile-corpus.js';
import {
  collectParts,
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
 * The XLSX export opened by LibreOffice headless (converted to one CSV per sheet, read with
 * Python's csv): every value equal to the JSON export, whitespace, tabs, CR and CRLF kept, after
 * the documented changes (docs/formats/xlsx.md), each of which the writer reports as a warning.
 */

const python = missingReader(PYTHON, 'python3');
const libreOffice = missingReader('soffice', 'libreoffice-calc-nogui');
const scratch = scratchDir();
afterAll(() => scratch.dispose());

/** A value as the XLSX documents it. */
function xlsxValue(value: unknown): string {
  let text = cellText(value);
  if (text.length > MAX_CELL_TEXT) {
    text = [...text].join('').slice(0, MAX_CELL_TEXT - TRUNCATION_MARKER.length) + TRUNCATION_MARKER;
  }
  return text
    .replaceAll('\u007f', '') // DEL removed
    .replace(/\p{Cs}/gu, '\uFFFD'); // a lone surrogate is no character
}

function expectedSheet(json: JsonExport): string[][] {
  const [topic] = json.topics;
  const names = topic!.fields.map((f) => f.name);
  return [
    ['_id', 'readable_id', 'name', 'version', 'topic_revision_id', 'source_id', ...names],
    ...topic!.records.map((r) => [
      r.id,
      r.readableId,
      xlsxValue(r.name),
      r.version,
      r.topicRevisionId,
      xlsxValue(r.sourceId ?? ''),
      ...names.map((name) => xlsxValue(r.values[name])),
    ]),
  ];
}

function expectedTraces(json: JsonExport): string[][] {
  return [
    [
      '_id',
      'relation_types',
      'link_type',
      'source_id',
      'source_readable_id',
      'source_type',
      'target_id',
      'target_readable_id',
      'target_type',
      'suspect',
    ],
    ...json.traces.map((t) => [
      t.id,
      t.relationTypes.join('; '),
      '', // no mapping file: no link type
      t.source.id,
      t.source.readableId ?? '',
      t.source.type,
      t.target.id,
      t.target.readableId ?? '',
      t.target.type,
      t.suspect ? 'TRUE' : 'FALSE',
    ]),
  ];
}

/**
 * What LibreOffice makes of a cell the file carries exactly (docs/formats/xlsx.md): it keeps a CR
 * between ordinary characters but reads CRLF, and a CR next to another control character, as LF.
 */
const libreOfficeCsv = (text: string) =>
  text.replace(/\r\n|(?<=[\u0000-\u0009\u000B-\u001F])\r|\r(?=[\u0000-\u0009\u000B-\u001F])/g, '\n');

describe.each(READER_CASES)('XLSX of $label', ({ label, load }) => {
  const base = label.replaceAll(' ', '-');

  it.skipIf(shouldSkip(libreOffice) || shouldSkip(python))(
    'opens in LibreOffice with every value equal to the JSON export, whitespace and line breaks kept',
    async () => {
      if (libreOffice) throw new Error(libreOffice);
      if (python) throw new Error(python);
      const parts = await load();
      const json = await jsonExport(parts, scratch.path);
      const file = join(scratch.path, `${base}.xlsx`);
      const warnings = await writeFile('xlsx', parts, file);
      const sheets = libreOfficeSheets(file, join(scratch.path, `${base}-lo`));
      const topicSheet = sheets.get(json.topics[0]!.name);
      expect(topicSheet, `sheets: ${[...sheets.keys()].join(', ')}`).toBeDefined();
      expect(pythonCsvRows(topicSheet!)).toEqual(expectedSheet(json).map((row) => row.map(libreOfficeCsv)));
      expect(pythonCsvRows(sheets.get('Traces')!)).toEqual(expectedTraces(json));

      const exportSheet = pythonCsvRows(sheets.get('Export')!).map((row) => row[0]);
      for (const warning of warnings) expect(exportSheet).toContain(warning);
      if (label !== 'the hostile corpus') {
        expect(warnings).toEqual([]);
        return;
      }
      // Every changed value is reported, naming the record (readable id and _id) and the field.
      const recordOf = (label: string) => {
        const index = HOSTILE_VALUES.findIndex((v) => v.label === label);
        return json.topics[0]!.records[index]!;
      };
      for (const [valueLabel, change] of [
        ['long text', 'characters cut to 32,767'],
        ['DEL', 'DEL character (U+007F) was removed'],
        ['lone surrogates', 'lone surrogate'],
      ] as const) {
        const record = recordOf(valueLabel);
        for (const field of ['name', ...json.topics[0]!.fields.map((f) => f.name)]) {
          const expected = `Record ${record.readableId} (_id ${record.id}) of "${json.topics[0]!.name}", field "${field}": `;
          expect(
            warnings.filter((w) => w.startsWith(expected) && w.includes(change)),
            `${expected}${change} in:\n${warnings.join('\n')}`,
          ).toHaveLength(1);
        }
      }
      expect(warnings, warnings.join('\n')).toHaveLength(15);
    },
    180_000,
  );
});

describe('XLSX of a record with 16,400 data keys', () => {
  it('fails with a message naming the topic and what to do, instead of writing a broken file', async () => {
    // An export that raised its column limit (maxColumns) past what a sheet holds.
    const parts = await collectParts(hostileSource({ wide: true }), hostileRevisionIds({ wide: true }), {
      maxColumns: 20_000,
    });
    const failure = writeFile('xlsx', parts, join(scratch.path, 'wide.xlsx'));
    await expect(failure).rejects.toBeInstanceOf(SheetTooWideError);
    await expect(failure).rejects.toThrow(/"Wide Tests".*16,384.*Export it as CSV or JSON/);
  });
});
