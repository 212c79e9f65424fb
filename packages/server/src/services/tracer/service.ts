import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { TRACE_BATCH_MAX_EDGES, UNSAFE_NODE_ID_SCHEMES } from '@rxs/contract';
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
  TraceEvent,
  TraceEventAction,
} from '@rxs/contract';
import type { Principal } from '../../auth/principal.js';
import { conflict, notFound, unprocessable, validationItem } from '../../http/errors.js';
import type { Storage } from '../../storage/database.js';
import type { Database } from '../../storage/schema.js';
import { newObjectId, nowIso } from '../../storage/ids.js';
import { changeActor } from '../../storage/change-actor.js';
import {
  deleteTrace,
  endVersions,
  IN_CHUNK,
  insertTrace,
  isSuspect,
  recordEndsOf,
  recordVersions,
  reviewTrace,
} from '../../storage/traces-write.js';
import { inTransaction } from '../../storage/transactions.js';
import { entityTag } from '../../http/conditional.js';
import { recordsAsOfQuery } from '../records/as-of-query.js';
import type { TraceRow } from '../../storage/schema.js';
import { walkBatch, type Walk } from './batch-walk.js';
import { TraceModelService } from './trace-model.js';

function auditOf(row: TraceRow): AuditInfo {
  return {
    user_id_created: row.created_by,
    timestamp_created: row.created_at,
    user_id_last_updated: null,
    timestamp_last_updated: null,
    last_action: 'created',
  };
}

/** The trace as answered; `outdated` when known (a record end changed since it was reviewed). */
export function toTrace(row: TraceRow, outdated?: boolean): Trace {
  return {
    _id: row.id,
    source: { node_id: row.source_id, node_type: row.source_type as NodeType },
    target: { node_id: row.target_id, node_type: row.target_type as NodeType },
    relation_type: row.relation_type as RelationType,
    tenant_metadata: { tenant_id: row.tenant_id },
    audit_info: auditOf(row),
    ...(outdated !== undefined && { outdated }),
  };
}

/** Traces as answered, each with whether it is suspect now. */
export async function tracesWithStatus(
  db: Kysely<Database>,
  tenantId: string,
  rows: readonly TraceRow[],
): Promise<Trace[]> {
  const versions = await recordVersions(db, tenantId, rows.flatMap(recordEndsOf));
  return rows.map((row) =>
    toTrace(
      row,
      isSuspect(row, (id) => versions.get(id)),
    ),
  );
}

/**
 * How often the records of a tenant changed, over all its revisions (every counter only grows, so
 * the sum moves with every change): batch answers show record versions, which their ETag must follow.
 */
async function recordChangeCount(db: Kysely<Database>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('record_listing_tags')
    .select((eb) => eb.fn.sum<string | number>('changes').as('changes'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return Number(row?.changes ?? 0);
}

/**
 * How often the tenant's traces changed so far (005_trace_tags.ts; 0 before the first change): what
 * batch answers' ETags and the trace feed's cursors are made of.
 */
export async function traceChangeCount(db: Kysely<Database>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('trace_listing_tags')
    .select('changes')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return Number(row?.changes ?? 0);
}

/** Raised when the JSON text of batch answers changes: tags given before stop matching. */
const TRACE_BATCH_FORMAT = 2;
/** A trace's two ends, each with its own index (`traces_by_source`, `traces_by_target`). */
const TRACE_ENDS = ['source_id', 'target_id'] as const;
type TraceEnd = (typeof TRACE_ENDS)[number];
/** Characters of a batch answer per write to the socket. */
const BATCH_CHUNK_CHARS = 64 * 1024;

/** Traces: links between records (and other nodes), their reviews, and their n-hop batch listing. */

export class TracerService {
  /** The tenant's trace model: what traces between two topics mean (`/trace-model`). */
  readonly model: TraceModelService;

  constructor(private readonly storage: Storage) {
    this.model = new TraceModelService(storage);
  }

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
      const scheme = UNSAFE_NODE_ID_SCHEMES.find((s) => node.node_id.toLowerCase().startsWith(s));
      if (scheme) {
        throw unprocessable([
          validationItem(
            ['body', end, 'node_id'],
            `A node id may not start with the URL scheme "${scheme}"; give the node's own id in the system it lives in.`,
            'value_error',
          ),
        ]);
      }
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
      source_version: null,
      target_version: null,
    };
    // A new trace stands for its record ends as they are: not suspect.
    await inTransaction(this.db, async (trx) => {
      Object.assign(row, await endVersions(trx, principal.tenantId, row));
      await insertTrace(trx, row, changeActor(principal, null, row.created_at));
    });
    return toTrace(row, false);
  }

  /** Reviews a trace (it is no longer suspect); the comment goes to its history. */
  async review(principal: Principal, id: string, comment: string | undefined): Promise<Trace> {
    const reason = comment?.trim() || null;
    const reviewed = await inTransaction(this.db, (trx) =>
      reviewTrace(trx, principal.tenantId, id, reason, changeActor(principal, reason)),
    );
    if (!reviewed) throw notFound(`Trace ${id} was not found.`);
    return toTrace(reviewed, false);
  }

  /** A trace's history, oldest first; readable after the trace was deleted. */
  async history(principal: Principal, id: string): Promise<TraceEvent[]> {
    const rows = await this.db
      .selectFrom('trace_events as e')
      .leftJoin('users as u', 'u.id', 'e.actor_user_id')
      .selectAll('e')
      .select('u.email as user_email')
      .where('e.tenant_id', '=', principal.tenantId)
      .where('e.trace_id', '=', id)
      .orderBy('e.at')
      .orderBy('e.id')
      .execute();
    if (rows.length === 0) throw notFound(`Trace ${id} was not found, and there is no history of it.`);
    return rows.map((row) => ({
      trace_id: row.trace_id,
      action: row.action as TraceEventAction,
      source_version: row.source_version,
      target_version: row.target_version,
      at: row.at,
      user_id: row.actor_user_id,
      user_email: row.user_email,
      key_id: row.actor_key_id,
      via: row.via as TraceEvent['via'],
      reason: row.reason,
    }));
  }

  /**
   * Records and knowledge topics are ours to check, in the caller's tenant only. Other node kinds
   * live in other systems: their ids are opaque (format checked by the schema), never looked up
   * here, so another tenant's record id typed as `Document` stays a Document id that leads nowhere,
   * and whether it is accepted never depends on another tenant's data.
   */
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
    const [trace] = await tracesWithStatus(this.db, principal.tenantId, [row]);
    return trace!;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const deleted = await inTransaction(this.db, (trx) =>
      deleteTrace(trx, principal.tenantId, id, changeActor(principal)),
    );
    if (!deleted) throw notFound(`Trace ${id} was not found.`);
  }

  /**
   * The ETag of a batch answer: the request and how often the tenant's traces (migrations/
   * 005_trace_tags.ts) and records changed, read before the answer is, without walking a trace. Any
   * trace created, deleted, reviewed or made suspect, and any record changed in the tenant (answers
   * show the versions of records), change it, also those the batch does not reach.
   */
  async batchTag(principal: Principal, request: BatchRetrieveRequest): Promise<string> {
    const traces = await traceChangeCount(this.db, principal.tenantId);
    const records = await recordChangeCount(this.db, principal.tenantId);
    return entityTag([TRACE_BATCH_FORMAT, principal.tenantId, request, traces, records]);
  }

  /**
   * For each requested node, the nodes reachable within `n_hops` traces (either direction), with the
   * edges walked and their depth, as one object (for in-process callers). Bounded by
   * TRACE_BATCH_MAX_EDGES; edge objects are shared between the results that reach them.
   */
  async batchList(
    principal: Principal,
    request: BatchRetrieveRequest,
    options: { asOf?: string } = {},
  ): Promise<BatchRetrieveResponse> {
    const answer = await this.batchAnswer(principal, request, options.asOf);
    const results: Record<string, ConnectedNodesResponse> = {};
    for (const walk of answer.walks) results[walk.origin.node_id] = answer.resultOf(walk);
    return { results, resolved_results: null };
  }

  /**
   * The same answer as JSON text in chunks of about BATCH_CHUNK_CHARS, for the HTTP route. The walk
   * runs first, so a refusal (422) comes before any byte; the results are serialised a few at a
   * time, with the event loop free between chunks (a socket write per result would cost a syscall
   * per result).
   */
  async batchListJson(
    principal: Principal,
    request: BatchRetrieveRequest,
    options: { asOf?: string } = {},
  ): Promise<AsyncIterable<string>> {
    const answer = await this.batchAnswer(principal, request, options.asOf);
    return (async function* () {
      let chunk = '{"results":{';
      let first = true;
      for (const walk of answer.walks) {
        chunk += `${first ? '' : ','}${JSON.stringify(walk.origin.node_id)}:${JSON.stringify(answer.resultOf(walk))}`;
        first = false;
        if (chunk.length >= BATCH_CHUNK_CHARS) {
          yield chunk;
          chunk = '';
          await yieldToEventLoop();
        }
      }
      yield `${chunk}},"resolved_results":null}`;
    })();
  }

  /** The walk over the traces as they are, or as they were at `asOf` (with the records as they were). */
  private async batchAnswer(principal: Principal, request: BatchRetrieveRequest, asOf?: string) {
    const hops = request.n_hops ?? 1;
    const origins = [...new Map(request.nodes.map((n) => [n.node_id, n])).values()];
    const walks = await walkBatch(origins, hops, TRACE_BATCH_MAX_EDGES, (ids, limit) =>
      this.tracesTouching(principal.tenantId, ids, limit, asOf),
    );

    const recordIds = new Set<string>();
    for (const walk of walks) {
      if (walk.origin.node_type === 'Record') recordIds.add(walk.origin.node_id);
      for (const reached of walk.reached.values()) if (reached.type === 'Record') recordIds.add(reached.id);
    }
    const nodeFacts = await this.recordFacts(principal.tenantId, [...recordIds], asOf);
    const outdated = (row: TraceRow) => isSuspect(row, (id) => nodeFacts.get(id)?.version);
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

    // One edge object per trace and depth, shared by every result that walked it at that depth.
    const sharedEdges = new Map<string, TraceEdge>();
    const edgeOf = (row: TraceRow, depth: number): TraceEdge => {
      const key = `${row.id}:${depth}`;
      let edge = sharedEdges.get(key);
      if (!edge) {
        edge = {
          _id: row.id,
          source: row.source_id,
          target: row.target_id,
          relation_type: [row.relation_type as RelationType],
          source_node: { node_id: row.source_id, type: row.source_type as NodeType },
          target_node: { node_id: row.target_id, type: row.target_type as NodeType },
          tenant_metadata: tenant,
          audit_info: auditOf(row),
          outdated: outdated(row),
          trace_metadata: { origin: 'manual' },
          depth,
        };
        sharedEdges.set(key, edge);
      }
      return edge;
    };
    const byDepthThenId = (a: { depth: number; id: string }, b: { depth: number; id: string }) =>
      a.depth - b.depth || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

    const resultOf = (walk: Walk): ConnectedNodesResponse => {
      const walked = [...walk.edges.values()]
        .map(({ row, depth }) => ({ row, depth, id: row.id }))
        .sort(byDepthThenId);
      const firstEdge = walked[0]?.row;
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
      const reached = [...walk.reached.values()]
        .map((r) => ({ ...r, order: r.via.id }))
        .sort((a, b) => byDepthThenId({ depth: a.depth, id: a.order }, { depth: b.depth, id: b.order }));
      for (const node of reached) {
        const audit = auditOf(node.via);
        (targetNodeMap[node.type] ??= []).push({
          trace_id: node.via.id,
          node: graphNode(node.id, node.type, audit),
          relation_type: node.via.relation_type as RelationType,
          tenant_metadata: tenant,
          audit_info: audit,
          outdated: outdated(node.via),
          trace_metadata: { origin: 'manual' },
          hopsAwayFromSource: node.depth,
        });
      }
      return {
        source_node: graphNode(walk.origin.node_id, walk.origin.node_type, originAudit),
        target_node_map: targetNodeMap,
        edges: walked.map(({ row, depth }) => edgeOf(row, depth)),
      };
    };
    return { walks, resultOf };
  }

  /**
   * The traces touching any of `ids`, at most `limit` (the caller refuses when it gets that many).
   * One query per end, each on its own index: with `source_id IN … OR target_id IN …` SQLite
   * would read every trace of the tenant.
   */
  private async tracesTouching(
    tenantId: string,
    ids: string[],
    limit: number,
    asOf?: string,
  ): Promise<TraceRow[]> {
    const rows = new Map<string, TraceRow>();
    for (let i = 0; i < ids.length && rows.size < limit; i += IN_CHUNK) {
      const chunk = ids.slice(i, i + IN_CHUNK);
      for (const end of TRACE_ENDS) {
        const found =
          asOf === undefined
            ? await this.db
                .selectFrom('traces')
                .selectAll()
                .where('tenant_id', '=', tenantId)
                .where(end, 'in', chunk)
                .orderBy('id')
                .limit(limit)
                .execute()
            : await this.tracesTouchingAsOf(tenantId, end, chunk, limit, asOf);
        for (const row of found) rows.set(row.id, row);
      }
    }
    return [...rows.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, limit);
  }

  /**
   * The traces that existed at `asOf`: created by then, and not deleted by then, standing for the
   * record versions of their last review by then (or of their creation).
   */
  private async tracesTouchingAsOf(
    tenantId: string,
    end: TraceEnd,
    ids: string[],
    limit: number,
    asOf: string,
  ): Promise<TraceRow[]> {
    const rows = await this.db
      .selectFrom('trace_events as e')
      .select([
        'e.trace_id as id',
        'e.tenant_id',
        'e.source_id',
        'e.source_type',
        'e.target_id',
        'e.target_type',
        'e.relation_type',
        'e.created_by',
        'e.created_at',
        'e.source_version',
        'e.target_version',
      ])
      .where('e.tenant_id', '=', tenantId)
      .where('e.action', '=', 'created')
      .where(sql<boolean>`${this.storage.syntax.unindexed('e.at')} <= ${asOf}`)
      .where(`e.${end}`, 'in', ids)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('trace_events as d')
              .select('d.id')
              .whereRef('d.trace_id', '=', 'e.trace_id')
              .where('d.action', '=', 'deleted')
              .where(sql<boolean>`${this.storage.syntax.unindexed('d.at')} <= ${asOf}`),
          ),
        ),
      )
      .orderBy('e.trace_id')
      .limit(limit)
      .execute();
    if (rows.length === 0) return rows;
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (let i = 0; i < rows.length; i += IN_CHUNK) {
      const reviews = await this.db
        .selectFrom('trace_events as r')
        .select(['r.trace_id', 'r.source_version', 'r.target_version'])
        .where('r.tenant_id', '=', tenantId)
        .where('r.action', '=', 'reviewed')
        .where(
          'r.trace_id',
          'in',
          rows.slice(i, i + IN_CHUNK).map((row) => row.id),
        )
        .where(sql<boolean>`${this.storage.syntax.unindexed('r.at')} <= ${asOf}`)
        .orderBy('r.at')
        .orderBy('r.id')
        .execute();
      // In time order: the last review by then wins.
      for (const review of reviews) {
        const row = byId.get(review.trace_id)!;
        row.source_version = review.source_version;
        row.target_version = review.target_version;
      }
    }
    return rows;
  }

  private async recordFacts(tenantId: string, ids: string[], asOf?: string) {
    const facts = new Map<string, { version: string; audit: AuditInfo }>();
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += IN_CHUNK) {
      const chunk = unique.slice(i, i + IN_CHUNK);
      const rows =
        asOf === undefined
          ? await this.db
              .selectFrom('records')
              .select([
                'id',
                'version',
                'created_by',
                'created_at',
                'updated_by',
                'updated_at',
                'last_action',
              ])
              .where('tenant_id', '=', tenantId)
              .where('id', 'in', chunk)
              .execute()
          : await recordsAsOfQuery(this.storage, tenantId, { ids: chunk }, asOf).execute();
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
