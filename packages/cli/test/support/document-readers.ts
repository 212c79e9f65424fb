import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { expect } from 'vitest';
import { PYTHON } from '../../../exchange/test/support/spreadsheet-readers.js';
import { cliBin } from '../run-cli.js';

/** The programs that read `rxs export --format pdf|docx` documents as people's tools do. */

/** pdftotext answers `-v`, not `--version`. */
export const pdftotext =
  spawnSync('pdftotext', ['-v'], { encoding: 'utf8' }).status === 0
    ? undefined
    : 'pdftotext is not installed: install the Debian package poppler-utils.';
export const pythonDocx =
  spawnSync(PYTHON, ['-c', 'import docx'], { encoding: 'utf8' }).status === 0
    ? undefined
    : 'python-docx is not installed: install the Debian package python3-docx.';

/** The paragraphs and table rows of a DOCX body, in document order, as python-docx reads them. */
export const DOCX_TEXT = `
import docx, docx.table, docx.text.paragraph, sys
from docx.oxml.ns import qn
d = docx.Document(sys.argv[1])
for block in d.element.body.iterchildren():
    if block.tag == qn('w:p'):
        print(docx.text.paragraph.Paragraph(block, d).text)
    elif block.tag == qn('w:tbl'):
        for row in docx.table.Table(block, d).rows:
            print('\\t'.join(cell.text for cell in row.cells))
print('\\n'.join(p.text for p in d.sections[0].header.paragraphs))
`;

/** A PDF's text as pdftotext reads it (pages separated by form feeds). */
export function pdfText(file: string): string {
  const read = spawnSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  expect(read.status, read.stderr).toBe(0);
  return read.stdout;
}

/** A DOCX's text as python-docx reads it (`DOCX_TEXT`). */
export function docxText(file: string): string {
  const read = spawnSync(PYTHON, ['-c', DOCX_TEXT, file], { encoding: 'utf8', maxBuffer: 1 << 26 });
  expect(read.status, read.stderr).toBe(0);
  return read.stdout;
}

/** Runs `rxs` with its standard output going to `file` byte for byte; resolves with the exit code. */
export function runCliToFile(args: string[], file: string): Promise<number | null> {
  const fd = openSync(file, 'w');
  return new Promise((resolve) => {
    const child = spawn(cliBin, args, {
      env: { ...process.env, HOME: dirname(file), RXS_API_KEY: '' },
      stdio: ['ignore', fd, 'inherit'],
    });
    child.on('close', (code) => {
      closeSync(fd);
      resolve(code);
    });
  });
}
