import type { ExportedTrace } from '../model.js';

/** Node type of records in the trace graph; other nodes (documents, files, ...) are not exported. */
export const RECORD_NODE_TYPE = 'Record';

/** A trace carries one or more relation types; formats that link pairs want one link per type. */
export interface Link {
  trace: ExportedTrace;
  relationType: string;
}

export function linksOf(trace: ExportedTrace): Link[] {
  return trace.relationTypes.map((relationType) => ({ trace, relationType }));
}

/** Outgoing links of each source node, in trace order. */
export function linksBySource(traces: readonly ExportedTrace[]): Map<string, Link[]> {
  const bySource = new Map<string, Link[]>();
  for (const trace of traces) {
    const links = bySource.get(trace.source.id) ?? [];
    links.push(...linksOf(trace));
    bySource.set(trace.source.id, links);
  }
  return bySource;
}

/** Ids of the records at either end of the traces: the only ids a format needs to look up. */
export function recordEndpoints(traces: readonly ExportedTrace[]): Set<string> {
  const ids = new Set<string>();
  for (const { source, target } of traces) {
    if (source.type === RECORD_NODE_TYPE) ids.add(source.id);
    if (target.type === RECORD_NODE_TYPE) ids.add(target.id);
  }
  return ids;
}
