import type {
  AuditInfo,
  BatchRetrieveRequest,
  BatchRetrieveResponse,
  ConnectedNode,
  ConnectedNodesResponse,
  GraphNode,
  NodeType,
  RelationType,
  Trace,
  TraceCreate,
  TraceEdge,
} from '@rxs/sdk';
import type { Selectable } from 'kysely';
import type { Principal } from '../../auth/principal.js';
import { conflict, notFound, unprocessable, validationItem } from '../../http/errors.js';
import type { Storage } from '../../storage/database.js';
import { newObjectId, nowIso } from '../../storage/ids.js';
import type { TraceTable } from '../../storage/schema.js';

type TraceRow = Selectable<TraceTable>;

/** SQL parameters per IN list, well under SQLite's and PostgreSQL's limits. */
const IN_CHUNK = 500;

function auditOf(row: TraceRow): AuditInfo {
  return {
    user_id_created: row.created_by,
    timestamp_created: row.created_at,
    user_id_last_updated: null,
    timestamp_last_updated: null,
    last_action: 'created',
  };
}

function toTrace(row: TraceRow): Trace {
  return {
    _id: row.id,
    source: { node_id: row.source_id, node_type: row.source_type as NodeType },
    target: { node_id: row.target_id, node_type: row.target_type as NodeType },
    relation_type: row.relation_type as RelationType,
    tenant_metadata: { tenant_id: row.tenant_id },
    audit_info: auditOf(row),
  };
}

/** Traces: links between records (and other nodes), and their n-hop batch listing. */
export class TracerService {
  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db;
  }

  async create(principal: Principal, input: TraceCreate): Promise<Trace> {
    const { source, target } = input;
    if (source.node_id === target.node_id && source.node_type === target.node_type) {
      throw unprocessable([
        validationItem(['body', 'target'], 'A trace cannot link a node to itself', 'value_error'),
      ]);
    }
    for (const [end, node] of [
      ['source', source],
      ['target', target],
    ] as const) {
      if (!(await this.nodeExists(principal.tenantId, node.node_id, node.node_type))) {
        throw notFound(`The ${end} ${node.node_type} ${node.node_id} was not found in your tenant.`);
      }
    }
    const duplicate = await this.db
      .selectFrom('traces')
      .select('id')
      .where('tenant_id', '=', principal.tenantId)
      .where('source_id', '=', source.node_id)
      .where('target_id', '=', target.node_id)
      .where('relation_type', '=', input.relation_type)
      .executeTakeFirst();
    if (duplicate) throw conflict(`This trace already exists: ${duplicate.id}.`);
    const row: TraceRow = {
      id: newObjectId(),
      tenant_id: principal.tenantId,
      source_id: source.node_id,
      source_type: source.node_type,
      target_id: target.node_id,
      target_type: target.node_type,
      relation_type: input.relation_type,
      created_by: principal.userId,
      created_at: nowIso(),
    };
    await this.db.insertInto('traces').values(row).execute();
    return toTrace(row);
  }

  /** Records and knowledge topics are ours to check; other node kinds live in other systems. */
  private async nodeExists(tenantId: string, id: string, type: NodeType): Promise<boolean> {
    if (type === 'Record') {
      return !!(await this.db
        .selectFrom('records')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .executeTakeFirst());
    }
    if (type === 'KnowledgeTopic') {
      return !!(await this.db
        .selectFrom('kt_revisions')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where((eb) => eb.or([eb('id', '=', id), eb('history_id', '=', id)]))
        .executeTakeFirst());
    }
    return true;
  }

  async get(principal: Principal, id: string): Promise<Trace> {
    const row = await this.db
      .selectFrom('traces')
      .selectAll()
      .where('tenant_id', '=', principal.tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(`Trace ${id} was not found.`);
    return toTrace(row);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const result = await this.db
      .deleteFrom('traces')
      .where('tenant_id', '=', principal.tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (result.numDeletedRows === 0n) throw notFound(`Trace ${id} was not found.`);
  }

  /**
   * For each requested node, the nodes reachable within `n_hops` traces (either direction), with the
   * edges walked and their depth. One query per hop serves all requested nodes together.
   */
  async batchList(principal: Principal, request: BatchRetrieveRequest): Promise<BatchRetrieveResponse> {
    const hops = request.n_hops ?? 1;
    const origins = [...new Map(request.nodes.map((n) => [n.node_id, n])).values()];
    const walks = origins.map((origin) => ({
      origin,
      seen: new Map<string, { type: NodeType; depth: number; via: TraceRow }>(),
      frontier: new Set([origin.node_id]),
      edges: new Map<string, { row: TraceRow; depth: number }>(),
    }));

    for (let depth = 1; depth <= hops; depth++) {
      const frontier = new Set(walks.flatMap((w) => [...w.frontier]));
      if (frontier.size === 0) break;
      const rows = await this.tracesTouching(principal.tenantId, [...frontier]);
      for (const walk of walks) {
        const next = new Set<string>();
        for (const row of rows) {
          const fromSource = walk.frontier.has(row.source_id);
          const fromTarget = walk.frontier.has(row.target_id);
          if (!fromSource && !fromTarget) continue;
          if (!walk.edges.has(row.id)) walk.edges.set(row.id, { row, depth });
          const ends = [
            ...(fromSource ? [{ id: row.target_id, type: row.target_type }] : []),
            ...(fromTarget ? [{ id: row.source_id, type: row.source_type }] : []),
          ];
          for (const end of ends) {
            if (end.id === walk.origin.node_id || walk.seen.has(end.id)) continue;
            walk.seen.set(end.id, { type: end.type as NodeType, depth, via: row });
            next.add(end.id);
          }
        }
        walk.frontier = next;
      }
    }

    const nodeFacts = await this.recordFacts(
      principal.tenantId,
      walks.flatMap((w) => [w.origin.node_id, ...w.seen.keys()]),
    );
    const tenant = { tenant_id: principal.tenantId };
    const graphNode = (id: string, type: NodeType, fallbackAudit: AuditInfo): GraphNode => {
      const facts = type === 'Record' ? nodeFacts.get(id) : undefined;
      return {
        _id: id,
        type,
        node_id: id,
        version: facts?.version ?? null,
        tenant_metadata: tenant,
        audit_info: facts?.audit ?? fallbackAudit,
        deleted: type === 'Record' && !facts,
      };
    };

    const results: Record<string, ConnectedNodesResponse> = {};
    for (const walk of walks) {
      const firstEdge = [...walk.edges.values()][0]?.row;
      const originAudit: AuditInfo = firstEdge
        ? auditOf(firstEdge)
        : {
            user_id_created: principal.userId,
            timestamp_created: nowIso(),
            user_id_last_updated: null,
            timestamp_last_updated: null,
            last_action: 'created',
          };
      const targetNodeMap: Record<string, ConnectedNode[]> = {};
      for (const [id, reached] of walk.seen) {
        const connected: ConnectedNode = {
          trace_id: reached.via.id,
          node: graphNode(id, reached.type, auditOf(reached.via)),
          relation_type: reached.via.relation_type as RelationType,
          tenant_metadata: tenant,
          audit_info: auditOf(reached.via),
          outdated: false,
          trace_metadata: { origin: 'manual' },
          hopsAwayFromSource: reached.depth,
        };
        (targetNodeMap[reached.type] ??= []).push(connected);
      }
      const edges: TraceEdge[] = [...walk.edges.values()].map(({ row, depth }) => ({
        _id: row.id,
        source: row.source_id,
        target: row.target_id,
        relation_type: [row.relation_type as RelationType],
        source_node: { node_id: row.source_id, type: row.source_type as NodeType },
        target_node: { node_id: row.target_id, type: row.target_type as NodeType },
        tenant_metadata: tenant,
        audit_info: auditOf(row),
        outdated: false,
        trace_metadata: { origin: 'manual' },
        depth,
      }));
      results[walk.origin.node_id] = {
        source_node: graphNode(walk.origin.node_id, walk.origin.node_type, originAudit),
        target_node_map: targetNodeMap,
        edges,
      };
    }
    return { results, resolved_results: null };
  }

  private async tracesTouching(tenantId: string, ids: string[]): Promise<TraceRow[]> {
    const rows = new Map<string, TraceRow>();
    for (let i = 0; i < ids.length; i += IN_CHUNK) {
      const chunk = ids.slice(i, i + IN_CHUNK);
      const found = await this.db
        .selectFrom('traces')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where((eb) => eb.or([eb('source_id', 'in', chunk), eb('target_id', 'in', chunk)]))
        .orderBy('id')
        .execute();
      for (const row of found) rows.set(row.id, row);
    }
    return [...rows.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  private async recordFacts(tenantId: string, ids: string[]) {
    const facts = new Map<string, { version: string; audit: AuditInfo }>();
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += IN_CHUNK) {
      const rows = await this.db
        .selectFrom('records')
        .select(['id', 'version', 'created_by', 'created_at', 'updated_by', 'updated_at', 'last_action'])
        .where('tenant_id', '=', tenantId)
        .where('id', 'in', unique.slice(i, i + IN_CHUNK))
        .execute();
      for (const r of rows) {
        facts.set(r.id, {
          version: r.version,
          audit: {
            user_id_created: r.created_by,
            timestamp_created: r.created_at,
            user_id_last_updated: r.updated_by,
            timestamp_last_updated: r.updated_at,
            last_action: r.last_action === 'updated' ? 'updated' : 'created',
          },
        });
      }
    }
    return facts;
  }
}
