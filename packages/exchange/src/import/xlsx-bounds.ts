import { eventLoopSlices } from '../event-loop.js';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline as pipelineAsync } from 'node:stream/promises';
import type ExcelJS from 'exceljs';
import { SaxesParser } from 'saxes';
import { cellTooLarge, limitError, sizeText, XmlRuns, type ImportLimits } from './limits.js';
import { ImportFileError } from './errors.js';
import { inflatedBytes, unzipper, withZipDirectory, type ZipBounds } from './zip-bounds.js';

type SheetEvent = { eventType: string; value: unknown };

/** A relationship of xl/_rels/workbook.xml.rels, its attributes as exceljs reads them. */
interface Relationship {
  Id?: string;
  Type?: string;
  Target?: string;
  TargetMode?: string;
}

/** The parts of exceljs's streaming WorkbookReader that the bounded reader drives. */
interface WorkbookReaderParts {
  sharedStrings?: unknown[];
  workbookRels?: Relationship[];
  model?: { sheets?: { name?: string; rId?: string }[] };
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(iterator: AsyncIterable<Buffer>, sheetNo: string): Iterable<SheetEvent>;
}

type WorkbookReaderClass = new (input: string, options: object) => WorkbookReaderParts;

const WORKBOOK = 'xl/workbook.xml';
const WORKBOOK_RELS = 'xl/_rels/workbook.xml.rels';
const SHARED_STRINGS = 'xl/sharedStrings.xml';
const STYLES = 'xl/styles.xml';
/** The parts the reader parses as XML besides the sheet it reads; the others are only counted. */
const PARSED = new Set([WORKBOOK_RELS, WORKBOOK, SHARED_STRINGS, STYLES]);
/** The relationship type of a worksheet, transitional or strict OOXML. */
const WORKSHEET_RELATIONSHIP = /\/relationships\/worksheet$/;

/**
 * An XML part's bytes, its runs between two `<` bounded by the cell limit (XmlRuns). `<!` (a
 * comment, CDATA, a DOCTYPE) and `<?` past the XML declaration would let a text hold `<`:
 * spreadsheets write neither, and they are refused.
 */
class WorkbookXml extends Transform {
  private bytes = 0;
  private readonly runs: XmlRuns;
  private lastWasLt = false;

  constructor(
    private readonly path: string,
    private readonly limits: ImportLimits,
  ) {
    super();
    this.runs = new XmlRuns(limits.maxCellBytes);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const start = this.bytes;
    this.bytes += chunk.length;
    // The declaration `<?xml` starts the part (after a byte order mark, if any).
    const markup =
      chunk.indexOf('<!') >= 0 ||
      chunk.indexOf('<?', start === 0 ? 4 : 0) >= 0 ||
      (this.lastWasLt && (chunk[0] === 0x21 || chunk[0] === 0x3f));
    if (markup)
      return done(
        new ImportFileError(
          `The workbook's ${this.path} holds XML markup that spreadsheets do not write (a comment, CDATA or a DOCTYPE): it is not an .xlsx file as Excel or LibreOffice save it. Save it again from the spreadsheet.`,
        ),
      );
    this.lastWasLt = chunk[chunk.length - 1] === 0x3c;
    if (this.runs.exceeds(chunk)) return done(cellTooLarge(this.limits, `in ${this.path}`));
    done(null, chunk);
  }
}

/** A workbook's bounds: its zip's limits, in words about workbooks. */
const workbookBounds = (limits: ImportLimits): ZipBounds => ({
  limits,
  entryTooLarge: (path) =>
    limitError(
      'maxEntryBytes',
      limits.maxEntryBytes,
      `The workbook's ${path} unpacks to more than ${sizeText(limits.maxEntryBytes)}, the most one part of a workbook may: split the sheet into several files, or import it as CSV.`,
    ),
  archiveTooLarge: () =>
    limitError(
      'maxArchiveBytes',
      limits.maxArchiveBytes,
      `The workbook unpacks to more than ${sizeText(limits.maxArchiveBytes)}, the most a workbook may: split it into several files, or import it as CSV.`,
    ),
});

/** A worksheet of a workbook: its name as xl/workbook.xml gives it, and the zip entry of its cells. */
export interface WorkbookSheet {
  readonly name: string;
  /** The entry its relationship targets, as the zip spells it; undefined when the zip has none. */
  readonly part: string | undefined;
}

/** A workbook's worksheets, and the rows of one of them streamed from its zip. */
export interface BoundedWorkbook {
  /** In the workbook's order; chart and dialog sheets, which hold no rows, are left out. */
  readonly sheets: readonly WorkbookSheet[];
  rows(sheet: WorkbookSheet): AsyncGenerator<ExcelJS.Row>;
}

/**
 * A workbook read with exceljs's streaming reader, every byte it reads bounded: the zip's entries
 * are counted as they inflate (a zip bomb stops at the limit, whatever sizes it declares), XML
 * runs are bounded by the cell limit, and the shared string table (held in memory while the sheet
 * is read) by its count and characters.
 *
 * The sheets are named from xl/workbook.xml and its relationships, read first through the zip's
 * central directory: a name does not depend on where those parts are in the zip (exceljs's
 * streaming writer and openpyxl write them after the sheets), and a sheet is found by the part its
 * relationship targets, however the target is written. The sheet read is parsed once the parts its
 * cells refer to (shared strings, styles) are read; when it comes before them in the zip, it waits
 * in a temporary folder.
 */
export async function openBoundedWorkbook(
  excel: typeof ExcelJS,
  file: string,
  limits: ImportLimits,
): Promise<BoundedWorkbook> {
  const Base = excel.stream.xlsx.WorkbookReader as unknown as WorkbookReaderClass;
  class BoundedWorkbookReader extends Base implements BoundedWorkbook {
    sheets: WorkbookSheet[] = [];
    /** The parts a sheet's cells refer to that the zip holds. */
    private cellParts: string[] = [];

    /** The sheets, from the workbook and its relationships wherever they are in the zip. */
    async readSheets(): Promise<void> {
      await withZipDirectory(file, 'a workbook', async (entries) => {
        const parse = async (path: string, parser: (bytes: Readable) => Promise<void>) => {
          const entry = entries.get(path);
          if (!entry) throw new Error(`it has no ${path}`);
          const bytes = boundedBytes(entry.stream(), path, limits, { bytes: 0 }, true);
          await parser(bytes);
          for await (const chunk of bytes) void chunk;
        };
        await parse(WORKBOOK_RELS, (bytes) => this._parseRels(bytes));
        await parse(WORKBOOK, (bytes) => this._parseWorkbook(bytes));
        this.sheets = worksheetsOf(this, entries.keys());
        this.cellParts = [SHARED_STRINGS, STYLES].filter((path) => entries.has(path));
      });
    }

    async *rows(sheet: WorkbookSheet): AsyncGenerator<ExcelJS.Row> {
      if (sheet.part === undefined) throw new Error(`the cells of sheet "${sheet.name}" are missing`);
      const input = createReadStream(file);
      const zip = unzipper().Parse({ forceStream: true });
      input.on('error', (error) => (zip as unknown as Readable).destroy(error));
      input.pipe(zip);
      const archive = { bytes: 0 };
      const unread = new Set(this.cellParts);
      let folder: string | undefined;
      let waiting: string | undefined;
      try {
        for await (const entry of zip) {
          const declared = entry.vars?.uncompressedSize;
          // A declared size is a lower bound only when the entry has no data descriptor.
          if (declared !== undefined && !(entry.vars!.flags! & 0x08) && declared > limits.maxEntryBytes)
            throw workbookBounds(limits).entryTooLarge(entry.path);
          const isSheet = entry.path === sheet.part && waiting === undefined;
          const bytes = boundedBytes(entry, entry.path, limits, archive, isSheet || PARSED.has(entry.path));
          if (entry.path === SHARED_STRINGS) this.sharedStrings = await sharedStrings(bytes, limits);
          else if (entry.path === STYLES) await this._parseStyles(bytes);
          else if (isSheet && unread.size === 0) {
            yield* this.rowsOf(bytes);
            return;
          } else if (isSheet) {
            folder = await mkdtemp(join(tmpdir(), 'rxs-xlsx-'));
            waiting = join(folder, 'sheet.xml');
            await pipelineAsync(bytes, createWriteStream(waiting));
          }
          unread.delete(entry.path);
          // What a reader left (or an entry nobody reads) still counts: a bomb anywhere stops.
          for await (const chunk of bytes) void chunk;
          if (waiting !== undefined && unread.size === 0) break;
        }
        if (waiting === undefined)
          throw new Error(`the cells of sheet "${sheet.name}" (${sheet.part}) are missing`);
        yield* this.rowsOf(createReadStream(waiting));
      } finally {
        input.destroy();
        (zip as unknown as Readable).destroy();
        if (folder) await rm(folder, { recursive: true, force: true });
      }
    }

    private async *rowsOf(bytes: AsyncIterable<Buffer>): AsyncGenerator<ExcelJS.Row> {
      for (const { value } of this._parseWorksheet(bytes, '1'))
        yield* value as ExcelJS.stream.xlsx.WorksheetReader;
    }
  }
  const reader = new BoundedWorkbookReader(file, {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'cache',
    worksheets: 'emit',
  });
  await reader.readSheets();
  return reader;
}

/** An entry's bytes as they inflate, bounded (InflatedBytes); `xml` for a part parsed as XML (WorkbookXml). */
function boundedBytes(
  entry: Readable,
  path: string,
  limits: ImportLimits,
  archive: { bytes: number },
  xml: boolean,
): Transform {
  return inflatedBytes(
    entry,
    path,
    workbookBounds(limits),
    archive,
    xml ? [new WorkbookXml(path, limits)] : [],
  );
}

/**
 * The worksheets xl/workbook.xml lists, in its order, each with the zip entry its relationship
 * targets: relative to xl/ (`worksheets/sheet1.xml`, as Excel writes) or from the package root
 * (`/xl/worksheets/sheet1.xml`, as openpyxl writes). A target is a URI (`%20` for a space) and
 * part names are case-insensitive (OPC): the entry is looked up as the zip spells it.
 */
function worksheetsOf(reader: WorkbookReaderParts, entries: Iterable<string>): WorkbookSheet[] {
  const byPartName = new Map<string, string>();
  for (const path of entries) byPartName.set(path.toLowerCase(), path);
  const targets = new Map<string, string>();
  for (const { Id, Type, Target, TargetMode } of reader.workbookRels ?? [])
    if (Id && Target && TargetMode !== 'External' && WORKSHEET_RELATIONSHIP.test(Type ?? ''))
      targets.set(Id, Target);
  const sheets: WorkbookSheet[] = [];
  for (const { name, rId } of reader.model?.sheets ?? []) {
    const target = rId === undefined ? undefined : targets.get(rId);
    if (name === undefined || target === undefined) continue;
    const path = target.startsWith('/') ? posix.normalize(target.slice(1)) : posix.join('xl', target);
    sheets.push({
      name,
      part: byPartName.get(path.toLowerCase()) ?? byPartName.get(uriDecoded(path).toLowerCase()),
    });
  }
  return sheets;
}

function uriDecoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The shared string table: each `<si>`'s text, its runs joined (phonetic runs left out), as the
 * sheet's cells show it. At most `maxSharedStrings` strings of `maxSharedStringBytes` characters.
 */
async function sharedStrings(bytes: AsyncIterable<Buffer>, limits: ImportLimits): Promise<string[]> {
  const strings: string[] = [];
  const parser = new SaxesParser();
  let failure: Error | undefined;
  let total = 0;
  let current: string | undefined;
  let inText = false;
  let phonetic = 0;
  parser.on('error', (error) => {
    failure ??= error;
  });
  const local = (name: string) => name.slice(name.indexOf(':') + 1);
  parser.on('opentag', (tag) => {
    const name = local(tag.name);
    if (name === 'si') current = '';
    else if (name === 'rPh') phonetic++;
    else if (name === 't' && phonetic === 0) inText = true;
  });
  parser.on('text', (text) => {
    if (!inText || current === undefined) return;
    current += text;
    total += text.length;
    if (current.length > limits.maxCellBytes) failure ??= cellTooLarge(limits, 'a shared string');
    else if (total > limits.maxSharedStringBytes)
      failure ??= limitError(
        'maxSharedStringBytes',
        limits.maxSharedStringBytes,
        `The workbook's shared strings hold more than ${sizeText(limits.maxSharedStringBytes)} of text, the most a workbook may: split it into several files, or import it as CSV.`,
      );
  });
  parser.on('closetag', (tag) => {
    const name = local(tag.name);
    if (name === 't') inText = false;
    else if (name === 'rPh') phonetic--;
    else if (name === 'si' && current !== undefined) {
      if (strings.length >= limits.maxSharedStrings)
        failure ??= limitError(
          'maxSharedStrings',
          limits.maxSharedStrings,
          `The workbook holds more than ${limits.maxSharedStrings.toLocaleString('en')} different texts, the most a workbook may: split it into several files, or import it as CSV.`,
        );
      strings.push(current);
      current = undefined;
    }
  });
  const decoder = new TextDecoder('utf-8');
  const turn = eventLoopSlices();
  for await (const chunk of bytes) {
    parser.write(decoder.decode(chunk, { stream: true }));
    if (failure) break;
    await turn();
  }
  if (!failure) parser.close();
  if (failure instanceof ImportFileError) throw failure;
  if (failure)
    throw new Error(`its shared strings are not well-formed XML: ${failure.message.split('\n')[0]}`);
  return strings;
}
