export {
  createSyncSession,
  SyncOrderError,
  SyncSession,
  SyncStreamError,
  type SyncSessionOptions,
} from './session.js';
export {
  readSyncState,
  SyncStateError,
  STATE_FILE,
  SYNC_STATE_FORMAT,
  SYNC_STATE_VERSION,
  type StoredRecord,
  type StoredTopic,
  type StoredTrace,
  type SyncState,
} from './state.js';
export { SyncError, type SyncErrorCode } from './errors.js';
export { acquireSyncLock, LOCK_FILE, processAlive, SyncLockedError, type SyncLock } from './lock.js';
export {
  CHANGE_REPORT_FORMAT,
  CHANGE_REPORT_VERSION,
  DEFAULT_DETAIL_LIMIT,
  type Change,
  type ChangeReport,
  type ChangeSummary,
  type FieldChange,
  type FieldModification,
  type FieldRef,
  type RecordChange,
  type RecordCounts,
  type RecordRef,
  type SchemaChanges,
  type TopicChanges,
  type TopicStatus,
  type TraceChanges,
} from './report.js';
export { renderReportText, type RenderOptions } from './render.js';
export { REPORTS_DIR, reportJson, writeReport } from './report-file.js';
export { removeAbandonedStateTemps } from './generation.js';
export {
  runWatchLoop,
  watchPause,
  type WatchLoopOptions,
  type WatchLoopResult,
  type WatchRun,
} from './watch.js';
export { diffRecord } from './record-diff.js';
export { diffSchema, type SchemaSide } from './schema-diff.js';
export { jsonHash } from './json-values.js';
export {
  outputFacts,
  PROBE_FILE,
  saveProbe,
  takeProbeTags,
  unchangedSince,
  usableProbe,
  type ProbeTags,
  type SyncProbe,
} from './probe.js';
export {
  dropFeedCache,
  FEED_FILE,
  FeedCacheWriter,
  planFromFeed,
  takeFeedCursors,
  type FeedPlan,
} from './feed-cache.js';
export { edgeOfTrace, takeTraceCursor, type TracePlan } from './feed-traces.js';
export { renderingOf, type Rendering } from './rendering.js';
export {
  spliceable,
  spliceExport,
  SpliceRefusedError,
  type SpliceFormat,
  type SpliceInput,
  type SpliceResult,
} from './splice.js';
