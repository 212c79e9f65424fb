import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@rxs/exchange/export';
import type { ChangeReport } from './report.js';

export const REPORTS_DIR = 'reports';

/** The report as JSON text: the `ChangeReport` shape, two-space indented, with a final newline. */
export function reportJson(report: ChangeReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/**
 * Writes the report to `DIR/reports/<exportedAt>.json` (colons replaced, so the name is valid on
 * every file system; a suffix keeps an earlier report of the same instant), whole or not at all.
 * Returns the file's path.
 */
export async function writeReport(dir: string, report: ChangeReport): Promise<string> {
  const folder = join(dir, REPORTS_DIR);
  await mkdir(folder, { recursive: true });
  const stamp = report.exportedAt.replace(/[^0-9A-Za-z.-]/g, '-');
  const taken = new Set(await readdir(folder));
  let name = `${stamp}.json`;
  for (let n = 2; taken.has(name); n++) name = `${stamp}-${n}.json`;
  const path = join(folder, name);
  await writeFileAtomic(path, reportJson(report));
  return path;
}
