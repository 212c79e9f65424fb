import type { TraceRole } from '@rxs/contract';
import type { ExportedTrace, TraceEnd } from '../model.js';

/** Node type of records in the trace graph; other nodes (documents, files, ...) are not exported. */
export const RECORD_NODE_TYPE = 'Record';

/**
 * A trace carries one or more relation types; formats that link pairs want one link per type. A
 * link of the relation type the trace's role stands on is that role's (`role`).
 */
export interface Link {
  trace: ExportedTrace;
  relationType: string;
  role?: RoleLink;
}

export function linksOf(trace: ExportedTrace, roles?: TraceRoles): Link[] {
  const role = roles?.of(trace);
  return trace.relationTypes.map((relationType) =>
    role && role.role.relation_type === relationType
      ? { trace, relationType, role }
      : { trace, relationType },
  );
}

/** A trace read by its role: the record at the role's `from` end and the one at its `to` end. */
export interface RoleLink {
  role: TraceRole;
  from: TraceEnd;
  to: TraceEnd;
}

/** The roles of an export's traces part (`ExportPart` traces `roles`), by id. */
export class TraceRoles {
  private readonly byId = new Map<string, TraceRole>();

  add(roles: readonly TraceRole[]): void {
    for (const role of roles) this.byId.set(role.id, role);
  }

  /** The roles the traces name, in the model's order. */
  get all(): TraceRole[] {
    return [...this.byId.values()];
  }

  /** The trace's role with its ends at the role's `from` and `to`, when it names one. */
  of(trace: ExportedTrace): RoleLink | undefined {
    const role = trace.roleId === undefined ? undefined : this.byId.get(trace.roleId);
    if (!role) return undefined;
    return role.trace_source === 'from'
      ? { role, from: trace.source, to: trace.target }
      : { role, from: trace.target, to: trace.source };
  }
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
