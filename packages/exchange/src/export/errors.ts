/**
 * The `code` of each error of the export's data family, one per class: stable across versions and
 * wordings, so that callers match on it (or on the class), never on the message or the name.
 */
export type ExportDataErrorCode =
  | 'RXS_ERR_TOO_MANY_COLUMNS'
  | 'RXS_ERR_SHEET_TOO_WIDE'
  | 'RXS_ERR_DUPLICATE_IDENTIFIER'
  | 'RXS_ERR_NEED_ID_COLLISION'
  | 'RXS_ERR_TOPIC_REAPPROVED'
  | 'RXS_ERR_DOCUMENT_TOO_LARGE';

/**
 * The topics' data cannot be exported as asked (too many columns, two records with one readable
 * id, a re-approved revision): nothing usable was written. Not a fault of the program or the
 * service: the message says what to change in the data or the request, so it is shown as it is.
 */
export abstract class ExportDataError extends Error {
  abstract readonly code: ExportDataErrorCode;
}
