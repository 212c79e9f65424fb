import { DEFAULT_MAX_EXPORT_COLUMNS, sizeText } from '../export/limits.js';
import { ImportLimitError } from './errors.js';
import type { SourceRow } from './source-row.js';

export { sizeText };

const MiB = 1024 * 1024;

/**
 * What reading one file may cost, whatever the file says of itself: every bound is checked as the
 * bytes are produced (inflated, decoded, parsed), so a file past one stops at that point with
 * memory and time in proportion to the bound, not to the file's claims.
 */
export interface ImportLimits {
  /** Columns of a file (distinct names over all its rows), and cells of one row. */
  maxColumns: number;
  /** Characters of one cell (a JSON string, a ReqIF value, an XLSX cell or shared string). */
  maxCellBytes: number;
  /** Characters of one row's cells together (a ReqIF spec object's values), and of the XML elements open at one place. */
  maxRowBytes: number;
  /** XLSX, ReqIF archive: bytes one entry of the zip inflates to. */
  maxEntryBytes: number;
  /** XLSX, ReqIF archive: bytes all entries of the zip inflate to together. */
  maxArchiveBytes: number;
  /** XLSX: strings of the shared string table, which is held in memory while the sheet is read. */
  maxSharedStrings: number;
  /** XLSX: characters of the shared string table together. */
  maxSharedStringBytes: number;
  /** ReqIF: elements open inside one another; the XML parser holds each open element. */
  maxDepth: number;
  /**
   * ReqIF: spec object types, attribute definitions and enumeration values a file declares, which
   * are held in memory while its spec objects are read.
   */
  maxDefinitions: number;
  /** ReqIF: characters of those declarations' identifiers and names together. */
  maxDefinitionBytes: number;
  /**
   * ReqIF: entries of one SPECIFICATION's hierarchy, held until it is read whole (a parent's object
   * may follow its children); their identifiers count against maxDefinitionBytes.
   */
  maxHierarchyEntries: number;
}

export const DEFAULT_IMPORT_LIMITS: Readonly<ImportLimits> = {
  // The export refuses more columns than this, and no topic's form has more fields.
  maxColumns: DEFAULT_MAX_EXPORT_COLUMNS,
  // A record's whole body is at most 5 MiB (RXS_BODY_LIMIT's default): no value of a record the
  // service holds is longer, so an export of any record imports again, and a longer cell never could.
  maxCellBytes: 5 * MiB,
  // A row is one record: three times its body leaves room for columns left out and for text that
  // becomes a shorter value (a number), while a row of thousands of large cells stops early.
  maxRowBytes: 16 * MiB,
  // A worksheet of a million rows of twenty cells is about 400 MB of XML; a zip bomb inflates to
  // gigabytes from a few hundred kilobytes. Counted as inflated, not as the zip declares.
  maxEntryBytes: 1024 * MiB,
  maxArchiveBytes: 1024 * MiB,
  // The table is held in memory: a million strings of up to 64 MiB together is at most a few
  // hundred megabytes at the bound, more than a workbook of the web app's 50 MB upload holds.
  maxSharedStrings: 1_000_000,
  maxSharedStringBytes: 64 * MiB,
  // A ReqIF document nests its specification's hierarchy two elements a level, and an XHTML value a
  // few dozen: a thousand is hundreds of levels more than a tool writes, while the open elements a
  // parser holds stay a few megabytes.
  maxDepth: 1000,
  // DOORS, Polarion and Capella exports declare hundreds to a few thousand; each costs a few hundred
  // bytes of memory, so the bound is some tens of megabytes.
  maxDefinitions: 50_000,
  maxDefinitionBytes: 64 * MiB,
  // The largest modules of DOORS hold some tens of thousands of objects; an entry costs about a
  // hundred bytes besides its identifier.
  maxHierarchyEntries: 1_000_000,
};

const SIZE_LIMITS: ReadonlySet<keyof ImportLimits> = new Set([
  'maxEntryBytes',
  'maxArchiveBytes',
  'maxSharedStrings',
  'maxSharedStringBytes',
  'maxDefinitions',
  'maxDefinitionBytes',
  'maxHierarchyEntries',
]);

/** A file past one of the import's limits (`kind`: for what it holds, or for a row's shape): nothing of it is imported. */
export function limitError(limit: keyof ImportLimits, value: number, message: string): ImportLimitError {
  return new ImportLimitError(message, { limit, value, kind: SIZE_LIMITS.has(limit) ? 'size' : 'shape' });
}

/** The limits of a reader: the defaults, with those given instead. */
export function importLimits(given: Partial<ImportLimits> = {}): ImportLimits {
  const limits = { ...DEFAULT_IMPORT_LIMITS };
  for (const [key, value] of Object.entries(given) as [keyof ImportLimits, number | undefined][])
    if (value !== undefined) limits[key] = value;
  return limits;
}

/** The length of each cell counted into its row: a row past `maxRowBytes` is refused. */
export class RowBytes {
  private total = 0;

  constructor(
    private readonly limits: ImportLimits,
    private readonly where: string,
  ) {}

  /** Counts a cell's text; throws past the cell's or the row's limit. */
  add(text: string, column: string | number): void {
    this.addLength(text.length, column);
  }

  /** Counts a cell of `length` characters, as `add` counts its text. */
  addLength(length: number, column: string | number): void {
    if (length > this.limits.maxCellBytes)
      throw cellTooLarge(this.limits, `${this.where}, ${columnName(column)}`);
    this.total += length;
    if (this.total > this.limits.maxRowBytes)
      throw limitError(
        'maxRowBytes',
        this.limits.maxRowBytes,
        `${this.where.charAt(0).toUpperCase()}${this.where.slice(1)} holds more than ${sizeText(this.limits.maxRowBytes)} of text, the most one row may hold: a row is one record, and a record cannot be that large. Split the values over several records.`,
      );
  }
}

const columnName = (column: string | number) =>
  typeof column === 'number' ? `column ${column}` : `column "${column.slice(0, 80)}"`;

/** A cell past `maxCellBytes`, at `where`. */
export function cellTooLarge(limits: ImportLimits, where: string): ImportLimitError {
  return limitError(
    'maxCellBytes',
    limits.maxCellBytes,
    `A cell (${where}) holds more than ${sizeText(limits.maxCellBytes)} of text, the most one cell may hold: no field of a record holds that much. Shorten the value, or keep the text in a file of its own.`,
  );
}

/** A row or file with more columns than `maxColumns`: `what` says where and how many. */
export function tooManyColumns(limits: ImportLimits, what: string): ImportLimitError {
  return limitError(
    'maxColumns',
    limits.maxColumns,
    `${what}: an import reads at most ${limits.maxColumns.toLocaleString('en')} columns (as many as an export writes), and no topic has that many fields. Delete the columns that name no field, or split the file by columns.`,
  );
}

/**
 * The runs of an XML text between two `<`, as its chunks pass. Text and attribute values escape
 * `<`, so every text and every tag lies within one run: a run longer than a cell may be is found
 * before the XML parser, which gathers a text whole before handing it on, has gathered it.
 */
export class XmlRuns {
  private run = 0;

  constructor(private readonly max: number) {}

  /** Whether this chunk makes a run longer than the most a cell may be. */
  exceeds(chunk: string | Buffer): boolean {
    const next = (from: number) =>
      typeof chunk === 'string' ? chunk.indexOf('<', from) : chunk.indexOf(0x3c, from);
    let at = next(0);
    if (at < 0) {
      this.run += chunk.length;
      return this.run > this.max;
    }
    if (this.run + at > this.max) return true;
    if (chunk.length > this.max) {
      // Only a chunk longer than the bound can hold a whole run past it.
      for (let after = next(at + 1); after >= 0; at = after, after = next(at + 1))
        if (after - at - 1 > this.max) return true;
    } else at = typeof chunk === 'string' ? chunk.lastIndexOf('<') : chunk.lastIndexOf(0x3c);
    this.run = chunk.length - 1 - at;
    return this.run > this.max;
  }
}

/** The sections of XML whose text may hold `<`, each of which an XML parser gathers whole. */
const XML_SECTIONS = [
  { opener: '<!--', closer: '-->', name: 'comment' },
  { opener: '<![CDATA[', closer: ']]>', name: 'CDATA section' },
  { opener: '<?', closer: '?>', name: 'processing instruction' },
] as const;
type XmlSection = (typeof XML_SECTIONS)[number];
const DOCTYPE_OPENER = '<!DOCTYPE';
/** Characters from a `<` that tell what it opens: the longest opener's. */
const OPENER_CHARS = DOCTYPE_OPENER.length;

/**
 * The comments, CDATA sections and processing instructions of an XML text, and its DOCTYPE, as its
 * chunks pass. Their text may hold `<`, so XmlRuns does not bound them, and the XML parser gathers
 * each whole (a DOCTYPE with the DTD it declares): one longer than `max`, or a DOCTYPE, is found
 * before the parser has gathered it.
 */
export class XmlSections {
  private open: XmlSection | undefined;
  /** Characters of the open section so far. */
  private length = 0;
  /** The end of the last chunk that may begin an opener or a closer. */
  private carry = '';

  constructor(private readonly max: number) {}

  /** What this chunk shows: a DOCTYPE, a section longer than `max` (by its name), or neither. */
  check(chunk: string): 'DOCTYPE' | XmlSection['name'] | undefined {
    const text = this.carry + chunk;
    this.carry = '';
    let at = 0;
    while (at < text.length) {
      if (this.open) {
        const end = text.indexOf(this.open.closer, at);
        const kept = end < 0 ? Math.min(this.open.closer.length - 1, text.length - at) : 0;
        this.length += (end < 0 ? text.length - kept : end) - at;
        if (this.length > this.max) return this.open.name;
        if (end < 0) {
          this.carry = text.slice(text.length - kept);
          return undefined;
        }
        at = end + this.open.closer.length;
        this.open = undefined;
        this.length = 0;
        continue;
      }
      const lt = text.indexOf('<', at);
      if (lt < 0) return undefined;
      if (text.length - lt < OPENER_CHARS) {
        this.carry = text.slice(lt);
        return undefined;
      }
      const next = text.charCodeAt(lt + 1);
      at = lt + 1;
      if (next !== 0x21 && next !== 0x3f) continue; // `<!`, `<?`
      if (text.startsWith(DOCTYPE_OPENER, lt)) return 'DOCTYPE';
      const section = XML_SECTIONS.find(({ opener }) => text.startsWith(opener, lt));
      if (!section) continue;
      this.open = section;
      at = lt + section.opener.length;
    }
    return undefined;
  }
}

/**
 * The distinct column names a file's rows have used (JSON keys and ReqIF attributes vary from row
 * to row): at most `maxColumns` of them, of `maxRowBytes` characters together, as a header would be.
 */
export class DistinctColumns {
  private readonly names = new Set<string>();
  private length = 0;

  constructor(
    private readonly limits: ImportLimits,
    private readonly file: string,
  ) {}

  add(row: SourceRow): void {
    for (const name of row.values.keys()) {
      if (this.names.has(name)) continue;
      this.length += name.length;
      if (this.names.size >= this.limits.maxColumns || this.length > this.limits.maxRowBytes)
        throw tooManyColumns(
          this.limits,
          `${this.file} names more than ${this.names.size.toLocaleString('en')} different columns (${sizeText(this.length)} of names) over its rows`,
        );
      this.names.add(name);
    }
  }
}
