import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDocx } from '../src/document/docx.js';
import type { BaselineDocument, DocumentRecord, RecordChange } from '../src/document/model.js';
import { renderPdf } from '../src/document/pdf.js';
import { visibleText } from '../src/document/text.js';
import { pageHeader } from '../src/document/wording.js';
import { HOSTILE_TEXTS, hostileDocument, SIGNATURES } from './document-sample.js';
import { HOSTILE_VALUES } from './support/hostile-corpus.js';
import { DOCX_READER_MISSING, PDF_READER_MISSING, pdfText } from './support/document-text.js';
import { PYTHON, scratchDir, shouldSkip } from './support/spreadsheet-readers.js';

/**
 * The baseline documents are read by the programs that will read them: python-docx opens the DOCX,
 * poppler's pdftotext reads the PDF, LibreOffice Writer turns the DOCX into a PDF. Each finds every
 * record's readable id and every signature, and hostile user text literally, or visibly marked
 * where a document cannot hold or show a character.
 */

const scratch = scratchDir();
afterAll(() => scratch.dispose());

/** soffice is there for Calc (scripts/test-needs.sh); converting a DOCX also needs Writer. */
const writer = existsSync('/usr/lib/libreoffice/program/soffice')
  ? existsSync('/usr/lib/libreoffice/share/registry/writer.xcd')
    ? undefined
    : 'LibreOffice Writer is not installed: install the Debian package libreoffice-writer-nogui.'
  : 'LibreOffice is not installed: install the Debian package libreoffice-writer-nogui.';

/** The readable ids in the order the specification lists them. */
async function readableIds(document: BaselineDocument): Promise<string[]> {
  const ids: string[] = [];
  for await (const topic of document.topics)
    for await (const record of topic.records) ids.push((record as DocumentRecord).readableId);
  return ids;
}

/** Each text found after the one before it. */
function expectInOrder(haystack: string, needles: readonly string[]): void {
  let from = 0;
  for (const needle of needles) {
    const at = haystack.indexOf(needle, from);
    expect(at, `"${needle.slice(0, 60)}" after position ${from}`).toBeGreaterThanOrEqual(0);
    from = at + needle.length;
  }
}

async function render(
  kind: 'pdf' | 'docx',
  released = false,
  document = hostileDocument(released),
  name = `baseline-${released ? 'released' : 'proposed'}`,
): Promise<string> {
  const file = join(scratch.path, `${name}.${kind}`);
  const out = createWriteStream(file);
  await (kind === 'pdf' ? renderPdf : renderDocx)(document, out);
  await finished(out);
  return file;
}

/** Left-to-right hostile texts (ours and the export formats' corpus), as a document shows them. */
const ltrTexts = [
  ...Object.entries(HOSTILE_TEXTS)
    .filter(([label]) => !['hebrew', 'arabic', 'long'].includes(label))
    .map(([, value]) => value),
  ...HOSTILE_VALUES.filter((v) => v.label !== 'long text').map((v) => v.value),
].map(visibleText);

describe.skipIf(shouldSkip(PDF_READER_MISSING))('the PDF, read by pdftotext', () => {
  let text = '';
  beforeAll(async () => {
    text = pdfText(await render('pdf'));
  }, 120_000);

  it('has every readable id and every signature, in reading order', async () => {
    expectInOrder(
      text,
      SIGNATURES.flatMap((s) => [s.signer, s.meaning]),
    );
    expectInOrder(text, await readableIds(hostileDocument()));
  });

  it('says NOT RELEASED on every page while the baseline is not released', () => {
    const pages = text.split('\f').filter((page) => page.trim() !== '');
    expect(pages.length).toBeGreaterThan(3);
    for (const page of pages) expect(page).toContain('NOT RELEASED');
  });

  it('shows hostile text literally, and marks what cannot be shown', () => {
    // pdftotext decides where spaces are from the gaps between glyphs: they are not compared; nor
    // are the page headers and numbers that a value running onto the next page has in between.
    const header = pageHeader(hostileDocument());
    const compact = text
      .split('\n')
      .filter((line) => line.trim() !== header && !/^Page \d+$/.test(line.trim()))
      .join('')
      .replace(/\s+/g, '');
    const missing = ltrTexts
      // pdftotext joins a line that ends in a hyphen with the next, taking the hyphen away.
      .filter((value) => !/-\n/.test(value))
      // No embedded font has the triangular bullet: it is marked, not dropped.
      .map((value) => value.replace(/\u2023/g, '[U+2023]').replace(/\s+/g, ''))
      .filter((value) => !compact.includes(value));
    expect(missing).toEqual([]);
    // The glyphs of Arabic letters share their shapes (the dots are marks), so text extraction
    // cannot tell every letter back: right-to-left text is checked with Hebrew here.
    expect(text.includes(HOSTILE_TEXTS.hebrew)).toBe(true);
    expect(compact).toContain('bell[U+0007]escape[U+001B]nul[U+0000]end');
    expect(compact.includes('END-OF-LONG-VALUE')).toBe(true);
    expect(compact.includes('[U+000A]')).toBe(false);
  });

  it('does not say NOT RELEASED once the baseline is released', async () => {
    const text = pdfText(await render('pdf', true));
    expect(text).not.toContain('NOT RELEASED');
    expectInOrder(text, await readableIds(hostileDocument(true)));
  }, 120_000);
});

/** The DOCX's body, tables and header as python-docx reads them, in document order. */
const PYTHON_DOCX = `
import docx, docx.table, docx.text.paragraph, json, sys
from docx.oxml.ns import qn
d = docx.Document(sys.argv[1])
out = []
for block in d.element.body.iterchildren():
    if block.tag == qn('w:p'):
        out.append(docx.text.paragraph.Paragraph(block, d).text)
    elif block.tag == qn('w:tbl'):
        for row in docx.table.Table(block, d).rows:
            out.append('\\t'.join(cell.text for cell in row.cells))
header = '\\n'.join(p.text for p in d.sections[0].header.paragraphs)
styles = [p.style.name for p in d.paragraphs]
sys.stdout.write(json.dumps({'body': out, 'header': header, 'styles': styles}))
`;

describe.skipIf(shouldSkip(DOCX_READER_MISSING))('the DOCX, read by python-docx', () => {
  let read: { body: string[]; header: string; styles: string[] };
  beforeAll(async () => {
    const run = spawnSync(PYTHON, ['-c', PYTHON_DOCX, await render('docx')], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    expect(run.status, run.stderr).toBe(0);
    read = JSON.parse(run.stdout);
  }, 120_000);

  it('has every readable id and every signature, in order, in Word headings and tables', async () => {
    const body = read.body.join('\n');
    expectInOrder(
      body,
      SIGNATURES.flatMap((s) => [s.signer, s.meaning]),
    );
    expectInOrder(body, await readableIds(hostileDocument()));
    expect(read.styles).toContain('Title');
    expect(read.styles).toContain('Heading 1');
    expect(read.header).toContain('NOT RELEASED');
  });

  it('holds hostile text literally, and marks what XML cannot hold', () => {
    const body = read.body.join('\n');
    const expected = [...ltrTexts, HOSTILE_TEXTS.hebrew, HOSTILE_TEXTS.arabic, HOSTILE_TEXTS.long];
    expect(expected.filter((value) => !body.includes(value)).map((value) => value.slice(0, 80))).toEqual([]);
    expect(body).toContain('bell[U+0007] escape[U+001B] nul[U+0000] end');
  });
});

/**
 * A change summary that lists some changes and counts the rest, of records whose titles begin with
 * their readable ids; and one with no earlier released baseline.
 */
function summaryDocument(against: string | undefined): BaselineDocument {
  const document = hostileDocument(true);
  const changes: RecordChange[] = [
    { kind: 'added', topic: 'Pumps', readableId: 'PUMP_001', title: 'PUMP_001 — Pump starts' },
    {
      kind: 'changed',
      topic: 'Pumps',
      readableId: 'PUMP_002',
      title: 'Pump stops',
      fields: [{ label: 'Stop time', before: '5 s', after: '2 s' }],
    },
  ];
  return {
    ...document,
    topics: [
      {
        name: 'Pumps',
        records: [{ readableId: 'PUMP_001', title: 'PUMP_001 — Pump starts', fields: [], links: [] }],
      },
    ],
    changes: against === undefined ? { against, changes: [] } : { against, changes, omitted: 7 },
  };
}

describe.each([
  ['PDF', 'pdf', PDF_READER_MISSING],
  ['DOCX', 'docx', DOCX_READER_MISSING],
] as const)('the change summary of the %s', (_name, kind, reader) => {
  const textOf = async (against: string | undefined) => {
    const file = await render(kind, true, summaryDocument(against), `summary-${against ?? 'none'}`);
    if (kind === 'pdf') return pdfText(file);
    const run = spawnSync(PYTHON, ['-c', PYTHON_DOCX, file], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    return (JSON.parse(run.stdout).body as string[]).join('\n');
  };

  it.skipIf(shouldSkip(reader))(
    'names each record once, and counts the changes it does not list',
    async () => {
      const text = await textOf('R0');
      expect(text).toContain('1.1 PUMP_001 — Pump starts');
      expect(text).not.toContain('PUMP_001 PUMP_001');
      expect(text).toContain('added: PUMP_001 — Pump starts (Pumps)');
      expect(text).toContain('changed: PUMP_002 Pump stops (Pumps)');
      expect(text).toContain('1 added, 0 removed, 1 changed. 7 more changes are counted but not listed.');
    },
    120_000,
  );

  it.skipIf(shouldSkip(reader))(
    'says so in words when there is no earlier released baseline',
    async () => {
      const text = await textOf(undefined);
      expect(text).toContain('There is no earlier released baseline: there is nothing to compare with.');
      expect(text).not.toContain('0 added');
    },
    120_000,
  );
});

// Writer is among the test needs (scripts/test-needs.sh): without it the conversion is skipped, saying why.
(writer ? describe.skip : describe)(
  `the DOCX, converted to PDF by LibreOffice Writer${writer ? ` (${writer})` : ''}`,
  () => {
    it('converts without error, and the PDF has every readable id', async () => {
      const input = await render('docx');
      const profile = join(scratch.path, 'lo-profile');
      const run = spawnSync(
        'soffice',
        [
          `-env:UserInstallation=file://${profile}`,
          '--headless',
          '--convert-to',
          'pdf',
          '--outdir',
          join(scratch.path, 'lo'),
          input,
        ],
        { encoding: 'utf8', timeout: 150_000 },
      );
      expect(run.status, run.stderr).toBe(0);
      const pdf = join(scratch.path, 'lo', 'baseline-proposed.pdf');
      expect(existsSync(pdf)).toBe(true);
      expect(readFileSync(pdf).subarray(0, 5).toString()).toBe('%PDF-');
      if (shouldSkip(PDF_READER_MISSING)) return;
      const text = pdfText(pdf);
      expectInOrder(text, await readableIds(hostileDocument()));
    }, 180_000);
  },
);
