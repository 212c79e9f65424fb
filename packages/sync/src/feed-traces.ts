import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { RxsClient } from '@rxs/client';
import { RxsApiError } from '@rxs/client';
import type { BatchRetrieveNode, Trace, TraceEdge } from '@rxs/contract';

/**
 * The traces half of the feed cache (feed-cache.ts): with `--traces`, a sync keeps the traces it
 * exported (as `POST /traces/batch/list` answered them) and the trace feed's cursor
 * (`GET /traces/changes`), and a changed poll applies the traces created, deleted, made suspect or
 * reviewed since instead of asking for the traces of every record again.
 *
 * Why the result is what `batch/list` would answer: a trace changes only by an event the feed lists
 * (created, made suspect, reviewed, deleted; the feed gives it whole, with `outdated`), the kept file is every trace touching the exported records when the cursor was taken,
 * and the cursor is always taken before the records are read. A record exported now but not then
 * was created after the cursor, so its traces are in the changes; a record gone was deleted, and
 * its traces with it (the changes say so).
 */
export interface TracePlan {
  /** The traces created, made suspect or reviewed since the cursor (whole), and the ids of those deleted. */
  created: Map<string, Trace>;
  removed: Set<string>;
  /** The cursor after these changes. */
  cursor: string;
}

/** Whether an error means "this service has no such feed, or refuses the cursor": then a full read. */
export function feedUnavailable(error: unknown): boolean {
  return error instanceof RxsApiError && [404, 405, 410, 422, 501].includes(error.status ?? 0);
}

/** The trace feed's cursor of now, or undefined from a service without it. */
export async function takeTraceCursor(client: RxsClient): Promise<string | undefined> {
  try {
    return (await client.tracer.traceChanges({ fromNow: true })).cursor;
  } catch (error) {
    if (feedUnavailable(error)) return undefined;
    throw error;
  }
}

/** The trace changes since `cursor`, or undefined when the service cannot say (then traces are read whole). */
export async function planTraces(client: RxsClient, cursor: string): Promise<TracePlan | undefined> {
  const plan: TracePlan = { created: new Map(), removed: new Set(), cursor };
  try {
    for (;;) {
      const page = await client.tracer.traceChanges({ since: plan.cursor });
      if (page.complete) return undefined;
      for (const trace of page.traces) plan.created.set(trace._id, trace);
      for (const id of page.removed) {
        plan.created.delete(id);
        plan.removed.add(id);
      }
      plan.cursor = page.cursor;
      if (!page.more) return plan;
    }
  } catch (error) {
    if (feedUnavailable(error)) return undefined;
    throw error;
  }
}

/** A trace as `POST /traces/batch/list` shows it one hop from either end. */
export function edgeOfTrace(trace: Trace): TraceEdge {
  return {
    _id: trace._id,
    source: trace.source.node_id,
    target: trace.target.node_id,
    relation_type: [trace.relation_type],
    source_node: { node_id: trace.source.node_id, type: trace.source.node_type },
    target_node: { node_id: trace.target.node_id, type: trace.target.node_type },
    tenant_metadata: trace.tenant_metadata,
    audit_info: trace.audit_info,
    outdated: trace.outdated === true,
    trace_metadata: { origin: 'manual' },
    depth: 1,
  } as TraceEdge;
}

/** Node keys as `batch/list` matches them: type and id. */
const nodeKey = (type: string | undefined, id: string) => `${type ?? 'Record'}\u0000${id}`;

/**
 * The traces `batch/list` would answer for `nodes` (one hop) now: the kept ones still there and the
 * new ones, each touching one of the nodes at either end.
 */
export async function applyTraceChanges(
  keptFile: string,
  plan: TracePlan,
  nodes: readonly BatchRetrieveNode[],
): Promise<TraceEdge[]> {
  const wanted = new Set(nodes.map((node) => nodeKey(node.node_type, node.node_id)));
  const touches = (edge: TraceEdge) =>
    wanted.has(nodeKey(edge.source_node?.type, edge.source)) ||
    wanted.has(nodeKey(edge.target_node?.type, edge.target));
  const edges: TraceEdge[] = [];
  const input = createInterface({ input: createReadStream(keptFile, 'utf8'), crlfDelay: Infinity });
  for await (const line of input) {
    if (line === '') continue;
    const edge = JSON.parse(line) as TraceEdge;
    if (!plan.removed.has(edge._id) && !plan.created.has(edge._id) && touches(edge)) edges.push(edge);
  }
  for (const trace of plan.created.values()) {
    const edge = edgeOfTrace(trace);
    if (touches(edge)) edges.push(edge);
  }
  return edges;
}
