import { createRequire } from 'node:module';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { text as xmlText } from '../export/writers/xml.js';
import { writeChunk } from '../export/writers/output.js';
import { isReleased, type BaselineDocument, type DocumentRecord } from './model.js';
import { visibleLines } from './text.js';
import {
  changeLine,
  changesCounts,
  changesIntro,
  COVERAGE_COLUMNS,
  coverLines,
  HEADINGS,
  linkedText,
  momentText,
  noSignatures,
  NOT_RELEASED,
  pageHeader,
  recordHeading,
  SIGNATURE_COLUMNS,
  subjectTitle,
} from './wording.js';

/**
 * A baseline document as DOCX (WordprocessingML), its document.xml written as the records arrive
 * and deflated into the zip on the way: the `docx` package builds the whole document tree first
 * (about 1 GB for 10,000 records), this keeps memory flat. Word's own structures carry it: Title and
 * Heading styles, tables with a repeated header row, a page header on every page that says
 * "NOT RELEASED" while the baseline is not released. `out` is ended when the file is complete.
 */
export async function renderDocx(document: BaselineDocument, out: Writable): Promise<void> {
  const zip = archiver()('zip');
  const done = finished(out);
  zip.pipe(out);
  const date = new Date(document.generatedAt);
  const when = Number.isNaN(date.getTime()) ? new Date() : date;
  const part = (name: string, xml: string) => zip.append(Buffer.from(xml, 'utf8'), { name, date: when });
  part('[Content_Types].xml', CONTENT_TYPES);
  part('_rels/.rels', PACKAGE_RELATIONSHIPS);
  part('word/_rels/document.xml.rels', DOCUMENT_RELATIONSHIPS);
  part('word/styles.xml', STYLES);
  part('word/header1.xml', header(document));
  const body = new PassThrough();
  zip.append(body, { name: 'word/document.xml', date: when });
  const finalized = zip.finalize();
  try {
    await writeBody(document, body);
  } catch (error) {
    finalized.catch(() => {});
    done.catch(() => {});
    zip.unpipe(out);
    zip.abort();
    throw error;
  }
  body.end();
  await finalized;
  await done;
}

/** archiver's zip: a readable of the archive's bytes, entries appended in order. */
interface ZipArchive extends Readable {
  append(source: Readable | Buffer, data: { name: string; date: Date }): this;
  finalize(): Promise<void>;
  abort(): this;
}

/** archiver, loaded when a document is written, not whenever the sdk is imported. */
const archiver = (): ((format: 'zip') => ZipArchive) => createRequire(import.meta.url)('archiver');

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

const CONTENT_TYPES = `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/></Types>`;

const PACKAGE_RELATIONSHIPS = `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

const DOCUMENT_RELATIONSHIPS = `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/></Relationships>`;

const style = (id: string, name: string, size: number, bold: boolean, outline?: number) =>
  `<w:style w:type="paragraph" w:styleId="${id}"><w:name w:val="${name}"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/><w:pPr><w:keepNext/><w:spacing w:before="240" w:after="120"/>${outline === undefined ? '' : `<w:outlineLvl w:val="${outline}"/>`}</w:pPr><w:rPr>${bold ? '<w:b/>' : ''}<w:sz w:val="${size}"/></w:rPr></w:style>`;

const STYLES = `${XML_HEAD}<w:styles xmlns:w="${W}"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Noto Sans" w:hAnsi="Noto Sans" w:eastAsia="Noto Sans CJK SC" w:cs="Noto Sans"/><w:sz w:val="20"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing w:after="80"/></w:pPr></w:pPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/></w:style>${style('Title', 'Title', 48, true)}${style('Heading1', 'heading 1', 36, true, 0)}${style('Heading2', 'heading 2', 26, true, 1)}${style('Heading3', 'heading 3', 22, true, 2)}<w:style w:type="paragraph" w:styleId="Label"><w:name w:val="Label"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:pPr><w:keepNext/><w:spacing w:after="0"/><w:ind w:left="240"/></w:pPr><w:rPr><w:b/><w:color w:val="555555"/><w:sz w:val="16"/></w:rPr></w:style><w:style w:type="paragraph" w:styleId="Value"><w:name w:val="Value"/><w:basedOn w:val="Normal"/><w:pPr><w:ind w:left="240"/></w:pPr></w:style><w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/><w:tblPr><w:tblBorders><w:top w:val="single" w:sz="4" w:color="999999"/><w:left w:val="single" w:sz="4" w:color="999999"/><w:bottom w:val="single" w:sz="4" w:color="999999"/><w:right w:val="single" w:sz="4" w:color="999999"/><w:insideH w:val="single" w:sz="4" w:color="999999"/><w:insideV w:val="single" w:sz="4" w:color="999999"/></w:tblBorders><w:tblCellMar><w:left w:w="80" w:type="dxa"/><w:right w:w="80" w:type="dxa"/></w:tblCellMar></w:tblPr></w:style></w:styles>`;

interface RunStyle {
  bold?: boolean;
  color?: string;
}

/** User text as runs: its line breaks as breaks, its tabs as tabs, everything else literal. */
function runs(value: string, style: RunStyle = {}): string {
  const properties =
    style.bold || style.color
      ? `<w:rPr>${style.bold ? '<w:b/>' : ''}${style.color ? `<w:color w:val="${style.color}"/>` : ''}</w:rPr>`
      : '';
  const line = (text: string) =>
    text
      .split('\t')
      .map((piece) => (piece === '' ? '' : `<w:t xml:space="preserve">${xmlText(piece)}</w:t>`))
      .join('<w:tab/>');
  return `<w:r>${properties}${visibleLines(value).map(line).join('<w:br/>')}</w:r>`;
}

function paragraph(value: string, paragraphStyle?: string, style?: RunStyle): string {
  const properties = paragraphStyle ? `<w:pPr><w:pStyle w:val="${paragraphStyle}"/></w:pPr>` : '';
  return `<w:p>${properties}${runs(value, style)}</w:p>`;
}

const PAGE_BREAK = '<w:p><w:r><w:br w:type="page"/></w:r></w:p>';

/** Text width of an A4 page with 2 cm margins, in twentieths of a point. */
const TEXT_WIDTH = 9638;

function tableStart(columns: readonly string[], shares: readonly number[]): string {
  const widths = shares.map((share) => Math.floor(share * TEXT_WIDTH));
  const grid = widths.map((w) => `<w:gridCol w:w="${w}"/>`).join('');
  return `<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="${TEXT_WIDTH}" w:type="dxa"/></w:tblPr><w:tblGrid>${grid}</w:tblGrid>${tableRow(columns, widths, true)}`;
}

function tableRow(cells: readonly string[], widths: readonly number[], header = false): string {
  const cell = (value: string, i: number) =>
    `<w:tc><w:tcPr><w:tcW w:w="${widths[i] ?? 0}" w:type="dxa"/></w:tcPr>${paragraph(value, undefined, { bold: header })}</w:tc>`;
  return `<w:tr>${header ? '<w:trPr><w:tblHeader/></w:trPr>' : ''}${cells.map(cell).join('')}</w:tr>`;
}

const TABLE_END = '</w:tbl><w:p/>';

function header(document: BaselineDocument): string {
  const released = isReleased(document.subject);
  return `${XML_HEAD}<w:hdr xmlns:w="${W}" xmlns:r="${R}">${paragraph(pageHeader(document), undefined, released ? { color: '555555' } : { bold: true, color: 'CC0000' })}</w:hdr>`;
}

async function writeBody(document: BaselineDocument, body: Writable): Promise<void> {
  const write = (xml: string) => writeChunk(body, xml);
  await write(`${XML_HEAD}<w:document xmlns:w="${W}" xmlns:r="${R}"><w:body>`);

  await write(paragraph('Requirements specification', 'Title'));
  await write(paragraph(subjectTitle(document.subject), 'Heading2'));
  for (const [label, value] of coverLines(document))
    await write(paragraph(label, 'Label') + paragraph(value, 'Value', { bold: label === 'Status' }));
  if (!isReleased(document.subject))
    await write(paragraph(NOT_RELEASED, undefined, { bold: true, color: 'CC0000' }));

  await write(PAGE_BREAK + paragraph(HEADINGS.signatures, 'Heading1'));
  if (document.signatures.length === 0) await write(paragraph(noSignatures(document)));
  else {
    const shares = [0.45, 0.25, 0.3];
    const widths = shares.map((share) => Math.floor(share * TEXT_WIDTH));
    await write(tableStart(SIGNATURE_COLUMNS, shares));
    for (const s of document.signatures)
      await write(tableRow([s.signer, s.meaning, momentText(s.signedAt)], widths));
    await write(TABLE_END);
  }

  let section = 0;
  for await (const topic of document.topics) {
    const number = ++section;
    await write(PAGE_BREAK + paragraph(`${number}. ${topic.name}`, 'Heading1'));
    let index = 0;
    for await (const record of topic.records) await write(recordXml(`${number}.${++index}`, record));
    if (index === 0) await write(paragraph('This topic has no records.'));
  }

  for (const matrix of document.matrices) {
    await write(PAGE_BREAK + paragraph(`${++section}. ${HEADINGS.matrix}: ${matrix.title}`, 'Heading1'));
    const shares = Array.from({ length: matrix.columns.length + 1 }, () => 1 / (matrix.columns.length + 1));
    const widths = shares.map((share) => Math.floor(share * TEXT_WIDTH));
    await write(tableStart([matrix.rowHeader, ...matrix.columns], shares));
    for await (const row of matrix.rows)
      await write(tableRow([row.readableId, ...row.cells.map((cell) => linkedText(cell))], widths));
    await write(TABLE_END);
  }

  await write(PAGE_BREAK + paragraph(`${++section}. ${HEADINGS.coverage}`, 'Heading1'));
  if (document.coverage.length === 0) await write(paragraph('No coverage rules apply.'));
  else {
    const shares = [0.6, 0.2, 0.2];
    const widths = shares.map((share) => Math.floor(share * TEXT_WIDTH));
    await write(tableStart(COVERAGE_COLUMNS.slice(0, 3), shares));
    for (const line of document.coverage)
      await write(tableRow([line.rule, `${line.covered} of ${line.total}`, `${line.percent}%`], widths));
    await write(TABLE_END);
    for (const line of document.coverage)
      if (line.uncovered.length > 0)
        await write(
          paragraph(`${COVERAGE_COLUMNS[3]}: ${line.rule}`, 'Label') +
            paragraph(line.uncovered.join(', '), 'Value'),
        );
  }

  const { changes } = document;
  if (changes) {
    await write(PAGE_BREAK + paragraph(`${++section}. ${HEADINGS.changes}`, 'Heading1'));
    await write(paragraph(changesIntro(changes.against)));
    const counts = { added: 0, removed: 0, changed: 0 };
    for await (const change of changes.changes) {
      counts[change.kind] += 1;
      let xml = paragraph(changeLine(change), undefined, { bold: true });
      if (change.kind === 'changed')
        for (const field of change.fields)
          xml +=
            paragraph(field.label, 'Label') +
            paragraph(`was: ${field.before}`, 'Value') +
            paragraph(`now: ${field.after}`, 'Value');
      await write(xml);
    }
    if (changes.against !== undefined) await write(paragraph(changesCounts(counts, changes.omitted)));
  }

  // A4, 2 cm margins, the header on every page.
  await write(
    `<w:sectPr><w:headerReference w:type="default" r:id="rId2"/><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1134" w:right="1134" w:bottom="1134" w:left="1134" w:header="567" w:footer="567" w:gutter="0"/></w:sectPr></w:body></w:document>`,
  );
}

function recordXml(number: string, record: DocumentRecord): string {
  let xml = paragraph(recordHeading(number, record), 'Heading3');
  for (const field of record.fields) xml += paragraph(field.label, 'Label') + paragraph(field.value, 'Value');
  for (const links of record.links)
    xml += paragraph(links.role, 'Label') + paragraph(linkedText(links.records) || 'none', 'Value');
  return xml;
}
