import { extname } from 'node:path';
import { CsvSource } from './csv-source.js';
import { JsonLinesSource, JsonSource } from './json-source.js';
import type { ImportLimits } from './limits.js';
import { ImportFileError } from './errors.js';
import type { FactColumn, ImportFormat, RowSource, SourceRow } from './source-row.js';
import type { ImportWording } from './wording.js';

export const IMPORT_FORMATS: readonly ImportFormat[] = ['csv', 'xlsx', 'json', 'jsonl', 'reqif'];

export interface OpenSourceOptions {
  /** The format; default: from the file's extension. */
  format?: ImportFormat;
  /** XLSX: the sheet to import. */
  sheet?: string;
  /** ReqIF: the SPEC-OBJECT-TYPE to import, by LONG-NAME. */
  specType?: string;
  /** ReqIF archive (.reqifz): the .reqif file to import, by its path in the archive; default: its only one. */
  entry?: string;
  /** How advice names the options (default: `rxs import`'s). */
  wording?: ImportWording;
  /** What reading the file may cost: the defaults (DEFAULT_IMPORT_LIMITS) but for those given. */
  limits?: Partial<ImportLimits>;
}

const BY_EXTENSION: Record<string, ImportFormat> = {
  '.csv': 'csv',
  '.tsv': 'csv',
  '.txt': 'csv',
  '.xlsx': 'xlsx',
  '.json': 'json',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.reqif': 'reqif',
  // A ReqIF archive: the ReqIF reader reads the .reqif file it holds (it reads any zip as one).
  '.reqifz': 'reqif',
  '.xml': 'reqif',
};

/** The format a file's extension names (any case), if any. */
export function importFormatOf(file: string): ImportFormat | undefined {
  return BY_EXTENSION[extname(file).toLowerCase()];
}

/** The reader of a file, by `format` or by its extension. */
export function openRowSource(file: string, options: OpenSourceOptions = {}): RowSource {
  const format = options.format ?? importFormatOf(file);
  if (format === undefined)
    throw new ImportFileError(
      `Cannot tell the format of ${file} from its extension: say it with --format (${IMPORT_FORMATS.join(', ')}).`,
    );
  const { limits } = options;
  switch (format) {
    case 'csv':
      return new CsvSource(file, limits);
    case 'xlsx':
      return new ReaderLoadedLater(
        format,
        async () =>
          new (await import('./xlsx-source.js')).XlsxSource(file, {
            sheet: options.sheet,
            wording: options.wording,
            limits,
          }),
      );
    case 'json':
      return new JsonSource(file, limits);
    case 'jsonl':
      return new JsonLinesSource(file, limits);
    case 'reqif':
      return new ReaderLoadedLater(
        format,
        async () =>
          new (await import('./reqif-source.js')).ReqifSource(file, {
            specType: options.specType,
            entry: options.entry,
            wording: options.wording,
            limits,
          }),
      );
  }
}

type Topic = Parameters<NonNullable<RowSource['forTopic']>>[0];

/**
 * A reader whose module loads when the file is first read (prepare, or rows), not when it is
 * opened: the XLSX and ReqIF readers bring XML parsers and zip readers that other formats never
 * need. Its fact columns are known once it is prepared.
 */
class ReaderLoadedLater implements RowSource {
  private reader: RowSource | undefined;
  private topic: Topic | undefined;

  constructor(
    readonly format: ImportFormat,
    private readonly load: () => Promise<RowSource>,
  ) {}

  async prepare(): Promise<void> {
    if (this.reader) return;
    const reader = await this.load();
    await reader.prepare?.();
    if (this.topic) reader.forTopic?.(this.topic);
    this.reader = reader;
  }

  get notes(): string[] {
    return this.reader?.notes ?? [];
  }

  get factColumns(): ReadonlyMap<string, FactColumn> | undefined {
    if (!this.reader) throw new Error(`The ${this.format} reader is not loaded: await prepare() first.`);
    return this.reader.factColumns;
  }

  forTopic(topic: Topic): void {
    this.topic = topic;
    this.reader?.forTopic?.(topic);
  }

  async *rows(): AsyncGenerator<SourceRow> {
    await this.prepare();
    yield* this.reader!.rows();
  }
}
