import type { ValidationErrorItem } from '../contract/errors.js';

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
 * Every error of the client. Says what happened and what to do, and which request it was
 * (service, method, URL without credentials, status when there was an answer).
 */
export class RxsApiError extends Error {
  override name = 'RxsApiError';
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

/** 401: the key is missing, expired, revoked or wrong. */
export class UnauthorizedError extends RxsApiError {
  override name = 'UnauthorizedError';
  constructor(request: RequestSummary, response: ErrorResponse) {
    super(
      compose(
        'The API key was refused (missing, invalid, expired or revoked). Check the X-API-Key header; in Settings → API keys, regenerate an expired key, or create a new one for a revoked key.',
        request,
        response,
      ),
      request,
      response,
    );
  }
}

/** 403: the key is valid, but its user's role lacks the permission. */
export class ForbiddenError extends RxsApiError {
  override name = 'ForbiddenError';
  constructor(request: RequestSummary, response: ErrorResponse) {
    super(
      compose(
        "The API key is valid, but its user may not do this. Check the user's role and permissions (an administrator can change the role).",
        request,
        response,
      ),
      request,
      response,
    );
  }
}

/** 404: no such object in the caller's tenant, or no such path. */
export class NotFoundError extends RxsApiError {
  override name = 'NotFoundError';
  constructor(request: RequestSummary, response: ErrorResponse) {
    super(
      compose(
        'Not found. For knowledge topics, a dashboard history id may have been used where a revision id is expected, or the reverse; also check the id belongs to your tenant and the base URL is right.',
        request,
        response,
      ),
      request,
      response,
    );
  }
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

/** 422: the request was understood but is invalid; `items` lists every problem. */
export class ValidationError extends RxsApiError {
  override name = 'ValidationError';
  readonly items: ValidationErrorItem[];
  constructor(request: RequestSummary, response: ErrorResponse) {
    const items: ValidationErrorItem[] = Array.isArray(response.detail)
      ? response.detail
      : [{ loc: [], msg: response.detail ?? 'The request is invalid.', type: 'invalid' }];
    const lines = formatValidationItems(items).map((line) => `\n  - ${line}`);
    super(
      `The request was rejected as invalid (422); fix the following and send it again:${lines.join('')}\n${describeRequest(request, response.status)}`,
      request,
      response,
    );
    this.items = items;
  }
}

/** 409: the change conflicts with the object's current state (read-only, approved, changed meanwhile). */
export class ConflictError extends RxsApiError {
  override name = 'ConflictError';
  constructor(request: RequestSummary, response: ErrorResponse) {
    super(
      compose(
        'The change conflicts with the current state of the object (it may be read-only, approved, or changed by someone else meanwhile). Fetch it again and apply the change to the current version.',
        request,
        response,
      ),
      request,
      response,
    );
  }
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

/** 413: the request body exceeds the server's limit. */
export class PayloadTooLargeError extends RxsApiError {
  override name = 'PayloadTooLargeError';
  constructor(request: RequestSummary, response: ErrorResponse) {
    super(
      compose(
        'The request body is larger than the server accepts. Send less per request (smaller data, fewer nodes per batch).',
        request,
        response,
      ),
      request,
      response,
    );
  }
}

/** 429: too many requests; `retryAfterMs` says how long the server asked to wait. */
export class RateLimitedError extends RxsApiError {
  override name = 'RateLimitedError';
  constructor(request: RequestSummary, response: ErrorResponse) {
    const wait =
      response.retryAfterMs === undefined
        ? ''
        : ` The server asked to wait ${Math.ceil(response.retryAfterMs / 1000)} s.`;
    super(
      compose(
        `The server is rate limiting this client.${wait} Send fewer requests at once (lower the concurrency) and try again later.`,
        request,
        response,
      ),
      request,
      response,
    );
  }
}

/** 5xx: a failure on the server's side. */
export class ServerError extends RxsApiError {
  override name = 'ServerError';
  constructor(request: RequestSummary, response: ErrorResponse) {
    super(
      compose(
        `The ${request.service} service failed to handle the request (${response.status}). Try again later; if it persists, the operator can find the cause in the server's logs.`,
        request,
        response,
      ),
      request,
      response,
    );
  }
}

/** Any other unexpected status (400, 405, 415, ...). */
export class UnexpectedStatusError extends RxsApiError {
  override name = 'UnexpectedStatusError';
  constructor(request: RequestSummary, response: ErrorResponse) {
    super(
      compose(`The server refused the request (${response.status}).`, request, response),
      request,
      response,
    );
  }
}

/** No answer: connection refused or reset, DNS failure, TLS failure, or a timeout. */
export class NetworkError extends RxsApiError {
  override name = 'NetworkError';
  /** The system or undici error code, e.g. ECONNREFUSED, ENOTFOUND, ECONNRESET, ETIMEDOUT. */
  readonly code: string | undefined;
  constructor(
    message: string,
    request: RequestSummary,
    code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, request, undefined, options);
    this.code = code;
  }
}

/** No answer (or no further data of a streamed body) within the time limit. */
export class TimeoutError extends NetworkError {
  override name = 'TimeoutError';
  readonly timeoutMs: number;
  constructor(message: string, request: RequestSummary, timeoutMs: number) {
    super(message, request, 'ETIMEDOUT');
    this.timeoutMs = timeoutMs;
  }
}

/** The answer is not what the interface promises: not JSON, not an array, truncated, corrupted. */
export class ResponseFormatError extends RxsApiError {
  override name = 'ResponseFormatError';
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

/** The typed error for an error status. */
export function errorForStatus(request: RequestSummary, response: ErrorResponse): RxsApiError {
  const { status } = response;
  if (status === 401) return new UnauthorizedError(request, response);
  if (status === 403) return new ForbiddenError(request, response);
  if (status === 404) return new NotFoundError(request, response);
  if (status === 409) return new ConflictError(request, response);
  if (status === 413) return new PayloadTooLargeError(request, response);
  if (status === 422) return new ValidationError(request, response);
  if (status === 429) return new RateLimitedError(request, response);
  if (status >= 500) return new ServerError(request, response);
  return new UnexpectedStatusError(request, response);
}
