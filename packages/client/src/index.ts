export { createClient, DEFAULT_TIMEOUT_MS, DEFAULT_TRACE_CONCURRENCY } from './client.js';
export type { ClientOptions, RxsClient } from './client.js';
export type { TechdocClient, TopicListQuery } from './techdoc.js';
export { BaselineNotFoundError } from './techdoc.js';
export type {
  RecordsClient,
  ListRecordsOptions,
  AsOfOption,
  IdempotencyOption,
  ReasonOption,
} from './records.js';
export type { TracerClient, TraceListOptions, TraceListing, TraceModelHistoryOptions } from './tracer.js';
export type { OutlineClient } from './outline.js';
export type { ConditionalClient, TagCheck } from './conditional.js';
export type { RequestOptions } from './transport.js';
export type { FetchFunction } from './http.js';
export type { RetryEvent, RetryPolicy } from './retry.js';
export { DEFAULT_RETRY_POLICY, RETRYABLE_STATUSES } from './retry.js';
export type { JsonArrayMode } from './json-array-stream.js';
export { recordText } from './record-lines.js';
export {
  RxsApiError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  ValidationError,
  ConflictError,
  RecordDeletedSinceError,
  PayloadTooLargeError,
  RateLimitedError,
  ServerError,
  UnexpectedStatusError,
  NetworkError,
  TimeoutError,
  ResponseFormatError,
  RecordsStreamInterrupted,
  formatValidationItems,
} from './errors.js';
export type { ServiceName, RequestSummary, RxsApiErrorCode } from './errors.js';
// Shared with the importer's JSON reader: `__proto__` stays a key, as JSON.parse keeps it.
export { keepingProtoKeys } from './own-keys.js';
