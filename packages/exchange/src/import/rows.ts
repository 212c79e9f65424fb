/**
 * The row import alone (`@rxs/exchange/import`): the readers of a file's rows and the importer that
 * checks and writes them, without the ReqIF links and outline (whose relation types load the
 * contract's schemas) or the rest of the exchange (exports, trace reports, documents).
 */
export {
  importRecords,
  type ImportClient,
  type ImportOptions,
  type ImportProgress,
  type ImportReport,
  type RowPreview,
  type RowProblem,
} from './importer.js';
export { openRowSource, importFormatOf, IMPORT_FORMATS, type OpenSourceOptions } from './open-source.js';
export type { ImportFormat, RowSource, SourceRow, Cell } from './source-row.js';
export {
  ImportChoiceError,
  ImportFileError,
  ImportLimitError,
  type ImportChoice,
  type ImportFileErrorCode,
  type ImportLimitExceeded,
} from './errors.js';
export type { ColumnMapping } from './columns.js';
export { CLI_WORDING, type ImportWording } from './wording.js';
