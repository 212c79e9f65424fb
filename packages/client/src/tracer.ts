import { TRACE_BATCH_TOO_LARGE } from '@rxs/contract/plain';
import type {
  BatchRetrieveNode,
  BatchRetrieveRequest,
  BatchRetrieveResponse,
  ConnectedNodesResponse,
  Trace,
  TraceChangesPage,
  TraceCreate,
  TraceEdge,
  TraceEvent,
  TraceModel,
  TraceModelPut,
  TraceModelVersion,
} from '@rxs/contract';
import { checkConcurrency, checkWholeNumber, mapBounded } from './concurrency.js';
import { ValidationError } from './errors.js';
import { expectArray, expectChangesPage, expectObject, expectObjectWith, type ShapeCheck } from './shape.js';
import type { Call, RequestOptions, Transport } from './transport.js';
import { pathSegment } from './url.js';

export interface TraceListOptions {
  /** Hops from each node (the server's default is 1). */
  nHops?: number;
  /** Batches in flight at once (default: the client's `traceConcurrency`, 4). Never unbounded. */
  concurrency?: number;
  /** Nodes per batch (default: the client's `traceBatchSize`, the server's published limit TRACE_BATCH_MAX_NODES). */
  batchSize?: number;
  mode?: BatchRetrieveRequest['mode'];
  /** The traces as they were at this moment (ISO 8601 date-time): `as_of` in every batch. */
  asOf?: string;
  /**
   * Keep only the edges: each batch's answer is reduced to its edges as it arrives and `results`
   * stays empty, so memory holds the traces, not every node's connected nodes (what an export needs).
   */
  edgesOnly?: boolean;
  /**
   * Hands each batch's edges (de-duplicated within the batch) over as its answer arrives, with the
   * batch's position among the batches (the halves of a refused batch share it, first half first);
   * `results` and `edges` then stay empty. For callers that keep a few fields of each edge: memory
   * then holds what they keep, not the edges.
   */
  onEdges?: (edges: TraceEdge[], batch: number) => void;
  signal?: AbortSignal;
}

/** The merged answer of all batches. */
export interface TraceListing {
  /** Per node id, as the batch listing answers it. */
  results: Record<string, ConnectedNodesResponse>;
  /** Every edge of every result, once each (by `_id`), in the order first met. */
  edges: TraceEdge[];
}

export interface TracerClient {
  /** `POST /traces/` (201). Never retried. */
  createTrace(body: TraceCreate, options?: RequestOptions): Promise<Trace>;
  /** `GET /traces/{id}`. */
  getTrace(id: string, options?: RequestOptions): Promise<Trace>;
  /** `DELETE /traces/{id}` (204). */
  deleteTrace(id: string, options?: RequestOptions): Promise<void>;
  /**
   * RXS `POST /traces/{id}/review`: the link still holds for its records as they are now; it is no
   * longer suspect (`outdated`). The comment goes to the trace's history. Never retried.
   */
  reviewTrace(id: string, comment?: string, options?: RequestOptions): Promise<Trace>;
  /** RXS `GET /traces/{id}/history`: made, made suspect, reviewed, deleted; oldest first. */
  traceHistory(id: string, options?: RequestOptions): Promise<TraceEvent[]>;
  /** `POST /traces/batch/list`: one batch (a read, so retried like a GET). */
  batchList(request: BatchRetrieveRequest, options?: RequestOptions): Promise<BatchRetrieveResponse>;
  /**
   * The traces of any number of nodes: split into batches of at most the server's limit, run with
   * bounded concurrency, merged, edges de-duplicated by `_id`. A batch whose answer the server
   * refuses as too large (422, TRACE_BATCH_TOO_LARGE) is split in halves and asked again, down to
   * single nodes. The first failing batch stops the rest.
   */
  listTracesFor(nodes: readonly BatchRetrieveNode[], options?: TraceListOptions): Promise<TraceListing>;
  /**
   * RXS `GET /traces/changes`: the traces created, deleted, made suspect or reviewed in the tenant since `since` (the
   * `cursor` of an earlier page). Without `since`, every trace of the tenant (held in memory); with
   * `fromNow`, only a cursor at the newest change. Ask again with the page's `cursor` while `more`.
   */
  traceChanges(options?: TraceChangesOptions): Promise<TraceChangesPage>;
  /** RXS `GET /trace-model`: the tenant's trace model (version 0 and no roles before the first change). */
  getTraceModel(options?: RequestOptions): Promise<TraceModel>;
  /**
   * RXS `PUT /trace-model`: replaces the whole model, based on `model.version` as read (409,
   * ConflictError, when it changed since; 422, ValidationError, one item per problem). Owners and
   * admins only. Never retried: a repeat after a lost answer would meet the version it made.
   */
  putTraceModel(model: TraceModelPut, options?: RequestOptions): Promise<TraceModel>;
  /** RXS `GET /trace-model/history`: the model's versions, newest first; `before` a version for older ones. */
  traceModelHistory(options?: TraceModelHistoryOptions): Promise<TraceModelVersion[]>;
}

export interface TraceModelHistoryOptions extends RequestOptions {
  /** Versions per page (the server's default is 20, its most 100). */
  limit?: number;
  /** Only versions older than this one. */
  before?: number;
}

export interface TraceChangesOptions extends RequestOptions {
  since?: string;
  /** Without `since`: no traces, only a cursor at the newest change. */
  fromNow?: boolean;
  /** Changed traces per page (the server's default is 10 000, its most 100 000). */
  limit?: number;
}

export interface TracerDefaults {
  concurrency: number;
  batchSize: number;
}

const trace = expectObject('a trace');
const traceModel: ShapeCheck = (value) =>
  value !== null && typeof value === 'object' && Array.isArray((value as { roles?: unknown }).roles)
    ? undefined
    : 'is not a trace model (a JSON object with "roles")';
const traceModelVersions = expectArray('a trace model history');
const traceEvents = expectArray('a trace history');
const batchAnswer = expectObjectWith('a batch trace listing', 'results');

/** The server's refusal of a batch whose answer would exceed TRACE_BATCH_MAX_EDGES. */
function isAnswerTooLarge(error: unknown): boolean {
  return (
    error instanceof ValidationError &&
    Array.isArray(error.detail) &&
    error.detail.some((item) => item.type === TRACE_BATCH_TOO_LARGE)
  );
}

/** Each node once (by type and id), in the order first given; the keys are garbage once it returns. */
function uniqueNodes(nodes: readonly BatchRetrieveNode[]): BatchRetrieveNode[] {
  const unique = new Map<string, BatchRetrieveNode>();
  for (const node of nodes) {
    const key = `${node.node_type}\u0000${node.node_id}`;
    if (!unique.has(key)) unique.set(key, node);
  }
  return [...unique.values()];
}

/** Splits `items` into consecutive slices of at most `size`. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const slices: T[][] = [];
  for (let start = 0; start < items.length; start += size) slices.push(items.slice(start, start + size));
  return slices;
}

export function createTracerClient(transport: Transport, base: URL, defaults: TracerDefaults): TracerClient {
  const call = (c: Omit<Call, 'service' | 'base'>): Call => ({ service: 'tracer', base, ...c });
  const tracePath = (id: string) => `/traces/${pathSegment(id, 'The trace id')}`;

  const batchList = async (request: BatchRetrieveRequest, options?: RequestOptions) =>
    transport.json<BatchRetrieveResponse>(
      call({
        method: 'POST',
        path: '/traces/batch/list',
        body: request,
        idempotent: true,
        signal: options?.signal,
      }),
      batchAnswer,
    );

  return {
    createTrace: async (body, options) =>
      transport.json(call({ method: 'POST', path: '/traces/', body, signal: options?.signal }), trace),

    getTrace: async (id, options) =>
      transport.json(call({ method: 'GET', path: tracePath(id), signal: options?.signal }), trace),

    deleteTrace: async (id, options) =>
      transport.empty(call({ method: 'DELETE', path: tracePath(id), signal: options?.signal })),

    reviewTrace: async (id, comment, options) =>
      transport.json(
        call({
          method: 'POST',
          path: `${tracePath(id)}/review`,
          body: comment === undefined ? {} : { comment },
          signal: options?.signal,
        }),
        trace,
      ),

    traceHistory: async (id, options) =>
      transport.json(
        call({ method: 'GET', path: `${tracePath(id)}/history`, signal: options?.signal }),
        traceEvents,
      ),

    batchList,

    traceChanges: async (options = {}) =>
      transport.json(
        call({
          method: 'GET',
          path: '/traces/changes',
          query: {
            ...(options.since !== undefined && { since: options.since }),
            ...(options.fromNow && { from: 'now' }),
            ...(options.limit !== undefined && { limit: checkWholeNumber(options.limit, 'limit') }),
          },
          signal: options.signal,
        }),
        expectChangesPage('a page of trace changes', 'traces'),
      ),

    getTraceModel: async (options) =>
      transport.json(call({ method: 'GET', path: '/trace-model', signal: options?.signal }), traceModel),

    putTraceModel: async (model, options) =>
      transport.json(
        call({ method: 'PUT', path: '/trace-model', body: model, signal: options?.signal }),
        traceModel,
      ),

    traceModelHistory: async (options = {}) =>
      transport.json(
        call({
          method: 'GET',
          path: '/trace-model/history',
          query: {
            ...(options.limit !== undefined && { limit: checkWholeNumber(options.limit, 'limit') }),
            ...(options.before !== undefined && { before: checkWholeNumber(options.before, 'before') }),
          },
          signal: options.signal,
        }),
        traceModelVersions,
      ),

    listTracesFor: async (nodes, options = {}) => {
      const concurrency = checkConcurrency(options.concurrency ?? defaults.concurrency, 'concurrency');
      const batchSize = checkWholeNumber(options.batchSize ?? defaults.batchSize, 'batchSize');
      const batches = chunk(uniqueNodes(nodes), batchSize);
      const { onEdges } = options;
      const edgesOnly = options.edgesOnly || onEdges !== undefined;
      // One slot of the bounded concurrency asks the halves of a refused batch one after the other.
      const listBatch = async (
        batch: BatchRetrieveNode[],
        index: number,
        signal: AbortSignal,
      ): Promise<BatchRetrieveResponse[]> => {
        try {
          const request: BatchRetrieveRequest = {
            nodes: batch,
            ...(options.nHops === undefined ? {} : { n_hops: options.nHops }),
            ...(options.mode === undefined ? {} : { mode: options.mode }),
            ...(options.asOf === undefined ? {} : { as_of: options.asOf }),
          };
          const answer = await batchList(request, { signal });
          if (!edgesOnly) return [answer];
          // Only the edges, de-duplicated within the batch; the rest of the answer is dropped here.
          const edges = new Map<string, TraceEdge>();
          for (const result of Object.values(answer.results ?? {}))
            for (const edge of Array.isArray(result?.edges) ? result.edges : []) edges.set(edge._id, edge);
          if (onEdges) {
            onEdges([...edges.values()], index);
            return [];
          }
          return [
            {
              results: { '': { edges: [...edges.values()] } as ConnectedNodesResponse },
              resolved_results: null,
            },
          ];
        } catch (error) {
          if (batch.length < 2 || !isAnswerTooLarge(error)) throw error;
          const half = Math.ceil(batch.length / 2);
          const first = await listBatch(batch.slice(0, half), index, signal);
          return [...first, ...(await listBatch(batch.slice(half), index, signal))];
        }
      };
      const answers = (
        await mapBounded(
          batches,
          concurrency,
          (batch, index, signal) => listBatch(batch, index, signal),
          options.signal,
        )
      ).flat();
      const results: Record<string, ConnectedNodesResponse> = {};
      const edges: TraceEdge[] = [];
      const seen = new Set<string>();
      for (const answer of answers) {
        for (const [nodeId, result] of Object.entries(answer.results)) {
          if (!edgesOnly) results[nodeId] = result;
          for (const edge of Array.isArray(result?.edges) ? result.edges : []) {
            if (seen.has(edge._id)) continue;
            seen.add(edge._id);
            edges.push(edge);
          }
        }
      }
      return { results, edges };
    },
  };
}
