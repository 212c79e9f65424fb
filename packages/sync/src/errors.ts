/**
 * The `code` of each error of rxs sync, one per class: stable across versions and wordings, so
 * that callers match on it (or on the class), never on the message or the name.
 */
export type SyncErrorCode =
  | 'RXS_ERR_SYNC_LOCKED'
  | 'RXS_ERR_SYNC_STATE'
  | 'RXS_ERR_SYNC_STREAM'
  | 'RXS_ERR_SYNC_ORDER'
  | 'RXS_ERR_SYNC_PREVIOUS_RECORD_MISSING'
  | 'RXS_ERR_SYNC_LATE_STREAM'
  | 'RXS_ERR_ROW_INDEX'
  | 'RXS_ERR_SPLICE_REFUSED';

/** A sync cannot go on as asked: its folder is locked or damaged, or what it read breaks its rules. */
export abstract class SyncError extends Error {
  abstract readonly code: SyncErrorCode;
}
