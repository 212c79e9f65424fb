import { TRACE_BATCH_MAX_NODES } from '@rxs/contract/plain';
import { checkConcurrency, checkWholeNumber } from './concurrency.js';
import { createRecordsClient, type RecordsClient } from './records.js';
import { displayUrl } from './redact.js';
import { DEFAULT_RETRY_POLICY, type RetryEvent } from './retry.js';
import { createTechdocClient, type TechdocClient } from './techdoc.js';
import { createTracerClient, type TracerClient } from './tracer.js';
import { fetchHttp, nodeHttp, type FetchFunction } from './http.js';
import { Transport } from './transport.js';
import { createConditionalClient, type ConditionalClient } from './conditional.js';
import { normalizeBaseUrl } from './url.js';

export interface ClientOptions {
  /** Base URL of the techdoc service (knowledge topics); may carry a path prefix. */
  techdocUrl: string;
  /** Base URL of the records service. Never assumed equal to the others. */
  recordsUrl: string;
  /** Base URL of the tracer service. */
  tracerUrl: string;
  /** Sent as `X-API-Key` on every request; never put into messages. Surrounding whitespace is dropped. */
  apiKey: string;
  /** Per attempt; for streamed listings the longest wait for the next chunk. Default 30 000. */
  timeoutMs?: number;
  /** Retries of idempotent calls after the first attempt. Default 4. */
  retries?: number;
  /** Backoff base (full jitter, doubling per retry). Default 200. */
  retryBaseMs?: number;
  /** Backoff cap. Default 10 000. */
  retryCapMs?: number;
  /** A `Retry-After` longer than this is not waited for; the error is thrown. Default 60 000. */
  maxRetryAfterMs?: number;
  /** Trace batches in flight at once in `listTracesFor`. Default 4; never unbounded. */
  traceConcurrency?: number;
  /** Nodes per trace batch. Default: the server's published limit (TRACE_BATCH_MAX_NODES). */
  traceBatchSize?: number;
  /** `User-Agent` header. */
  userAgent?: string;
  /**
   * A fetch function to send the requests with (a browser's, a test's); default: Node's own
   * `http` and `https` modules, which start faster than Node's global fetch.
   */
  fetch?: FetchFunction;
  /** Reports each retry (service, URL without credentials, attempt, wait, reason). */
  onRetry?: (event: RetryEvent) => void;
}

/** The three service clients, and their base URLs as they may be shown. */
export interface RxsClient {
  techdoc: TechdocClient;
  records: RecordsClient;
  tracer: TracerClient;
  /** Conditional requests: has a topic, a listing or the traces changed since a tag? */
  conditional: ConditionalClient;
  servers: { techdoc: string; records: string; tracer: string };
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_TRACE_CONCURRENCY = 4;

/** Refuses keys that cannot travel in a header, without ever repeating the key. */
function checkApiKey(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new TypeError('apiKey is required: create one in Settings → API keys of the RXS web app.');
  }
  const key = value.trim();
  if (!/^[\x20-\x7e]+$/.test(key)) {
    throw new TypeError(
      'apiKey holds characters that cannot be sent in an HTTP header (line breaks, control or non-ASCII characters); check how the key was read.',
    );
  }
  return key;
}

function checkTimeout(value: number): number {
  if (typeof value !== 'number' || !(value > 0)) {
    throw new TypeError(`timeoutMs must be a positive number of milliseconds (got ${value})`);
  }
  return value;
}

/** A typed client of the three RXS services. */
export function createClient(options: ClientOptions): RxsClient {
  const bases = {
    techdoc: normalizeBaseUrl(options.techdocUrl, 'techdocUrl'),
    records: normalizeBaseUrl(options.recordsUrl, 'recordsUrl'),
    tracer: normalizeBaseUrl(options.tracerUrl, 'tracerUrl'),
  };
  if (options.fetch !== undefined && typeof options.fetch !== 'function')
    throw new TypeError("`fetch` must be a fetch function (or left out, for Node's own http).");
  const transport = new Transport({
    apiKey: checkApiKey(options.apiKey),
    timeoutMs: checkTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    retry: {
      retries: checkWholeNumber(options.retries ?? DEFAULT_RETRY_POLICY.retries, 'retries', 0),
      baseMs: checkWholeNumber(options.retryBaseMs ?? DEFAULT_RETRY_POLICY.baseMs, 'retryBaseMs', 0),
      capMs: checkWholeNumber(options.retryCapMs ?? DEFAULT_RETRY_POLICY.capMs, 'retryCapMs', 0),
      maxRetryAfterMs: checkWholeNumber(
        options.maxRetryAfterMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs,
        'maxRetryAfterMs',
        0,
      ),
    },
    userAgent: options.userAgent ?? `rxs-sdk (node ${process.versions.node})`,
    http: options.fetch ? fetchHttp(options.fetch) : nodeHttp(),
    onRetry: options.onRetry,
  });
  return {
    conditional: createConditionalClient(transport, bases),
    techdoc: createTechdocClient(transport, bases.techdoc),
    records: createRecordsClient(transport, bases.records),
    tracer: createTracerClient(transport, bases.tracer, {
      concurrency: checkConcurrency(
        options.traceConcurrency ?? DEFAULT_TRACE_CONCURRENCY,
        'traceConcurrency',
      ),
      batchSize: checkWholeNumber(options.traceBatchSize ?? TRACE_BATCH_MAX_NODES, 'traceBatchSize'),
    }),
    servers: {
      techdoc: displayUrl(bases.techdoc),
      records: displayUrl(bases.records),
      tracer: displayUrl(bases.tracer),
    },
  };
}
