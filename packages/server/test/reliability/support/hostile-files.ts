import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hugeSharedString, writeZip } from '../../../../exchange/test/support/bounded-uploads.js';

/**
 * Uploads an attacker builds cheaply: a valid CSV of many rows, a header of many columns, and an
 * XLSX whose one shared string inflates to `bytes` while the file stays a few hundred KB. The
 * readers that matter (the web import check, `rxs import`) must refuse or read them within budget.
 */

/** A valid CSV for a topic with fields Title and Body: `rows` rows after the header. */
export function csvWithRows(rows: number): string {
  const lines = ['name,Title,Body'];
  for (let i = 0; i < rows; i++) lines.push(`ROW-${i},Row ${i},"Text of row ${i}, with a comma"`);
  return `${lines.join('\n')}\n`;
}

/** A CSV whose header has `columns` distinct names and one short row. */
export function csvWithColumns(columns: number): string {
  const header = Array.from({ length: columns }, (_, i) => `c${i}`).join(',');
  return `${header}\n${'x,'.repeat(Math.min(columns, 10))}\n`;
}

/** The bytes of a workbook whose one shared string is `bytes` long. */
export async function xlsxWithSharedString(bytes: number): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'rxs-hostile-xlsx-'));
  try {
    const file = join(dir, 'bomb.xlsx');
    await writeZip(file, hugeSharedString(bytes));
    return await readFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
