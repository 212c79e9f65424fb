import type { ValidationErrorItem } from '@rxs/contract';

/** The three services of RXS; errors say which one failed, since each has its own address. */
export type ServiceName = 'techdoc' | 'records' | 'tracer';

/** Which request an error belongs to. `url` never holds credentials. */
export interface RequestSummary {
  service: ServiceName;
  method: string;
  url: string;
}

/** What the server answered, as far as the error needs it. */
export interface ErrorResponse {
  status: number;
  /** The body's `detail` (a sentence, or 422's problem items), else a short excerpt of the body. */
  detail?: string | ValidationErrorItem[];
  /** From `Retry-After`, in milliseconds. */
  retryAfterMs?: number;
}

/**
 * The `code` of each error of the client, one per class: stable across versions and wordings, so
 * that callers match on it (or on the class), never on the message or the name.
 */
export type RxsApiErrorCode =
  | 'RXS_ERR_API'
  | 'RXS_ERR_UNAUTHORIZED'
  | 'RXS_ERR_FORBIDDEN'
  | 'RXS_ERR_NOT_FOUND'
  | 'RXS_ERR_CONFLICT'
  | 'RXS_ERR_RECORD_DELETED_SINCE'
  | 'RXS_ERR_PAYLOAD_TOO_LARGE'
  | 'RXS_ERR_VALIDATION'
  | 'RXS_ERR_RATE_LIMITED'
  | 'RXS_ERR_SERVER'
  | 'RXS_ERR_UNEXPECTED_STATUS'
  | 'RXS_ERR_NETWORK'
  | 'RXS_ERR_TIMEOUT'
  | 'RXS_ERR_RESPONSE_FORMAT'
  | 'RXS_ERR_RECORDS_STREAM_INTERRUPTED';

/**
 * Every error of the client. Says what happened and what to do, and which request it was
 * (service, method, URL without credentials, status when there was an answer).
 */
export class RxsApiError extends Error {
  override name = 'RxsApiError';
  /** What kind of failure this is; each subclass has its own. */
  readonly code: RxsApiErrorCode = 'RXS_ERR_API';
  readonly service: ServiceName;
  readonly method: string;
  readonly url: string;
  /** HTTP status, or undefined when no answer arrived (network errors, timeouts). */
  readonly status: number | undefined;
  /** The server's `detail`: a sentence, or for 422 the list of problems. */
  readonly detail: string | ValidationErrorItem[] | undefined;
  /** How long the server asked to wait before retrying (`Retry-After`), in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    request: RequestSummary,
    response?: ErrorResponse,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.service = request.service;
    this.method = request.method;
    this.url = request.url;
    this.status = response?.status;
    this.detail = response?.detail;
    this.retryAfterMs = response?.retryAfterMs;
  }
}

/** "(records service: GET https://... → 404)": the request line that ends every message. */
export function describeRequest(request: RequestSummary, status?: number): string {
  return `(${request.service} service: ${request.method} ${request.url}${status === undefined ? '' : ` → ${status}`})`;
}

function detailText(detail: ErrorResponse['detail']): string | undefined {
  if (detail === undefined) return undefined;
  if (typeof detail === 'string') return detail.trim() || undefined;
  return formatValidationItems(detail).join('; ');
}

function compose(advice: string, request: RequestSummary, response: ErrorResponse): string {
  const detail = detailText(response.detail);
  return `${advice}${detail ? ` Server: ${detail}` : ''} ${describeRequest(request, response.status)}`;
}

/** One readable line per problem: `body.data.priority: Field required (missing)`. */
export function formatValidationItems(items: readonly ValidationErrorItem[]): string[] {
  return items.map((item) => {
    const loc = Array.isArray(item?.loc) ? item.loc.join('.') : '';
    const msg = typeof item?.msg === 'string' ? item.msg : JSON.stringify(item);
    const type = typeof item?.type === 'string' && item.type ? ` (${item.type})` : '';
    return `${loc ? `${loc}: ` : ''}${msg}${type}`;
  });
}

/** A 422's problems: its `detail` items, or its sentence as one item. */
function validationItems(detail: ErrorResponse['detail']): ValidationErrorItem[] {
  return Array.isArray(detail)
    ? detail
    : [{ loc: [], msg: detail ?? 'The request is invalid.', type: 'invalid' }];
}

/**
 * An error status the service answered. Its message is what ERROR_STATUSES says for its class:
 * what happened and what to do, then the server's detail and the request line.
 */
export abstract class StatusError extends RxsApiError {
  constructor(request: RequestSummary, response: ErrorResponse) {
    super(statusEntryOf(new.target).message(request, response), request, response);
  }
}

/** 401: the key is missing, expired, revoked or wrong. */
export class UnauthorizedError extends StatusError {
  override name = 'UnauthorizedError';
  override readonly code = 'RXS_ERR_UNAUTHORIZED';
}

/** 403: the key is valid, but its user's role lacks the permission. */
export class ForbiddenError extends StatusError {
  override name = 'ForbiddenError';
  override readonly code = 'RXS_ERR_FORBIDDEN';
}

/** 404: no such object in the caller's tenant, or no such path. */
export class NotFoundError extends StatusError {
  override name = 'NotFoundError';
  override readonly code = 'RXS_ERR_NOT_FOUND';
}

/** 409: the change conflicts with the object's current state (read-only, approved, changed meanwhile). */
export class ConflictError extends StatusError {
  override name = 'ConflictError';
  override readonly code = 'RXS_ERR_CONFLICT';
}

/** 413: the request body exceeds the server's limit. */
export class PayloadTooLargeError extends StatusError {
  override name = 'PayloadTooLargeError';
  override readonly code = 'RXS_ERR_PAYLOAD_TOO_LARGE';
}

/** 422: the request was understood but is invalid; `items` lists every problem. */
export class ValidationError extends StatusError {
  override name = 'ValidationError';
  override readonly code = 'RXS_ERR_VALIDATION';
  readonly items: ValidationErrorItem[] = validationItems(this.detail);
}

/** 429: too many requests; `retryAfterMs` says how long the server asked to wait. */
export class RateLimitedError extends StatusError {
  override name = 'RateLimitedError';
  override readonly code = 'RXS_ERR_RATE_LIMITED';
}

/** 5xx: a failure on the server's side. */
export class ServerError extends StatusError {
  override name = 'ServerError';
  override readonly code = 'RXS_ERR_SERVER';
}

/** Any other unexpected status (400, 405, 415, ...). */
export class UnexpectedStatusError extends StatusError {
  override name = 'UnexpectedStatusError';
  override readonly code = 'RXS_ERR_UNEXPECTED_STATUS';
}

interface StatusEntry {
  /** The statuses answered with this error: one, every 5xx, or any status no other entry has. */
  status: number | '5xx' | 'other';
  type: new (request: RequestSummary, response: ErrorResponse) => StatusError;
  message(request: RequestSummary, response: ErrorResponse): string;
}

/** The message of an error status: `advice`, then the server's detail and the request line. */
const advised =
  (advice: string | ((request: RequestSummary, response: ErrorResponse) => string)): StatusEntry['message'] =>
  (request, response) =>
    compose(typeof advice === 'string' ? advice : advice(request, response), request, response);

/** Each error status the client tells apart: its class, and what its message says to do. */
const ERROR_STATUSES: readonly StatusEntry[] = [
  {
    status: 401,
    type: UnauthorizedError,
    message: advised(
      'The API key was refused (missing, invalid, expired or revoked). Check the X-API-Key header; in Settings → API keys, regenerate an expired key, or create a new one for a revoked key.',
    ),
  },
  {
    status: 403,
    type: ForbiddenError,
    message: advised(
      "The API key is valid, but its user may not do this. Check the user's role and permissions (an administrator can change the role).",
    ),
  },
  {
    status: 404,
    type: NotFoundError,
    message: advised(
      'Not found. For knowledge topics, a dashboard history id may have been used where a revision id is expected, or the reverse; also check the id belongs to your tenant and the base URL is right.',
    ),
  },
  {
    status: 409,
    type: ConflictError,
    message: advised(
      'The change conflicts with the current state of the object (it may be read-only, approved, or changed by someone else meanwhile). Fetch it again and apply the change to the current version.',
    ),
  },
  {
    status: 413,
    type: PayloadTooLargeError,
    message: advised(
      'The request body is larger than the server accepts. Send less per request (smaller data, fewer nodes per batch).',
    ),
  },
  {
    status: 422,
    type: ValidationError,
    message: (request, response) => {
      const lines = formatValidationItems(validationItems(response.detail)).map((line) => `\n  - ${line}`);
      return `The request was rejected as invalid (422); fix the following and send it again:${lines.join('')}\n${describeRequest(request, response.status)}`;
    },
  },
  {
    status: 429,
    type: RateLimitedError,
    message: advised((_request, response) => {
      const wait =
        response.retryAfterMs === undefined
          ? ''
          : ` The server asked to wait ${Math.ceil(response.retryAfterMs / 1000)} s.`;
      return `The server is rate limiting this client.${wait} Send fewer requests at once (lower the concurrency) and try again later.`;
    }),
  },
  {
    status: '5xx',
    type: ServerError,
    message: advised(
      (request, response) =>
        `The ${request.service} service failed to handle the request (${response.status}). Try again later; if it persists, the operator can find the cause in the server's logs.`,
    ),
  },
  {
    status: 'other',
    type: UnexpectedStatusError,
    message: advised((_request, response) => `The server refused the request (${response.status}).`),
  },
];

function statusEntryOf(type: abstract new (...args: never[]) => StatusError): StatusEntry {
  const entry = ERROR_STATUSES.find((candidate) => candidate.type === type);
  if (!entry) throw new Error(`${type.name} is missing from ERROR_STATUSES.`);
  return entry;
}

/** The typed error for an error status. */
export function errorForStatus(request: RequestSummary, response: ErrorResponse): RxsApiError {
  const { status } = response;
  const entry =
    ERROR_STATUSES.find((candidate) => candidate.status === status) ??
    ERROR_STATUSES.find((candidate) => candidate.status === (status >= 500 ? '5xx' : 'other'))!;
  return new entry.type(request, response);
}

/**
 * RXS 410 to a write sent with an idempotency key: the key was used for this same write before, but
 * the record it created or changed has been deleted since, so the service wrote nothing (it does
 * not answer as if the record were there). `detail` names the record, when, by whom and why it was
 * deleted. Restore the record to bring it back with its history, or send the write with a new key
 * to create it anew.
 */
export class RecordDeletedSinceError extends RxsApiError {
  override name = 'RecordDeletedSinceError';
  override readonly code = 'RXS_ERR_RECORD_DELETED_SINCE';
  /** The key the write was sent with. */
  readonly idempotencyKey: string;
  constructor(request: RequestSummary, response: ErrorResponse, idempotencyKey: string) {
    super(
      compose(
        `This write was made before with idempotency key "${idempotencyKey}", but the record it created or changed has been deleted since: nothing was written. Restore the record to bring it back with its history, or send the write with a new idempotency key to create it anew.`,
        request,
        response,
      ),
      request,
      response,
    );
    this.idempotencyKey = idempotencyKey;
  }
}

/** A keyed write's error as the client throws it: its 410 is a {@link RecordDeletedSinceError}. */
export function keyedWriteError(error: unknown, idempotencyKey: string | undefined): unknown {
  if (idempotencyKey === undefined || !(error instanceof RxsApiError) || error.status !== 410) return error;
  return new RecordDeletedSinceError(
    { service: error.service, method: error.method, url: error.url },
    { status: 410, detail: error.detail },
    idempotencyKey,
  );
}

/** No answer: connection refused or reset, DNS failure, TLS failure, or a timeout. */
export class NetworkError extends RxsApiError {
  override name = 'NetworkError';
  override readonly code: 'RXS_ERR_NETWORK' | 'RXS_ERR_TIMEOUT' = 'RXS_ERR_NETWORK';
  /** The system or undici error code, e.g. ECONNREFUSED, ENOTFOUND, ECONNRESET, ETIMEDOUT. */
  readonly systemCode: string | undefined;
  constructor(
    message: string,
    request: RequestSummary,
    systemCode: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, request, undefined, options);
    this.systemCode = systemCode;
  }
}

/** No answer (or no further data of a streamed body) within the time limit. */
export class TimeoutError extends NetworkError {
  override name = 'TimeoutError';
  override readonly code = 'RXS_ERR_TIMEOUT';
  readonly timeoutMs: number;
  constructor(message: string, request: RequestSummary, timeoutMs: number) {
    super(message, request, 'ETIMEDOUT');
    this.timeoutMs = timeoutMs;
  }
}

/** The answer is not what the interface promises: not JSON, not an array, truncated, corrupted. */
export class ResponseFormatError extends RxsApiError {
  override name = 'ResponseFormatError';
  override readonly code = 'RXS_ERR_RESPONSE_FORMAT';
  /** The body ended early (a cut connection or a crashed server), as opposed to being malformed. */
  readonly truncated: boolean;
  constructor(
    problem: string,
    request: RequestSummary,
    status: number,
    truncated: boolean,
    options?: { cause?: unknown },
  ) {
    super(
      `The ${request.service} service answered ${status} but its body ${problem}. ${truncated ? 'The connection was probably cut; try again.' : 'Check that the base URL points at the RXS service and not at another server or a proxy page.'} ${describeRequest(request, status)}`,
      request,
      { status },
      options,
    );
    this.truncated = truncated;
  }
}

/**
 * A records listing failed after it had already yielded records. The client retries a listing only
 * before its first record; once records were handed out it does not start over (the caller would
 * see them twice), so what was received is incomplete. List again from scratch, or resume after the
 * last record received (`after: lastId`; listings are ordered by `_id`).
 */
export class RecordsStreamInterrupted extends RxsApiError {
  override name = 'RecordsStreamInterrupted';
  override readonly code = 'RXS_ERR_RECORDS_STREAM_INTERRUPTED';
  /** How many records this listing yielded before it failed. */
  readonly recordsReceived: number;
  /** `_id` of the last record yielded, to resume with `after`. */
  readonly lastId: string | undefined;
  constructor(cause: RxsApiError, recordsReceived: number, lastId: string | undefined) {
    const firstLine = cause.message.split('\n')[0] ?? '';
    super(
      `The records listing was interrupted after ${recordsReceived} record(s): ${firstLine} ` +
        'The client retries a listing only before its first record, so it did not restart this one and the records received are incomplete. ' +
        `List again from scratch${lastId ? `, or resume with after=${lastId} (records are ordered by _id)` : ''}.`,
      { service: cause.service, method: cause.method, url: cause.url },
      cause.status === undefined ? undefined : { status: cause.status, detail: cause.detail },
      { cause },
    );
    this.recordsReceived = recordsReceived;
    this.lastId = lastId;
  }
}
