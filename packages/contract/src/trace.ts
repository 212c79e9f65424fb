import { Type, type Static } from '@sinclair/typebox';
import { AuditInfo, Nullable, ObjectId, TenantMetadata, Dictionary } from './common.js';
import { ChangeAuthor, MAX_CHANGE_REASON } from './history.js';
import { RELATION_TYPES, TRACE_BATCH_MAX_NODES, TRACE_MAX_HOPS } from './plain.js';

const literals = <const T extends readonly string[]>(values: T) =>
  Type.Union(values.map((v) => Type.Literal(v)) as never) as ReturnType<typeof Type.Union>;

export const NODE_TYPES = [
  'SOP',
  'WorkInstruction',
  'Form',
  'Product',
  'ProductFamily',
  'KnowledgeUnit',
  'KnowledgeTopic',
  'KnowledgeUnitSchema',
  'KnowledgeTopicSchema',
  'Document',
  'Template',
  'Record',
  'File',
  'Submission',
  'ExternalFile',
  'GlobalElement',
  'SubmissionTemplate',
] as const;
export type NodeType = (typeof NODE_TYPES)[number];
export const NodeTypeSchema = Type.Unsafe<NodeType>(literals(NODE_TYPES));

export { RELATION_TYPES };
export type RelationType = (typeof RELATION_TYPES)[number];
export const RelationTypeSchema = Type.Unsafe<RelationType>(literals(RELATION_TYPES));

/**
 * The format of a trace end's id: 1-128 characters of letters, digits and `.` `_` `:` `-`, starting
 * with a letter or a digit. Ends that live in RXS (Record, KnowledgeTopic) must also exist in the
 * caller's tenant; ends that live in other systems (Document, ...) are checked for this format only,
 * and may not start with a URL scheme that a browser runs or loads (see UNSAFE_NODE_ID_SCHEMES).
 */
export const NODE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$';
export const NODE_ID_MAX_LENGTH = 128;
/** Prefixes an external node id may not start with (case-insensitive): they would be live links. */
export const UNSAFE_NODE_ID_SCHEMES = [
  'javascript:',
  'vbscript:',
  'data:',
  'file:',
  'blob:',
  'about:',
  'filesystem:',
  'view-source:',
] as const;

export const NodeRef = Type.Object(
  {
    node_id: Type.String({
      minLength: 1,
      maxLength: NODE_ID_MAX_LENGTH,
      pattern: NODE_ID_PATTERN,
      description:
        '1-128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit; no URL scheme such as javascript:',
    }),
    node_type: NodeTypeSchema,
  },
  { additionalProperties: false },
);
export type NodeRef = Static<typeof NodeRef>;

/** `POST /traces/` body. */
export const TraceCreate = Type.Object(
  { source: NodeRef, target: NodeRef, relation_type: RelationTypeSchema },
  { additionalProperties: false },
);
export type TraceCreate = Static<typeof TraceCreate>;

/** A stored trace, as `POST /traces/` answers it. */
export const Trace = Type.Object({
  _id: ObjectId,
  source: NodeRef,
  target: NodeRef,
  relation_type: RelationTypeSchema,
  tenant_metadata: TenantMetadata,
  audit_info: AuditInfo,
  /**
   * RXS: suspect, as `outdated` of the batch answers: a record at either end changed since the trace
   * was made or last reviewed (`POST /traces/{id}/review`). Absent from servers without reviews.
   */
  outdated: Type.Optional(Type.Boolean()),
});
export type Trace = Static<typeof Trace>;

/** RXS: `POST /traces/{id}/review`: the links were checked against their records as they are now. */
export const TraceReview = Type.Object(
  {
    comment: Type.Optional(
      Type.String({
        maxLength: MAX_CHANGE_REASON,
        description: "Why the link still holds; kept in the trace's history",
      }),
    ),
  },
  { additionalProperties: false },
);
export type TraceReview = Static<typeof TraceReview>;

export const TRACE_EVENT_ACTIONS = ['created', 'suspect', 'reviewed', 'deleted'] as const;
export type TraceEventAction = (typeof TRACE_EVENT_ACTIONS)[number];

/**
 * RXS: one event of a trace's history (`GET /traces/{id}/history`): made, made suspect by a change of
 * a record end (`reason`: that change's reason), reviewed (`reason`: the comment), deleted. The
 * versions are those of the record ends the trace stood for after the event.
 */
export const TraceEvent = Type.Composite([
  Type.Object({
    trace_id: ObjectId,
    action: Type.Union(TRACE_EVENT_ACTIONS.map((a) => Type.Literal(a))),
    source_version: Nullable(Type.String()),
    target_version: Nullable(Type.String()),
  }),
  ChangeAuthor,
]);
export type TraceEvent = Static<typeof TraceEvent>;

/**
 * RXS: one page of `GET /traces/changes`, the traces created, deleted, made suspect or reviewed in
 * the tenant since a cursor: a trace that is there is listed whole (in `traces`), a deleted one by
 * its id (in `removed`).
 */
export const TraceChangesPage = Type.Object({
  /** Pass as `since` to continue; opaque, bound to the tenant. */
  cursor: Type.String(),
  /** True when more changes wait beyond this page: ask again with `cursor` at once. */
  more: Type.Boolean(),
  /** Whether this page holds every trace of the tenant (no `since`). */
  complete: Type.Boolean(),
  traces: Type.Array(Trace),
  removed: Type.Array(ObjectId),
});
export type TraceChangesPage = Static<typeof TraceChangesPage>;

export {
  TRACE_BATCH_MAX_EDGES,
  TRACE_BATCH_MAX_NODES,
  TRACE_BATCH_TOO_LARGE,
  TRACE_MAX_HOPS,
} from './plain.js';

export const BatchRetrieveNode = Type.Object({
  node_id: Type.String({ minLength: 1, maxLength: NODE_ID_MAX_LENGTH }),
  node_type: NodeTypeSchema,
  /** Required by the reference schema; accepted and ignored (nodes are not versioned here). */
  version: Type.Optional(Type.String({ maxLength: 100 })),
});
export type BatchRetrieveNode = Static<typeof BatchRetrieveNode>;

export const BatchRetrieveMode = Type.Union([
  Type.Literal('legacy_connected_nodes'),
  Type.Literal('resolved'),
]);

export const BatchRetrieveRequest = Type.Object(
  {
    nodes: Type.Array(BatchRetrieveNode, { maxItems: TRACE_BATCH_MAX_NODES }),
    n_hops: Type.Optional(Type.Integer({ minimum: 1, maximum: TRACE_MAX_HOPS, default: 1 })),
    mode: Type.Optional(Nullable(BatchRetrieveMode)),
    /** RXS: walk the traces as they were at this moment (ISO 8601 date-time). */
    as_of: Type.Optional(Type.String({ maxLength: 40 })),
  },
  { additionalProperties: false },
);
export type BatchRetrieveRequest = Static<typeof BatchRetrieveRequest>;

/** A node of the trace graph (reference `Node`). */
export const GraphNode = Type.Object({
  _id: Nullable(Type.String()),
  type: NodeTypeSchema,
  node_id: Type.String(),
  version: Nullable(Type.String()),
  tenant_metadata: TenantMetadata,
  audit_info: AuditInfo,
  deleted: Type.Boolean(),
});
export type GraphNode = Static<typeof GraphNode>;

export const ConnectedNode = Type.Object({
  trace_id: Type.String(),
  node: GraphNode,
  relation_type: RelationTypeSchema,
  tenant_metadata: TenantMetadata,
  audit_info: AuditInfo,
  outdated: Type.Boolean(),
  trace_metadata: Nullable(Type.Object({ origin: Type.String() })),
  hopsAwayFromSource: Nullable(Type.Integer()),
});
export type ConnectedNode = Static<typeof ConnectedNode>;

export const EdgeEnd = Type.Object({ node_id: Type.String(), type: NodeTypeSchema });

/** An edge of the answer: relation_type is an array, as in the reference `EdgeWithDepth`. */
export const TraceEdge = Type.Object({
  _id: Type.String(),
  source: Type.String(),
  target: Type.String(),
  relation_type: Type.Array(RelationTypeSchema),
  source_node: EdgeEnd,
  target_node: EdgeEnd,
  tenant_metadata: TenantMetadata,
  audit_info: AuditInfo,
  outdated: Type.Boolean(),
  trace_metadata: Nullable(Type.Object({ origin: Type.String() })),
  depth: Type.Integer(),
});
export type TraceEdge = Static<typeof TraceEdge>;

export const ConnectedNodesResponse = Type.Object({
  source_node: GraphNode,
  target_node_map: Dictionary(Type.Array(ConnectedNode)),
  edges: Type.Array(TraceEdge),
});
export type ConnectedNodesResponse = Static<typeof ConnectedNodesResponse>;

export const BatchRetrieveResponse = Type.Object({
  results: Dictionary(ConnectedNodesResponse),
  resolved_results: Nullable(Dictionary(Type.Array(Type.Unknown()))),
});
export type BatchRetrieveResponse = Static<typeof BatchRetrieveResponse>;

export { Nullable };
