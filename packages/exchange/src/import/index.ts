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
export {
  readSpecRelations,
  relationTypeOf,
  DEFAULT_RELATION_TYPE,
  type RelationImportClient,
  type RelationImportOptions,
  type RelationImportReport,
  type SpecRelation,
} from './reqif-relations.js';
export {
  type OutlineImportClient,
  type OutlineImportOptions,
  type OutlineImportReport,
} from './reqif-outline.js';
export { readSpecHierarchies, type SpecHierarchy, type SpecHierarchyEntry } from './reqif-hierarchy.js';
export {
  importReqifLinks,
  readReqifLinks,
  type LinkImportClient,
  type ReqifLink,
  type ReqifLinksReport,
} from './reqif-links.js';
export type { ReqifReadOptions } from './reqif-events.js';
