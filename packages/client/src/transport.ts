import type { ValidationErrorItem } from '@rxs/contract';
import { AttemptTimer } from './attempt-timer.js';
import type { HttpAnswer, HttpFunction } from './http.js';
import {
  errorForStatus,
  NetworkError,
  ResponseFormatError,
  RxsApiError,
  TimeoutError,
  describeRequest,
  type RequestSummary,
  type ServiceName,
} from './errors.js';
import { displayUrl, Redactor } from './redact.js';
import { parseRetryAfter, retryDelay, sleep, type RetryEvent, type RetryPolicy } from './retry.js';
import type { ShapeCheck } from './shape.js';
import { joinUrl, nextPageUrl, type QueryValues } from './url.js';

export interface TransportOptions {
  apiKey: string;
  /** Per attempt: the whole exchange, or for streamed bodies the wait for each chunk. */
  timeoutMs: number;
  retry: RetryPolicy;
  userAgent: string;
  /** Sends each request (`nodeHttp()`, or `fetchHttp` of a caller's fetch). */
  http: HttpFunction;
  onRetry?: (event: RetryEvent) => void;
  /** For tests: the jitter source. */
  random?: () => number;
}

/** Options every single call takes. */
export interface RequestOptions {
  /** Aborts the call (and its retries); the abort reason is thrown as is. */
  signal?: AbortSignal;
}

/** One call of a service: where, what, and whether repeating it is safe. */
export interface Call {
  service: ServiceName;
  base: URL;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the base (starting with `/`), or a complete URL (a next page). */
  path: string | URL;
  query?: QueryValues;
  body?: unknown;
  /** Safe to repeat. Defaults to true for GET and DELETE, false otherwise. */
  idempotent?: boolean;
  signal?: AbortSignal;
  /** An entity tag for `If-None-Match` (see `conditional`). */
  ifNoneMatch?: string;
  /** RXS `Idempotency-Key`: the service answers a repeat with the first answer, so it is retried. */
  idempotencyKey?: string;
}

/** An attempt that got a successful answer; its body is still unread. */
export interface Exchange {
  response: HttpAnswer;
  url: URL;
  info: RequestSummary;
  timer: AttemptTimer;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
const ERROR_BODY_LIMIT = 64 * 1024;

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host name not found (DNS)',
  EAI_AGAIN: 'DNS lookup failed temporarily',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed while sending',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers in time',
  UND_ERR_BODY_TIMEOUT: 'no body data in time',
  UND_ERR_CLOSED: 'connection closed',
};

/** The code and message of a fetch failure (undici wraps the system error in `cause`). */
function networkCause(error: unknown): { code: string | undefined; message: string } {
  let current: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return { code, message: (current as Error).message ?? message };
    if (current instanceof Error) message = current.message;
    current = (current as { cause?: unknown }).cause;
  }
  return { code: undefined, message };
}

/**
 * The HTTP core shared by the three services: URL joining, the `X-API-Key` header, per-attempt
 * timeouts, typed errors, and retries with exponential backoff and full jitter for idempotent calls.
 */
export class Transport {
  readonly redactor: Redactor;

  constructor(private readonly options: TransportOptions) {
    this.redactor = new Redactor(options.apiKey);
  }

  /** The URL a call addresses. */
  urlOf(call: Call): URL {
    return call.path instanceof URL ? call.path : joinUrl(call.base, call.path, call.query);
  }

  infoOf(call: Call, url: URL): RequestSummary {
    return { service: call.service, method: call.method, url: this.redactor.text(displayUrl(url)) };
  }

  /** A JSON answer, retried as the call allows; `check` names what is wrong with its shape, if anything. */
  async json<T>(call: Call, check?: ShapeCheck, parse?: (text: string) => unknown): Promise<T> {
    return (await this.jsonPage<T>(call, check, parse)).value;
  }

  /** A JSON answer and the next page its `Link` header points to, if any. */
  async jsonPage<T>(
    call: Call,
    check?: ShapeCheck,
    /** How the body's text is parsed (`JSON.parse` unless given); its failure is a format error. */
    parse?: (text: string) => unknown,
  ): Promise<{ value: T; next: URL | undefined }> {
    return this.retrying(call, async () => {
      const exchange = await this.open(call);
      try {
        const text = await this.readText(exchange);
        return { value: this.parseJson<T>(text, exchange, check, parse), next: this.nextPage(exchange) };
      } finally {
        exchange.timer.dispose();
      }
    });
  }

  /** The `rel="next"` page of an answer; a link that cannot be followed safely is a format error. */
  nextPage(exchange: Pick<Exchange, 'response' | 'url' | 'info'>): URL | undefined {
    try {
      const next = nextPageUrl(exchange.response.header('link'), exchange.url);
      if (next?.href === exchange.url.href)
        throw new Error('the next page is the page just read, which would never end');
      return next;
    } catch (error) {
      throw new ResponseFormatError(
        `has an unusable Link header: ${this.redactor.text((error as Error).message)}`,
        exchange.info,
        exchange.response.status,
        false,
      );
    }
  }

  /** A call whose answer has no body worth reading (204). */
  async empty(call: Call): Promise<void> {
    return this.retrying(call, async () => {
      const exchange = await this.open(call);
      try {
        await this.readText(exchange);
      } finally {
        exchange.timer.dispose();
      }
    });
  }

  /**
   * A conditional request: whether the answer is unchanged since `ifNoneMatch` (304, or 412 to a
   * POST), and the answer's current ETag (undefined from a server that sends none). Callers ask
   * for small answers (a page of one record) when they only want the tag: its body is read and
   * dropped (beyond 64 KB it is cut off).
   */
  async conditional(call: Call): Promise<{ unchanged: boolean; etag: string | undefined }> {
    return this.retrying(call, async () => {
      const exchange = await this.open(call);
      try {
        // Read, not cancelled: a small body read to its end leaves the connection for the next
        // call. Within the attempt's time limit; a body lost on the way loses nothing wanted.
        exchange.timer.start();
        await readLimited(exchange.response, ERROR_BODY_LIMIT).catch(() => {
          if (exchange.timer.callerAborted) throw exchange.timer.signal.reason;
        });
        exchange.timer.pause();
        const etag = exchange.response.header('etag') ?? undefined;
        return { unchanged: exchange.response.status === 304 || exchange.response.status === 412, etag };
      } finally {
        exchange.timer.dispose();
      }
    });
  }

  /** Runs `attempt` until it succeeds or `pauseBeforeRetry` gives up. */
  async retrying<T>(call: Call, attempt: () => Promise<T>): Promise<T> {
    for (let retryIndex = 0; ; retryIndex++) {
      try {
        return await attempt();
      } catch (error) {
        await this.pauseBeforeRetry(error, retryIndex, call);
      }
    }
  }

  /**
   * Waits before retry number `retryIndex + 1` of a failed call and reports it through `onRetry`;
   * rethrows the error instead when the call may not or should not be repeated.
   */
  async pauseBeforeRetry(error: unknown, retryIndex: number, call: Call): Promise<void> {
    const idempotent =
      call.idempotent ??
      (call.method === 'GET' || call.method === 'DELETE' || call.idempotencyKey !== undefined);
    const delay = retryDelay(error, retryIndex, idempotent, this.options.retry, this.options.random);
    if (delay === undefined) throw error;
    const failure = error as RxsApiError;
    try {
      this.options.onRetry?.({
        service: failure.service,
        method: failure.method,
        url: failure.url,
        attempt: retryIndex + 1,
        retries: this.options.retry.retries,
        delayMs: delay,
        status: failure.status,
        reason: failure.message.split('\n')[0] ?? '',
      });
    } catch {
      // A failing progress hook must not fail the call.
    }
    await sleep(delay, call.signal);
  }

  /**
   * One attempt: sends the request and waits for the headers. Success statuses come back with the
   * body unread and the attempt's timer paused; error statuses become typed errors. Same-origin
   * redirects are followed; others are refused so the key is never sent to another host.
   */
  async open(call: Call): Promise<Exchange> {
    let url = this.urlOf(call);
    let method: string = call.method;
    let body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const timer = new AttemptTimer(this.options.timeoutMs, call.signal);
    try {
      for (let redirects = 0; ; redirects++) {
        const info = { ...this.infoOf(call, url), method };
        const headers: Record<string, string> = {
          'X-API-Key': this.options.apiKey,
          Accept: 'application/json',
          'User-Agent': this.options.userAgent,
        };
        if (body !== undefined) headers['Content-Type'] = 'application/json';
        if (call.ifNoneMatch !== undefined) headers['If-None-Match'] = call.ifNoneMatch;
        if (call.idempotencyKey !== undefined) headers['Idempotency-Key'] = call.idempotencyKey;
        timer.start();
        let response: HttpAnswer;
        try {
          response = await this.options.http(url, { method, headers, body, signal: timer.signal });
        } catch (error) {
          throw this.networkError(error, info, timer, 'connect');
        }
        timer.pause();
        const location = response.header('location');
        if (REDIRECTS.has(response.status) && location && redirects < MAX_REDIRECTS) {
          response.cancel();
          const target = new URL(location, url);
          if (target.origin !== url.origin) {
            throw new RxsApiError(
              `The ${call.service} service redirected to another origin (${this.redactor.text(displayUrl(target))}); the client does not follow it, so the API key is not sent there. Use that address as the ${call.service} base URL. ${describeRequest(info, response.status)}`,
              info,
              { status: response.status },
            );
          }
          if (response.status === 303) {
            method = 'GET';
            body = undefined;
          }
          url = target;
          continue;
        }
        if (response.status >= 200 && response.status < 300) return { response, url, info, timer };
        // Unchanged since the tag: 304 to a GET, 412 to a POST (RFC 9110 §13.1.2).
        if (call.ifNoneMatch !== undefined && (response.status === 304 || response.status === 412))
          return { response, url, info, timer };
        throw await this.statusError(response, info, timer);
      }
    } catch (error) {
      timer.dispose();
      throw error;
    }
  }

  /**
   * The body of a successful answer, chunk by chunk, with the time limit applied to each wait for
   * data (an idle timeout) rather than to the whole body. Cancels the body when the reader stops early.
   */
  async *chunks(exchange: Exchange): AsyncGenerator<Uint8Array> {
    const { response, timer, info } = exchange;
    let ended = false;
    try {
      for (;;) {
        timer.start();
        let chunk: Uint8Array | undefined;
        try {
          chunk = await response.read();
        } catch (error) {
          throw this.networkError(error, info, timer, 'body');
        } finally {
          timer.pause();
        }
        if (chunk === undefined) {
          ended = true;
          return;
        }
        yield chunk;
      }
    } finally {
      timer.dispose();
      if (!ended) response.cancel();
    }
  }

  /** The whole body as text, within the attempt's time limit. */
  private async readText(exchange: Exchange): Promise<string> {
    exchange.timer.start();
    try {
      return await readAll(exchange.response);
    } catch (error) {
      throw this.networkError(error, exchange.info, exchange.timer, 'body');
    } finally {
      exchange.timer.pause();
    }
  }

  private parseJson<T>(
    text: string,
    exchange: Exchange,
    check?: ShapeCheck,
    parse: (text: string) => unknown = JSON.parse,
  ): T {
    const { info, response } = exchange;
    if (text.trim() === '') {
      throw new ResponseFormatError('is empty where JSON was expected', info, response.status, false);
    }
    let value: unknown;
    try {
      value = parse(text);
    } catch (error) {
      const cut = text.length > 0 && looksCut(text);
      throw new ResponseFormatError(
        cut
          ? 'ends before its JSON is complete'
          : `is not JSON (it starts with ${JSON.stringify(this.excerpt(text, 60))})`,
        info,
        response.status,
        cut,
        { cause: error },
      );
    }
    const problem = check?.(value);
    if (problem) throw new ResponseFormatError(problem, info, response.status, false);
    return value as T;
  }

  /** The typed error of an error status, with the body's `detail` (redacted) when there is one. */
  private async statusError(
    response: HttpAnswer,
    info: RequestSummary,
    timer: AttemptTimer,
  ): Promise<RxsApiError> {
    let text = '';
    timer.start();
    try {
      text = await readLimited(response, ERROR_BODY_LIMIT);
    } catch {
      // The status says enough; a lost error body is no reason to hide it.
    } finally {
      timer.pause();
    }
    let detail: string | ValidationErrorItem[] | undefined;
    try {
      const parsed = JSON.parse(text) as { detail?: unknown };
      if (parsed && typeof parsed === 'object' && 'detail' in parsed) {
        detail = this.redactDetail(parsed.detail);
      } else {
        detail = this.excerpt(text, 300);
      }
    } catch {
      detail = text.trim() ? this.excerpt(text, 300) : undefined;
    }
    const retryAfterMs = parseRetryAfter(response.header('retry-after'));
    return errorForStatus(info, { status: response.status, detail, retryAfterMs });
  }

  private redactDetail(detail: unknown): string | ValidationErrorItem[] | undefined {
    if (detail === undefined || detail === null) return undefined;
    if (typeof detail === 'string') return this.redactor.text(detail);
    if (Array.isArray(detail)) {
      return detail.map((item: unknown) => {
        const record = (item && typeof item === 'object' ? item : { msg: String(item) }) as Partial<
          Record<keyof ValidationErrorItem, unknown>
        >;
        const loc = Array.isArray(record.loc)
          ? record.loc.map((part) => (typeof part === 'number' ? part : this.redactor.text(String(part))))
          : [];
        return {
          loc,
          msg: this.redactor.text(
            typeof record.msg === 'string' ? record.msg : JSON.stringify(record.msg ?? item),
          ),
          type: this.redactor.text(typeof record.type === 'string' ? record.type : ''),
        };
      });
    }
    return this.redactor.text(JSON.stringify(detail));
  }

  /** A short, single-line, redacted excerpt of a body. */
  excerpt(text: string, length: number): string {
    const flat = this.redactor.text(text.replace(/\s+/g, ' ').trim());
    return flat.length > length ? `${flat.slice(0, length)}…` : flat;
  }

  /** A failed fetch or body read as the client's error: the caller's abort, a timeout, or a network error. */
  networkError(
    error: unknown,
    info: RequestSummary,
    timer: AttemptTimer,
    phase: 'connect' | 'body',
  ): unknown {
    if (timer.callerAborted) return timer.signal.reason;
    if (error instanceof RxsApiError) return error;
    const address = new URL(info.url).origin;
    const seconds = `${Math.round(timer.timeoutMs / 100) / 10} s`;
    if (timer.timedOut) {
      const what =
        phase === 'connect'
          ? `No answer from the ${info.service} service at ${address} within ${seconds}.`
          : `The ${info.service} service at ${address} stopped sending data for ${seconds} in the middle of its answer.`;
      return new TimeoutError(
        `${what} Check that the service runs and is reachable at that address, or raise the timeout (timeoutMs). ${describeRequest(info)}`,
        info,
        timer.timeoutMs,
      );
    }
    const { code, message } = networkCause(error);
    const reason = (code && NETWORK_CODES[code]) ?? this.redactor.text(message);
    const what =
      phase === 'connect'
        ? `Could not reach the ${info.service} service at ${address} (${reason}${code && NETWORK_CODES[code] ? `, ${code}` : ''}).`
        : `The connection to the ${info.service} service at ${address} broke while its answer was arriving (${reason}).`;
    return new NetworkError(
      `${what} Check the ${info.service} URL and that the service is running and reachable. ${describeRequest(info)}`,
      info,
      code,
      { cause: error },
    );
  }
}

/** Whether a text that failed to parse looks like the start of a JSON document (cut) rather than something else. */
function looksCut(text: string): boolean {
  const first = text.trimStart()[0];
  const last = text.trimEnd().slice(-1);
  return (first === '{' && last !== '}') || (first === '[' && last !== ']');
}

/** The whole body as UTF-8 text (a byte order mark dropped, as `Response.text()` does). */
async function readAll(response: HttpAnswer): Promise<string> {
  const chunks: Uint8Array[] = [];
  let ended = false;
  try {
    for (let chunk = await response.read(); chunk !== undefined; chunk = await response.read())
      chunks.push(chunk);
    ended = true;
  } finally {
    if (!ended) response.cancel();
  }
  return new TextDecoder().decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
}

/** The body as UTF-8 text, at most `limit` characters of it; the rest is discarded unread. */
async function readLimited(response: HttpAnswer, limit: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  try {
    while (text.length < limit) {
      const chunk = await response.read();
      if (chunk === undefined) {
        ended = true;
        text += decoder.decode();
        break;
      }
      text += decoder.decode(chunk, { stream: true });
    }
  } finally {
    if (!ended) response.cancel();
  }
  return text.slice(0, limit);
}
