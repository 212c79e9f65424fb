import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { coverageOf } from '../src/trace-report/coverage.js';
import type { CoverageTopic } from '../src/trace-report/coverage-types.js';
import { writeCoverageXlsx } from '../src/trace-report/xlsx.js';
import {
  libreOfficeSheets,
  missingReader,
  PYTHON,
  pythonCsvRows,
  scratchDir,
  shouldSkip,
} from './support/spreadsheet-readers.js';

const python = missingReader(PYTHON, 'python3');
const libreOffice = missingReader('soffice', 'libreoffice-calc-nogui');
const scratch = scratchDir();
afterAll(() => scratch.dispose());

const topic = (n: number, name: string): CoverageTopic => ({
  revisionId: `rev${n}`,
  historyId: `hist${n}`,
  name,
});

/** The XLSX traceability report as LibreOffice reads it, each sheet compared cell by cell (a suspect link ⚠). */
describe('trace report XLSX', () => {
  it.skipIf(shouldSkip(libreOffice) || shouldSkip(python))(
    'opens in LibreOffice with the coverage sheet, the matrix, the records not linked and the orphans',
    async () => {
      const records = new Map([
        [
          'rev0',
          new Map([
            ['a', 'REQ_001'],
            ['b', '=1+1'],
            ['c', 'REQ_003 "quoted", comma'],
          ]),
        ],
        [
          'rev1',
          new Map([
            ['x', 'TST_001'],
            ['y', 'TST_002'],
          ]),
        ],
      ]);
      const report = coverageOf(
        [topic(0, 'System Requirements'), topic(1, 'Verification Tests')],
        records,
        [
          { source: 'a', target: 'x' },
          { source: 'x', target: 'c', suspect: true },
        ],
        [],
      );
      const file = join(scratch.path, 'trace.xlsx');
      const out = createWriteStream(file);
      await writeCoverageXlsx(report, out, { failUnder: 80 });
      await finished(out);
      const sheets = libreOfficeSheets(file, join(scratch.path, 'lo'));
      expect(pythonCsvRows(sheets.get('Coverage')!)).toEqual([
        [
          'rule',
          'source topic',
          'target topic',
          'link type',
          'linked',
          'records',
          'coverage %',
          'not linked',
          'orphans',
          'suspect links',
          'passed',
        ],
        [
          '1. System Requirements → Verification Tests',
          'System Requirements',
          'Verification Tests',
          '',
          '2',
          '3',
          '66.7',
          '1',
          '1',
          '1',
          'no',
        ],
      ]);
      const rule = pythonCsvRows(sheets.get('Rule 1')!).map((row) =>
        row.filter((cell, i) => i === 0 || cell !== ''),
      );
      expect(rule).toEqual([
        ['System Requirements → Verification Tests'],
        [''],
        ['System Requirements \\ Verification Tests', 'TST_001', 'TST_002'],
        ['=1+1'],
        ['REQ_001', '✓'],
        ['REQ_003 "quoted", comma', '⚠'],
        [''],
        ['Not linked (1)'],
        ['=1+1'],
        [''],
        ['Orphans (1)'],
        ['TST_002'],
        [''],
        ['Suspect links (1)'],
        ['REQ_003 "quoted", comma', 'TST_001'],
      ]);
    },
    120_000,
  );
});
