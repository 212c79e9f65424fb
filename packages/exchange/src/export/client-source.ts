import type { ExportSource } from './procedure.js';
import type { RxsClient } from '@rxs/client';
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
  };
}
