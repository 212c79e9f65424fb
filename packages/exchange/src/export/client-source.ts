import type { ExportSource } from './procedure.js';
import { traceRolesAsOf } from './trace-roles-as-of.js';
import { ResponseFormatError, RxsApiError, type RxsClient } from '@rxs/client';
import type { TraceListOptions } from '@rxs/client';

/** The export procedure's view of a client: schema, streamed records, batched traces. */
export function exportSourceOf(
  client: RxsClient,
  traces: Omit<TraceListOptions, 'signal'> = {},
): ExportSource {
  return {
    servers: client.servers,
    getTopic: (revisionId, options) => client.techdoc.getTopic(revisionId, options),
    listRecords: (query) => client.records.listRecords(query),
    listRecordBatches: (query) => client.records.listRecordBatches(query),
    listTraces: async (nodes, options) =>
      (await client.tracer.listTracesFor(nodes, { ...traces, ...options, edgesOnly: true })).edges,
    listTraceBatches: async (nodes, onEdges, options) =>
      void (await client.tracer.listTracesFor(nodes, { ...traces, ...options, onEdges })),
    getApproval: (revisionId) => client.techdoc.getApproval(revisionId),
    getOutline: async (historyId) => {
      try {
        return await client.records.getOutline(historyId);
      } catch (error) {
        if (keepsNoOutlines(error)) return undefined;
        throw error;
      }
    },
    getTraceRoles: async (options = {}) => {
      try {
        const { asOf } = options;
        if (asOf !== undefined)
          return await traceRolesAsOf(asOf, (page) => client.tracer.traceModelHistory(page));
        return (await client.tracer.getTraceModel()).roles;
      } catch (error) {
        if (lacksRoute(error)) return undefined;
        throw error;
      }
    },
  };
}

/**
 * Whether a request's failure means the service lacks the route (an outline's: it keeps no outlines,
 * its topics are exported flat; the trace model's: its links are named by relation type): the
 * service just answered the export, so a 404 or 405 is a service without the route, and a whole
 * answer of another shape is one that answers the path with something else.
 */
export function lacksRoute(error: unknown): boolean {
  if (error instanceof ResponseFormatError) return !error.truncated;
  return error instanceof RxsApiError && (error.status === 404 || error.status === 405);
}

/** Whether an outline request's failure means the records service keeps no outlines (`lacksRoute`). */
export const keepsNoOutlines = lacksRoute;
