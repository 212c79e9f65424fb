export * from './export-entry.js';
export * from './import/index.js';
export * from './trace-report/coverage.js';
export * from './trace-report/coverage-types.js';
export * from './trace-report/html.js';
export * from './trace-report/xlsx.js';
// The document writer only: the document model's names (BaselineStatus, ...) are the contract's too.
export {
  DocumentTooLargeError,
  DocumentWriter,
  RecordNames,
  type DocumentLimits,
  type DocumentContext,
  type DocumentFormat,
  type RecordName,
} from './document/from-export.js';
export type {
  ChangeSummary as DocumentChangeSummary,
  FieldChange as DocumentFieldChange,
  RecordChange as DocumentRecordChange,
} from './document/model.js';
