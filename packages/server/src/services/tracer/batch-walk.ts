import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { TRACE_BATCH_TOO_LARGE, type BatchRetrieveNode, type NodeType } from '@rxs/contract';
import { unprocessable, validationItem } from '../../http/errors.js';
import type { TraceRow } from '../../storage/schema.js';

/** Steps of the walk between two yields to the event loop, so `/healthz` and others stay served. */
const STEPS_PER_YIELD = 2_000;

/** A node of the graph is its type and its id: a Document that shares a record's id is not that record. */
export const nodeKey = (type: string, id: string) => `${type}\u0000${id}`;

export interface Reached {
  id: string;
  type: NodeType;
  depth: number;
  via: TraceRow;
}

/** One requested node's walk: references into the shared rows, never copies of them. */
export interface Walk {
  origin: BatchRetrieveNode;
  /** Nodes reached, by nodeKey, with the depth and the edge they were first reached by. */
  reached: Map<string, Reached>;
  /** Edges walked, by trace id, with the depth they were walked at. */
  edges: Map<string, { row: TraceRow; depth: number }>;
}

/** Finds the traces touching any of `ids` (either end), at most `limit` of them (more means too many). */
export type TracesTouching = (ids: string[], limit: number) => Promise<TraceRow[]>;

export function answerTooLarge(maxEdges: number): Error {
  return unprocessable([
    validationItem(
      ['body', 'nodes'],
      `The answer would hold more than ${maxEdges} edges, the limit per request. Ask for fewer nodes at once, or fewer hops (n_hops).`,
      TRACE_BATCH_TOO_LARGE,
    ),
  ]);
}

/**
 * For each origin, the nodes and edges within `hops` traces (either direction). One query per hop
 * serves every origin; the edges fetched are shared by all walks. The walk stops with a 422 as soon
 * as the answer would hold more than `maxEdges` edges (counted once per origin that reaches them),
 * so neither the work nor the answer grows beyond that bound.
 */
export async function walkBatch(
  origins: readonly BatchRetrieveNode[],
  hops: number,
  maxEdges: number,
  tracesTouching: TracesTouching,
): Promise<Walk[]> {
  const walks = origins.map((origin) => ({
    walk: { origin, reached: new Map<string, Reached>(), edges: new Map() } as Walk,
    originKey: nodeKey(origin.node_type, origin.node_id),
    frontier: [nodeKey(origin.node_type, origin.node_id)],
  }));
  let edgeCount = 0;
  let steps = 0;

  for (let depth = 1; depth <= hops; depth++) {
    const frontierIds = new Set<string>();
    for (const { frontier } of walks)
      for (const key of frontier) frontierIds.add(key.slice(key.indexOf('\u0000') + 1));
    if (frontierIds.size === 0) break;
    // Every trace fetched here belongs to at least one walk's answer, so more than maxEdges is too many.
    const rows = await tracesTouching([...frontierIds], maxEdges + 1);
    if (rows.length > maxEdges) throw answerTooLarge(maxEdges);

    const adjacent = new Map<string, TraceRow[]>();
    for (const row of rows) {
      for (const key of [nodeKey(row.source_type, row.source_id), nodeKey(row.target_type, row.target_id)]) {
        const list = adjacent.get(key);
        if (list) list.push(row);
        else adjacent.set(key, [row]);
      }
    }

    for (const entry of walks) {
      const { walk } = entry;
      const next: string[] = [];
      for (const from of entry.frontier) {
        for (const row of adjacent.get(from) ?? []) {
          if (++steps % STEPS_PER_YIELD === 0) await yieldToEventLoop();
          if (!walk.edges.has(row.id)) {
            if (++edgeCount > maxEdges) throw answerTooLarge(maxEdges);
            walk.edges.set(row.id, { row, depth });
          }
          const fromSource = nodeKey(row.source_type, row.source_id) === from;
          const end = fromSource
            ? { id: row.target_id, type: row.target_type }
            : { id: row.source_id, type: row.source_type };
          const key = nodeKey(end.type, end.id);
          if (key === entry.originKey || walk.reached.has(key)) continue;
          walk.reached.set(key, { id: end.id, type: end.type as NodeType, depth, via: row });
          next.push(key);
        }
      }
      entry.frontier = next;
    }
  }
  return walks.map(({ walk }) => walk);
}
