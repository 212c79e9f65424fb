import { spawnSync } from 'node:child_process';
import { PYTHON } from './spreadsheet-readers.js';

/**
 * The text of a DOCX or PDF document as the programs people open them with read it: poppler's
 * pdftotext, python-docx (body paragraphs, table rows with tab-separated cells, the page header).
 * Each reader's absence is a reason to skip (`PDF_READER_MISSING`, `DOCX_READER_MISSING`, for
 * `shouldSkip`).
 */

/** pdftotext answers `-v`, not `--version`. */
export const PDF_READER_MISSING =
  spawnSync('pdftotext', ['-v'], { encoding: 'utf8' }).status === 0
    ? undefined
    : 'pdftotext is not installed: install the Debian package poppler-utils.';

export const DOCX_READER_MISSING =
  spawnSync(PYTHON, ['-c', 'import docx'], { encoding: 'utf8' }).status === 0
    ? undefined
    : 'python-docx is not installed: install the Debian package python3-docx.';

export function pdfText(file: string): string {
  const run = spawnSync('pdftotext', ['-enc', 'UTF-8', file, '-'], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (run.status !== 0) throw new Error(`pdftotext failed: ${run.stderr}`);
  return run.stdout;
}

const PYTHON_DOCX = `
import docx, docx.table, docx.text.paragraph, sys
from docx.oxml.ns import qn
d = docx.Document(sys.argv[1])
out = [p.text for p in d.sections[0].header.paragraphs]
for block in d.element.body.iterchildren():
    if block.tag == qn('w:p'):
        out.append(docx.text.paragraph.Paragraph(block, d).text)
    elif block.tag == qn('w:tbl'):
        for row in docx.table.Table(block, d).rows:
            out.append('\\t'.join(cell.text for cell in row.cells))
sys.stdout.write('\\n'.join(out))
`;

/** The page header's lines, then the body's paragraphs and table rows, in document order. */
export function docxText(file: string): string {
  const run = spawnSync(PYTHON, ['-c', PYTHON_DOCX, file], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (run.status !== 0) throw new Error(`python-docx failed: ${run.stderr}`);
  return run.stdout;
}
