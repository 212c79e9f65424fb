import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { create, type Font } from 'fontkit';
import { codePointMark } from './text.js';

/**
 * The fonts a PDF embeds, from the Noto families of the @fontsource packages, and for each run of
 * text the font that has its glyphs. Fontsource splits a family into files by Unicode range (its
 * unicode.json names them); a file is read only when a character of its range is written, and is
 * trusted only for the glyphs it really has. WOFF files are used, not WOFF2: fontkit cannot subset
 * the composite glyphs (accented letters) of a WOFF2 font. Each is unpacked into a plain TrueType
 * font once: fontkit would inflate a WOFF table again for every glyph it reads.
 */

/** In order of preference: text takes the first family that has a glyph for it. */
const FAMILIES = [
  'noto-sans', // Latin, Greek, Cyrillic, Vietnamese
  'noto-sans-hebrew',
  'noto-sans-arabic',
  'noto-sans-sc', // Han, kana, CJK punctuation
  'noto-sans-symbols-2',
  'noto-sans-math',
  'noto-emoji', // monochrome outlines: PDF fonts cannot carry colour glyphs portably
] as const;

export interface FontFile {
  /** The name it is registered under in the PDF. */
  key: string;
  font: Font;
  bytes: Buffer;
  /** Per code point below COVERAGE_CACHED: UNKNOWN, HAS or LACKS its glyph (a character map lookup each, once). */
  coverage: Uint8Array;
}

/** The Basic Multilingual Plane: the code points whose glyph lookups are remembered per font. */
const COVERAGE_CACHED = 0x10000;
const UNKNOWN = 0;
const HAS = 1;
const LACKS = 2;

interface Subset {
  ranges: [number, number][];
  paths: { regular: string; bold: string };
}

export interface TextRun {
  font: FontFile;
  text: string;
}

const TAB = '    ';

/**
 * A run of right-to-left words only (Hebrew, Arabic and their presentation forms). fontkit puts the
 * glyphs of a word right to left, but pdfkit sets the pieces of text it is given left to right:
 * each word and each space is given as a piece of its own, last word first, so that the line reads
 * right to left. A run wrapped onto several lines reads from its last line up.
 */
const RIGHT_TO_LEFT =
  /^[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF ]*[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF][\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF ]*$/;

const resolve = createRequire(import.meta.url).resolve;

/** A WOFF 1.0 font as the TrueType/OpenType font it packs (its tables inflated, its directory rebuilt). */
export function sfntOfWoff(woff: Buffer): Buffer {
  if (woff.toString('latin1', 0, 4) !== 'wOFF') return woff;
  const count = woff.readUInt16BE(12);
  const tables = Array.from({ length: count }, (_, i) => {
    const entry = 44 + i * 20;
    const offset = woff.readUInt32BE(entry + 4);
    const packed = woff.readUInt32BE(entry + 8);
    const length = woff.readUInt32BE(entry + 12);
    const raw = woff.subarray(offset, offset + packed);
    return {
      tag: woff.subarray(entry, entry + 4),
      checksum: woff.readUInt32BE(entry + 16),
      data: packed < length ? inflateSync(raw) : raw,
    };
  });
  const padded = (n: number) => (n + 3) & ~3;
  const head = 12 + count * 16;
  const sfnt = Buffer.alloc(head + tables.reduce((sum, t) => sum + padded(t.data.length), 0));
  const power = 2 ** Math.floor(Math.log2(count));
  sfnt.writeUInt32BE(woff.readUInt32BE(4), 0);
  sfnt.writeUInt16BE(count, 4);
  sfnt.writeUInt16BE(power * 16, 6);
  sfnt.writeUInt16BE(Math.log2(power), 8);
  sfnt.writeUInt16BE(count * 16 - power * 16, 10);
  let at = head;
  tables.forEach((table, i) => {
    const record = 12 + i * 16;
    table.tag.copy(sfnt, record);
    sfnt.writeUInt32BE(table.checksum, record + 4);
    sfnt.writeUInt32BE(at, record + 8);
    sfnt.writeUInt32BE(table.data.length, record + 12);
    table.data.copy(sfnt, at);
    at += padded(table.data.length);
  });
  return sfnt;
}

function parseRanges(text: string): [number, number][] {
  return text.split(',').map((range) => {
    const [from, to] = range.trim().replace(/^U\+/i, '').split('-');
    const start = parseInt(from!, 16);
    return [start, to === undefined ? start : parseInt(to, 16)];
  });
}

function subsetsOf(family: string): Subset[] {
  const folder = dirname(resolve(`@fontsource/${family}/unicode.json`));
  const table = JSON.parse(readFileSync(join(folder, 'unicode.json'), 'utf8')) as Record<string, string>;
  return Object.entries(table).map(([name, ranges]) => {
    const file = (weight: number) =>
      join(folder, 'files', `${family}-${name.replace(/[[\]]/g, '')}-${weight}-normal.woff`);
    const bold = existsSync(file(700)) ? file(700) : file(400);
    // A family in one file is asked for each glyph: its one range is no more than a label.
    const whole = Object.keys(table).length === 1;
    return { ranges: whole ? [[0, 0x10ffff]] : parseRanges(ranges), paths: { regular: file(400), bold } };
  });
}

/** Whether a font has a glyph; one whose character map fontkit cannot read has none. */
function hasGlyph(file: FontFile, codePoint: number): boolean {
  if (codePoint >= COVERAGE_CACHED) return readGlyph(file, codePoint);
  let known = file.coverage[codePoint]!;
  if (known === UNKNOWN) {
    known = readGlyph(file, codePoint) ? HAS : LACKS;
    file.coverage[codePoint] = known;
  }
  return known === HAS;
}

function readGlyph(file: FontFile, codePoint: number): boolean {
  try {
    return file.font.hasGlyphForCodePoint(codePoint);
  } catch {
    return false;
  }
}

export class FontCatalog {
  private readonly families = FAMILIES.map(subsetsOf);
  private readonly chosen = new Map<number, FontFile | null>();
  private readonly byPath = new Map<string, FontFile>();
  /** The fonts read so far, each to be registered with the PDF once. */
  readonly loaded: FontFile[] = [];

  /** The Latin font, which also shows the marks of characters no font has. */
  base(bold: boolean): FontFile {
    return this.fileFor(0x41, bold)!;
  }

  /** The text cut into runs, each with a font that has all its glyphs; what none has is marked. */
  runs(text: string, bold: boolean): TextRun[] {
    const whole = this.inBase(text, bold);
    const runs = whole ? [whole] : this.cut(text, bold);
    return runs.flatMap((run) => (RIGHT_TO_LEFT.test(run.text) ? this.rightToLeft(run, bold) : [run]));
  }

  /** The text cut character by character into runs of the fonts that have them. */
  private cut(text: string, bold: boolean): TextRun[] {
    const runs: TextRun[] = [];
    const push = (font: FontFile, chars: string) => {
      const last = runs[runs.length - 1];
      if (last && last.font === font) last.text += chars;
      else runs.push({ font, text: chars });
    };
    for (const char of text) {
      const codePoint = char.codePointAt(0)!;
      const current = runs[runs.length - 1]?.font;
      // Line breaks are layout, not glyphs; a tab is shown as the space it makes.
      if (char === '\n' || char === '\t') {
        push(current ?? this.base(bold), char === '\t' ? TAB : char);
        continue;
      }
      // Staying in the current font keeps marks and joiners with the characters they belong to.
      if (current && hasGlyph(current, codePoint)) push(current, char);
      else {
        const font = this.fileFor(codePoint, bold);
        if (font) push(font, char);
        else push(this.base(bold), codePointMark(codePoint));
      }
    }
    return runs;
  }

  /**
   * The text as one run of the Latin font, when that is what cutting it character by character
   * would give (cut): its first character takes that font and the font has every other one, so
   * none switches font. Most text is such, and is then looked at once, not cut.
   */
  private inBase(text: string, bold: boolean): TextRun | undefined {
    if (text === '') return undefined;
    const base = this.base(bold);
    let first = true;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === 0x0a || code === 0x09) continue;
      // A surrogate pair, or any other plane: the general way.
      if (code >= 0xd800 && code <= 0xdfff) return undefined;
      if (first) {
        if (this.fileFor(code, bold) !== base) return undefined;
        first = false;
      } else if (!hasGlyph(base, code)) return undefined;
    }
    return { font: base, text: text.includes('\t') ? text.replaceAll('\t', TAB) : text };
  }

  /** The words of a right-to-left run in the order they are set, left to right, with the spaces between. */
  private rightToLeft(run: TextRun, bold: boolean): TextRun[] {
    return run.text
      .split(/( +)/)
      .filter((piece) => piece !== '')
      .reverse()
      .map((piece) => ({ font: piece.startsWith(' ') ? this.base(bold) : run.font, text: piece }));
  }

  private fileFor(codePoint: number, bold: boolean): FontFile | undefined {
    const key = codePoint * 2 + (bold ? 1 : 0);
    let found = this.chosen.get(key);
    if (found === undefined) {
      found = this.search(codePoint, bold) ?? null;
      this.chosen.set(key, found);
    }
    return found ?? undefined;
  }

  private search(codePoint: number, bold: boolean): FontFile | undefined {
    for (const subsets of this.families)
      for (const subset of subsets) {
        if (!subset.ranges.some(([from, to]) => codePoint >= from && codePoint <= to)) continue;
        const file = this.load(subset, bold);
        if (hasGlyph(file, codePoint)) return file;
      }
    return undefined;
  }

  private load(subset: Subset, bold: boolean): FontFile {
    const path = subset.paths[bold ? 'bold' : 'regular'];
    let file = this.byPath.get(path);
    if (!file) {
      const bytes = sfntOfWoff(readFileSync(path));
      file = {
        key: `F${this.loaded.length}`,
        font: create(bytes) as Font,
        bytes,
        coverage: new Uint8Array(COVERAGE_CACHED),
      };
      this.byPath.set(path, file);
      this.loaded.push(file);
    }
    return file;
  }
}
