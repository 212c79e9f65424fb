import { eventLoopSlices } from '../event-loop.js';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline as pipelineAsync } from 'node:stream/promises';
import type ExcelJS from 'exceljs';
import { SaxesParser } from 'saxes';
import { cellTooLarge, limitError, sizeText, XmlRuns, type ImportLimits } from './limits.js';
import { ImportFileError } from './errors.js';

/** An entry of unzipper's streaming parser, which exceljs reads workbooks with. */
interface ZipEntry extends Readable {
  path: string;
  vars?: { uncompressedSize?: number; flags?: number };
}

type SheetEvent = { eventType: string; value: unknown };

/** The parts of exceljs's streaming WorkbookReader that the bounded reader drives. */
interface WorkbookReaderParts {
  sharedStrings?: unknown[];
  workbookRels?: unknown;
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(iterator: AsyncIterable<Buffer>, sheetNo: string): Iterable<SheetEvent>;
}

type WorkbookReaderClass = new (
  input: string,
  options: object,
) => WorkbookReaderParts & AsyncIterable<ExcelJS.stream.xlsx.WorksheetReader>;

/** unzipper, as exceljs resolves it (it is exceljs's dependency, not ours). */
function zipParser(): {
  Parse(options: { forceStream: true }): NodeJS.ReadWriteStream & AsyncIterable<ZipEntry>;
} {
  const require = createRequire(import.meta.url);
  return createRequire(require.resolve('exceljs'))('unzipper');
}

const SHEET = /^xl\/worksheets\/sheet(\d+)\.xml$/;
/** The parts the reader parses as XML; the others (custom XML, drawings, media) are only counted. */
const PARSED = new Set([
  'xl/_rels/workbook.xml.rels',
  'xl/workbook.xml',
  'xl/sharedStrings.xml',
  'xl/styles.xml',
]);

/**
 * Bytes of one zip entry as they inflate, counted against the entry's and the whole archive's
 * limits; an XML part's runs between two `<` bounded by the cell limit (XmlRuns). `<!` (a comment,
 * CDATA, a DOCTYPE) and `<?` past the XML declaration would let a text hold `<`: spreadsheets
 * write neither, and they are refused.
 */
class BoundedEntry extends Transform {
  private bytes = 0;
  private readonly runs: XmlRuns;
  private lastWasLt = false;

  constructor(
    private readonly path: string,
    private readonly limits: ImportLimits,
    private readonly archive: { bytes: number },
    private readonly xml: boolean,
  ) {
    super();
    this.runs = new XmlRuns(limits.maxCellBytes);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const start = this.bytes;
    this.bytes += chunk.length;
    this.archive.bytes += chunk.length;
    if (this.bytes > this.limits.maxEntryBytes) return done(entryTooLarge(this.path, this.limits));
    if (this.archive.bytes > this.limits.maxArchiveBytes) return done(archiveTooLarge(this.limits));
    if (this.xml) {
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
    }
    done(null, chunk);
  }
}

const entryTooLarge = (path: string, limits: ImportLimits) =>
  limitError(
    'maxEntryBytes',
    limits.maxEntryBytes,
    `The workbook's ${path} unpacks to more than ${sizeText(limits.maxEntryBytes)}, the most one part of a workbook may: split the sheet into several files, or import it as CSV.`,
  );

const archiveTooLarge = (limits: ImportLimits) =>
  limitError(
    'maxArchiveBytes',
    limits.maxArchiveBytes,
    `The workbook unpacks to more than ${sizeText(limits.maxArchiveBytes)}, the most a workbook may: split it into several files, or import it as CSV.`,
  );

/**
 * exceljs's streaming workbook reader with every byte it reads bounded: the zip's entries are
 * counted as they inflate (a zip bomb stops at the limit, whatever sizes it declares), XML runs
 * are bounded by the cell limit, and the shared string table (held in memory while the sheets are
 * read) by its count and characters. Sheets that come before the table in the zip wait in a
 * temporary folder, as exceljs does.
 */
export function boundedWorkbook(
  excel: typeof ExcelJS,
  file: string,
  limits: ImportLimits,
): AsyncIterable<ExcelJS.stream.xlsx.WorksheetReader> {
  const Base = excel.stream.xlsx.WorkbookReader as unknown as WorkbookReaderClass;
  class BoundedWorkbookReader extends Base {
    async *parse(): AsyncGenerator<SheetEvent> {
      const input = createReadStream(file);
      const zip = zipParser().Parse({ forceStream: true });
      input.on('error', (error) => (zip as unknown as Readable).destroy(error));
      input.pipe(zip);
      const archive = { bytes: 0 };
      const waiting: { sheetNo: string; path: string }[] = [];
      let folder: string | undefined;
      try {
        for await (const entry of zip) {
          const declared = entry.vars?.uncompressedSize;
          // A declared size is a lower bound only when the entry has no data descriptor.
          if (declared !== undefined && !(entry.vars!.flags! & 0x08) && declared > limits.maxEntryBytes)
            throw entryTooLarge(entry.path, limits);
          const bytes = pipeline(
            entry,
            new BoundedEntry(entry.path, limits, archive, PARSED.has(entry.path) || SHEET.test(entry.path)),
            () => {},
          ) as Transform;
          const sheet = SHEET.exec(entry.path);
          if (entry.path === 'xl/_rels/workbook.xml.rels') await this._parseRels(bytes);
          else if (entry.path === 'xl/workbook.xml') await this._parseWorkbook(bytes);
          else if (entry.path === 'xl/sharedStrings.xml')
            this.sharedStrings = await sharedStrings(bytes, limits);
          else if (entry.path === 'xl/styles.xml') await this._parseStyles(bytes);
          else if (sheet && this.sharedStrings && this.workbookRels)
            yield* this._parseWorksheet(bytes, sheet[1]!);
          else if (sheet) {
            folder ??= await mkdtemp(join(tmpdir(), 'rxs-xlsx-'));
            const path = join(folder, `sheet${sheet[1]}.xml`);
            await pipelineAsync(bytes, createWriteStream(path));
            waiting.push({ sheetNo: sheet[1]!, path });
          }
          // What a reader left (or an entry nobody reads) still counts: a bomb anywhere stops.
          for await (const chunk of bytes) void chunk;
        }
        for (const { sheetNo, path } of waiting) yield* this._parseWorksheet(createReadStream(path), sheetNo);
      } finally {
        input.destroy();
        (zip as unknown as Readable).destroy();
        if (folder) await rm(folder, { recursive: true, force: true });
      }
    }
  }
  return new BoundedWorkbookReader(file, {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'cache',
    worksheets: 'emit',
  });
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
