import type { ExportSource } from '../export/procedure.js';
import type { RxsClient } from './client.js';
import type { TraceListOptions } from './tracer.js';

/** The export procedure's view of a client: schema, streamed records, batched traces. */
export function exportSourceOf(
  client: RxsClient,
  traces: Omit<TraceListOptions, 'signal'> = {},
): ExportSource {
  return {
    servers: client.servers,
    getTopic: (revisionId) => client.techdoc.getTopic(revisionId),
    listRecords: (query) => client.records.listRecords(query),
    listRecordBatches: (query) => client.records.listRecordBatches(query),
    listTraces: async (nodes) => (await client.tracer.listTracesFor(nodes, traces)).edges,
  };
}
