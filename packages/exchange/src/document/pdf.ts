import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import PDFDocument from 'pdfkit';
import { whenDrained } from '../export/writers/output.js';
import { FontCatalog, type FontFile } from './fonts.js';
import { isReleased, type BaselineDocument, type DocumentRecord, type TraceMatrix } from './model.js';
import { visibleText } from './text.js';
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
 * A baseline document as PDF (pdfkit), written to `out` page by page: pdfkit hands each page on
 * when the next begins, and the renderer waits for `out` to drain after each record, so memory
 * stays flat with the number of records. Text is laid out in runs of embedded fonts that have its
 * glyphs (FontCatalog); every page carries a running header, its number and, while the baseline is
 * not released, "NOT RELEASED" in the header and as a watermark drawn as outlines (not text, so
 * that text extraction reads the page in its order). `out` is ended when the PDF is complete; on a
 * failure it is left to the caller.
 */
export async function renderPdf(document: BaselineDocument, out: Writable): Promise<void> {
  await new PdfRenderer(document, out).render();
}

type Pdf = PDFKit.PDFDocument;

const SIZE = { body: 10, small: 8, h1: 18, h2: 13, h3: 11, cover: 24 } as const;
const MARGIN = 56;
const GREY = '#555555';

/**
 * Words pdfkit shapes (fontkit, per font) are kept in two generations of at most this many each: a
 * word used again within a generation is shaped once, and memory stays flat however many distinct
 * words (ids, numbers) the document has.
 */
const LAYOUT_GENERATION = 1000;

/** Longest stretch of rendering, in milliseconds, between two turns of the event loop. */
const TURN_MS = 10;

interface GlyphRun {
  glyphs: unknown[];
  positions: unknown[];
  advanceWidth: number;
}

/** The part of pdfkit's embedded font (EmbeddedFont) that lays out text, word by word. */
interface WordLayout {
  layoutCache?: object;
  layoutRun(text: string, features?: unknown): GlyphRun;
  layoutCached(text: string): GlyphRun;
  /** Without `glyphs` and `positions` (null) when only the width is asked for. */
  layout(text: string, features?: unknown, onlyWidth?: boolean): WordsLaidOut;
}

interface WordsLaidOut {
  glyphs: unknown[] | null;
  positions: unknown[] | null;
  advanceWidth: number;
}

/**
 * Gives a pdfkit font the same word layout at less cost: its unbounded cache of shaped words
 * becomes two bounded generations of what the layout reads of them (glyphs, positions, width), and
 * a text's words (each with the space or tab after it, as pdfkit cuts them) are joined by
 * appending, not by copying the arrays for every word. Only `layout` reads `layoutCached`.
 */
function tuneLayout(font: Partial<WordLayout>): void {
  // Another pdfkit, laying out otherwise, keeps its own layout: slower, never wrong.
  if (typeof font.layoutRun !== 'function' || typeof font.layoutCached !== 'function') return;
  tuneWordLayout(font as WordLayout);
}

function tuneWordLayout(font: WordLayout): void {
  let young = new Map<string, GlyphRun>();
  let old = new Map<string, GlyphRun>();
  font.layoutCache = undefined;
  font.layoutCached = (text) => {
    let run = young.get(text);
    if (run !== undefined) return run;
    run = old.get(text);
    if (run === undefined) {
      // What the layout below reads of a run, without the rest fontkit keeps (its features, script).
      const { glyphs, positions, advanceWidth } = font.layoutRun(text);
      run = { glyphs, positions, advanceWidth };
    }
    if (young.size >= LAYOUT_GENERATION) {
      old = young;
      young = new Map();
    }
    young.set(text, run);
    return run;
  };
  font.layout = (text, features, onlyWidth) => {
    if (features) return font.layoutRun(text, features);
    const glyphs: unknown[] | null = onlyWidth ? null : [];
    const positions: unknown[] | null = onlyWidth ? null : [];
    let advanceWidth = 0;
    let last = 0;
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (code !== 0x20 && code !== 0x09 && index < text.length - 1) continue;
      const run = font.layoutCached(text.slice(last, index + 1));
      if (glyphs && positions) {
        for (const glyph of run.glyphs) glyphs.push(glyph);
        for (const position of run.positions) positions.push(position);
      }
      advanceWidth += run.advanceWidth;
      last = index + 1;
    }
    return { glyphs, positions, advanceWidth };
  };
}

interface TextStyle {
  size: number;
  bold?: boolean;
  color?: string;
  indent?: number;
}

class PdfRenderer {
  private readonly pdf: Pdf;
  private readonly fonts = new FontCatalog();
  private readonly registered = new Set<string>();
  private readonly released: boolean;
  private readonly header: string;
  private pageNumber = 0;
  /** The font and size text is being written in: a page break in the middle must restore them. */
  private current: { font: FontFile; size: number } | undefined;
  private section = 0;
  private outline: { path: string; advance: number; unitsPerEm: number } | undefined;
  /** The fill colour set last on this page: text sets it only when it changes. */
  private fill = 'black';
  /** When the renderer last gave the event loop a turn (`drained`). */
  private turnTaken = performance.now();

  constructor(
    private readonly document: BaselineDocument,
    private readonly out: Writable,
  ) {
    this.released = isReleased(document.subject);
    this.header = visibleText(pageHeader(document));
    this.pdf = new PDFDocument({
      size: 'A4',
      margins: { top: MARGIN + 14, bottom: MARGIN, left: MARGIN, right: MARGIN },
      autoFirstPage: false,
      bufferPages: false,
      info: { Title: visibleText(`${document.tenant}: ${subjectTitle(document.subject)}`), Producer: 'RXS' },
    });
    this.pdf.on('pageAdded', () => this.decoratePage());
  }

  async render(): Promise<void> {
    const done = finished(this.out);
    this.pdf.pipe(this.out);
    try {
      this.cover();
      this.signatures();
      for await (const topic of this.document.topics) {
        this.newPage();
        const number = ++this.section;
        this.heading(`${number}. ${topic.name}`, SIZE.h1);
        let index = 0;
        for await (const record of topic.records) {
          this.record(`${number}.${++index}`, record);
          await this.drained();
        }
        if (index === 0) this.write('This topic has no records.', { size: SIZE.body, color: GREY });
      }
      await this.matrices();
      this.coverage();
      await this.changes();
    } catch (error) {
      done.catch(() => {});
      this.pdf.unpipe(this.out);
      throw error;
    }
    this.pdf.end();
    await done;
  }

  private async drained(): Promise<void> {
    if (this.out.writableNeedDrain) await whenDrained(this.out);
    // Laying out text is synchronous work: others (a server's other requests) get a turn often.
    if (performance.now() - this.turnTaken > TURN_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      this.turnTaken = performance.now();
    }
  }

  private newPage(): void {
    this.pdf.addPage();
  }

  /** The running header, the page number and the watermark, drawn before the page's content. */
  private decoratePage(): void {
    const pdf = this.pdf;
    this.pageNumber += 1;
    const { x, y } = pdf;
    const resume = this.current;
    // A page's content starts in black; text broken across pages goes on in its own colour.
    const fill = this.fill;
    this.fill = 'black';
    const width = pdf.page.width - 2 * MARGIN;
    // Header and footer lie in the margins, where text would otherwise start another page.
    const margins = pdf.page.margins;
    pdf.page.margins = { top: 0, bottom: 0, left: 0, right: 0 };
    if (!this.released) this.watermark();
    this.place(
      this.header,
      MARGIN,
      MARGIN - 14,
      { size: SIZE.small, bold: !this.released, color: GREY },
      width,
    );
    this.place(
      `Page ${this.pageNumber}`,
      MARGIN,
      pdf.page.height - MARGIN + 14,
      { size: SIZE.small, color: GREY },
      width,
    );
    pdf.page.margins = margins;
    this.fillColor(fill);
    if (resume) this.use(resume.font, resume.size);
    pdf.x = x;
    pdf.y = y;
  }

  /** "NOT RELEASED" across the page, as glyph outlines filled in a light colour. */
  private watermark(): void {
    const pdf = this.pdf;
    const { path, advance, unitsPerEm } = this.watermarkOutline();
    const size = 72;
    const scale = size / unitsPerEm;
    pdf.save();
    pdf.translate(pdf.page.width / 2, pdf.page.height / 2);
    pdf.rotate(-50);
    pdf.scale(scale, -scale);
    pdf.translate(-advance / 2, -unitsPerEm * 0.35);
    pdf.path(path).fillColor('#cc0000').fillOpacity(0.12).fill();
    pdf.restore();
  }

  /** The watermark's outlines in font units, the same on every page: laid out once. */
  private watermarkOutline(): { path: string; advance: number; unitsPerEm: number } {
    if (this.outline) return this.outline;
    const font = this.fonts.base(true).font;
    const run = font.layout(NOT_RELEASED);
    let advance = 0;
    let path = '';
    run.glyphs.forEach((glyph, i) => {
      path += glyph.path.translate(advance, 0).toSVG();
      advance += run.positions[i]!.xAdvance;
    });
    this.outline = { path, advance, unitsPerEm: font.unitsPerEm };
    return this.outline;
  }

  private use(font: FontFile, size: number): void {
    if (!this.registered.has(font.key)) {
      this.pdf.registerFont(font.key, font.bytes);
      this.pdf.font(font.key);
      tuneLayout((this.pdf as unknown as { _font: Partial<WordLayout> })._font);
      this.registered.add(font.key);
    }
    this.pdf.font(font.key).fontSize(size);
    this.current = { font, size };
  }

  private fillColor(color: string): void {
    if (color === this.fill) return;
    this.pdf.fillColor(color);
    this.fill = color;
  }

  /** Writes user or document text at the current position, flowing onto new pages as needed. */
  private write(text: string, style: TextStyle, width?: number): void {
    const pdf = this.pdf;
    const runs = this.fonts.runs(visibleText(text), style.bold === true);
    this.fillColor(style.color ?? 'black');
    const options: PDFKit.Mixins.TextOptions = {
      width: width ?? pdf.page.width - 2 * MARGIN - (style.indent ?? 0),
    };
    if (style.indent) pdf.x = MARGIN + style.indent;
    if (runs.length === 0) {
      this.use(this.fonts.base(false), style.size);
      pdf.text(' ', options);
    }
    runs.forEach((run, i) => {
      this.use(run.font, style.size);
      pdf.text(run.text, i < runs.length - 1 ? { ...options, continued: true } : options);
    });
    pdf.x = MARGIN;
  }

  /** Text at a place, on one line's worth of width, without moving the flow. */
  private place(text: string, x: number, y: number, style: TextStyle, width: number): void {
    const pdf = this.pdf;
    pdf.x = x;
    pdf.y = y;
    const runs = this.fonts.runs(visibleText(text), style.bold === true);
    this.fillColor(style.color ?? 'black');
    runs.forEach((run, i) => {
      this.use(run.font, style.size);
      pdf.text(run.text, { width, lineBreak: false, continued: i < runs.length - 1 });
    });
  }

  private heading(text: string, size: number): void {
    this.keepSpace(size * 4);
    this.write(text, { size, bold: true });
    this.pdf.moveDown(0.4);
  }

  /** Starts a new page unless `height` points are left on this one. */
  private keepSpace(height: number): void {
    const bottom = this.pdf.page.height - this.pdf.page.margins.bottom;
    if (this.pdf.y + height > bottom) this.newPage();
  }

  private cover(): void {
    this.newPage();
    const pdf = this.pdf;
    pdf.y = pdf.page.height / 4;
    this.write('Requirements specification', { size: SIZE.cover, bold: true });
    this.write(subjectTitle(this.document.subject), { size: SIZE.h2 });
    pdf.moveDown(2);
    for (const [label, value] of coverLines(this.document)) {
      this.write(label, { size: SIZE.small, color: GREY });
      this.write(value, { size: SIZE.h3, bold: label === 'Status' });
      pdf.moveDown(0.5);
    }
    if (!this.released) {
      pdf.moveDown(1);
      this.write(NOT_RELEASED, { size: SIZE.h2, bold: true, color: '#cc0000' });
    }
  }

  private signatures(): void {
    this.newPage();
    this.heading(HEADINGS.signatures, SIZE.h1);
    const { signatures } = this.document;
    if (signatures.length === 0) this.write(noSignatures(this.document), { size: SIZE.body, color: GREY });
    else
      this.table(
        [...SIGNATURE_COLUMNS],
        [0.45, 0.25, 0.3],
        signatures.map((s) => [s.signer, s.meaning, momentText(s.signedAt)]),
      );
  }

  private record(number: string, record: DocumentRecord): void {
    this.heading(recordHeading(number, record), SIZE.h3);
    for (const field of record.fields) {
      this.keepSpace(SIZE.body * 3);
      this.write(field.label, { size: SIZE.small, bold: true, color: GREY, indent: 12 });
      this.write(field.value, { size: SIZE.body, indent: 12 });
      this.pdf.moveDown(0.3);
    }
    for (const links of record.links) {
      this.keepSpace(SIZE.body * 3);
      this.write(links.role, { size: SIZE.small, bold: true, color: GREY, indent: 12 });
      this.write(linkedText(links.records) || 'none', { size: SIZE.body, indent: 12 });
      this.pdf.moveDown(0.3);
    }
    this.pdf.moveDown(0.6);
  }

  private async matrices(): Promise<void> {
    for (const matrix of this.document.matrices) await this.matrix(matrix);
  }

  private async matrix(matrix: TraceMatrix): Promise<void> {
    this.newPage();
    this.heading(`${++this.section}. ${HEADINGS.matrix}: ${matrix.title}`, SIZE.h1);
    const share = 1 / (matrix.columns.length + 1);
    await this.table(
      [matrix.rowHeader, ...matrix.columns],
      [share, ...matrix.columns.map(() => share)],
      (async function* () {
        for await (const row of matrix.rows)
          yield [row.readableId, ...row.cells.map((cell) => linkedText(cell))];
      })(),
    );
  }

  private coverage(): void {
    this.newPage();
    this.heading(`${++this.section}. ${HEADINGS.coverage}`, SIZE.h1);
    const lines = this.document.coverage;
    if (lines.length === 0) {
      this.write('No coverage rules apply.', { size: SIZE.body, color: GREY });
      return;
    }
    const [rule, covered, percent] = COVERAGE_COLUMNS;
    this.table(
      [rule, covered, percent],
      [0.6, 0.2, 0.2],
      lines.map((line) => [line.rule, `${line.covered} of ${line.total}`, `${line.percent}%`]),
    );
    for (const line of lines) {
      if (line.uncovered.length === 0) continue;
      this.pdf.moveDown(0.6);
      this.write(`${COVERAGE_COLUMNS[3]}: ${line.rule}`, { size: SIZE.small, bold: true, color: GREY });
      this.write(line.uncovered.join(', '), { size: SIZE.body });
    }
  }

  private async changes(): Promise<void> {
    if (!this.document.changes) return;
    const { against, changes, omitted } = this.document.changes;
    this.newPage();
    this.heading(`${++this.section}. ${HEADINGS.changes}`, SIZE.h1);
    this.write(changesIntro(against), { size: SIZE.body, color: GREY });
    this.pdf.moveDown(0.6);
    const counts = { added: 0, removed: 0, changed: 0 };
    for await (const change of changes) {
      counts[change.kind] += 1;
      this.keepSpace(SIZE.body * 4);
      this.write(changeLine(change), { size: SIZE.body, bold: true });
      if (change.kind === 'changed')
        for (const field of change.fields) {
          this.write(field.label, { size: SIZE.small, bold: true, color: GREY, indent: 12 });
          this.write(`was: ${field.before}`, { size: SIZE.body, indent: 12 });
          this.write(`now: ${field.after}`, { size: SIZE.body, indent: 12 });
        }
      this.pdf.moveDown(0.4);
      await this.drained();
    }
    if (against === undefined) return;
    this.pdf.moveDown(0.6);
    this.write(changesCounts(counts, omitted), { size: SIZE.body });
  }

  /**
   * A table of text cells with a repeated header row: a row that does not fit the page starts a
   * new one. Row heights are measured after the cells are written (each cell is text in runs of
   * several fonts, which one measurement cannot know beforehand).
   */
  private table(columns: string[], shares: number[], rows: Iterable<string[]>): void;
  private table(columns: string[], shares: number[], rows: AsyncIterable<string[]>): Promise<void>;
  private table(
    columns: string[],
    shares: number[],
    rows: Iterable<string[]> | AsyncIterable<string[]>,
  ): void | Promise<void> {
    const pdf = this.pdf;
    const width = pdf.page.width - 2 * MARGIN;
    const widths = shares.map((share) => share * width);
    const row = (cells: string[], bold: boolean) => {
      this.use(this.fonts.base(bold), SIZE.body);
      const estimate = Math.max(
        ...cells.map((cell, i) => pdf.heightOfString(visibleText(cell) || ' ', { width: widths[i]! - 8 })),
      );
      const bottom = pdf.page.height - pdf.page.margins.bottom;
      if (pdf.y + estimate + 8 > bottom) {
        this.newPage();
        if (!bold) row(columns, true);
      }
      const top = pdf.y;
      let end = top;
      let x = MARGIN;
      cells.forEach((cell, i) => {
        pdf.x = x + 4;
        pdf.y = top + 3;
        this.write(cell, { size: SIZE.body, bold }, widths[i]! - 8);
        end = Math.max(end, pdf.y);
        x += widths[i]!;
      });
      end += 3;
      pdf.save().lineWidth(0.5).strokeColor('#999999');
      pdf
        .moveTo(MARGIN, end)
        .lineTo(MARGIN + width, end)
        .stroke();
      pdf.restore();
      pdf.x = MARGIN;
      pdf.y = end;
    };
    row(columns, true);
    if (Symbol.asyncIterator in rows)
      return (async () => {
        for await (const cells of rows) {
          row(cells, false);
          await this.drained();
        }
      })();
    for (const cells of rows) row(cells, false);
  }
}
