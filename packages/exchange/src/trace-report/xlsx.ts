import type { Writable } from 'node:stream';
import type ExcelJS from 'exceljs';
import { addRow } from '../export/writers/xlsx.js';
import { coverageMatrix, ruleName } from './coverage.js';
import type { CoverageReport, RuleCoverage } from './coverage-types.js';

/**
 * The traceability report as a workbook: a "Coverage" sheet (a row per rule) and a sheet per rule
 * with the matrix of source against target records (✓ where linked, ⚠ where suspect; the links
 * listed instead beyond MAX_MATRIX_CELLS), then the records not linked, the orphans and the
 * suspect links. Text goes in as text
 * (a readable id starting with "=" stays a text), as the export's XLSX writes it.
 */
export async function writeCoverageXlsx(
  report: CoverageReport,
  out: Writable,
  options: { failUnder?: number } = {},
): Promise<void> {
  const { default: excel } = await import('exceljs');
  const book = new excel.stream.xlsx.WorkbookWriter({
    stream: out,
    useStyles: true,
    useSharedStrings: false,
  });
  const bold = { bold: true };
  const summary = book.addWorksheet('Coverage');
  addRow(
    summary,
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
    undefined,
    bold,
  );
  report.rules.forEach((r, index) =>
    addRow(summary, [
      `${index + 1}. ${ruleName(r.rule)}`,
      r.rule.source.name,
      r.rule.target.name,
      r.rule.linkType ?? '',
      r.covered,
      r.total,
      Math.round(r.percent * 10) / 10,
      r.uncovered.length,
      r.orphans.length,
      r.suspect.length,
      options.failUnder === undefined ? '' : r.percent >= options.failUnder ? 'yes' : 'no',
    ]),
  );
  summary.commit();
  report.rules.forEach((r, index) => ruleSheet(book.addWorksheet(`Rule ${index + 1}`), r, bold));
  await book.commit();
}

function ruleSheet(sheet: ExcelJS.Worksheet, r: RuleCoverage, bold: Partial<ExcelJS.Font>): void {
  addRow(sheet, [ruleName(r.rule)], undefined, bold);
  addRow(sheet, []);
  const matrix = coverageMatrix(r);
  if (matrix) {
    addRow(sheet, [`${r.rule.source.name} \\ ${r.rule.target.name}`, ...matrix.columns], undefined, bold);
    for (const row of matrix.rows) addRow(sheet, [row, ...matrix.columns.map((c) => matrix.cell(row, c))]);
  } else if (r.links.length > 0) {
    addRow(sheet, [r.rule.source.name, r.rule.target.name], undefined, bold);
    for (const [s, t] of r.links) addRow(sheet, [s, t]);
  }
  addRow(sheet, []);
  addRow(sheet, [`Not linked (${r.uncovered.length})`], undefined, bold);
  for (const id of r.uncovered) addRow(sheet, [id]);
  addRow(sheet, []);
  addRow(sheet, [`Orphans (${r.orphans.length})`], undefined, bold);
  for (const id of r.orphans) addRow(sheet, [id]);
  addRow(sheet, []);
  addRow(sheet, [`Suspect links (${r.suspect.length})`], undefined, bold);
  for (const [s, t] of r.suspect) addRow(sheet, [s, t]);
  sheet.commit();
}
