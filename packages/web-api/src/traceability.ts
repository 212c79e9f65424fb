import { Type, type Static } from '@sinclair/typebox';
import { MAX_TRACE_ROLES, Nullable, ObjectId, TRACE_ROLE_ID_PATTERN } from '@rxs/contract';
import { CoverageReportSchema, OneOf } from './common.js';
import { MAX_EXPORT_TOPICS, MappingText, RevisionList } from './export.js';

/** The formats `GET /api/traceability/report` downloads. */
export const REPORT_FORMATS = ['html', 'xlsx', 'md', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** Trace-model role ids as a comma separated list, in the order they are wanted. */
export const RoleList = Type.String({ minLength: 1, maxLength: MAX_TRACE_ROLES * 65 });

/**
 * `GET /api/traceability`: the coverage of the topics, in this order (each role of the tenant's
 * trace model between two of them a rule, then consecutive topics without one); of the roles named
 * (their topics in the order of the V, each role a rule); with neither, of the whole model.
 */
export const CoverageQuery = Type.Object({
  revisions: Type.Optional(RevisionList),
  roles: Type.Optional(RoleList),
});
export type CoverageQuery = Static<typeof CoverageQuery>;

/** `POST /api/traceability`: with a mapping file, whose links between the topics are the rules. */
export const CoverageBody = Type.Object({
  revisions: Type.Optional(RevisionList),
  roles: Type.Optional(RoleList),
  mapping: Type.Optional(MappingText),
});
export type CoverageBody = Static<typeof CoverageBody>;

const reportFormat = OneOf(REPORT_FORMATS);

/** `GET /api/traceability/report`: the coverage report as a file, of what `GET /api/traceability` shows. */
export const ReportQuery = Type.Object({
  revisions: Type.Optional(RevisionList),
  roles: Type.Optional(RoleList),
  format: reportFormat,
});
export type ReportQuery = Static<typeof ReportQuery>;

/** `POST /api/traceability/report`: the same with a mapping file. */
export const ReportBody = Type.Object({
  revisions: Type.Optional(RevisionList),
  roles: Type.Optional(RoleList),
  format: reportFormat,
  mapping: Type.Optional(MappingText),
});
export type ReportBody = Static<typeof ReportBody>;

/** A suspect link of the traceability page: its trace id (for the review) and both ends. */
export const SuspectLinkView = Type.Object({
  traceId: Type.String(),
  source: Type.Object({ id: Type.String(), readableId: Type.String() }),
  target: Type.Object({ id: Type.String(), readableId: Type.String() }),
  relationTypes: Type.Array(Type.String()),
});
export type SuspectLinkView = Static<typeof SuspectLinkView>;

/** A record of the matrix: its id (for its page and for new traces) and its title, if its form has one. */
export const MatrixRecord = Type.Object({ id: Type.String(), title: Nullable(Type.String()) });
export type MatrixRecord = Static<typeof MatrixRecord>;

/**
 * `GET /api/traceability`: coverage per rule (as `rxs trace-report --format json`) and the suspect
 * links; per rule (same index) the id of the trace-model role it counts, null for a rule of no role
 * (consecutive topics, a mapping file's link); the records of the report's topics by topic revision
 * id and readable id, so the matrix names and links them.
 */
export const TraceabilityView = Type.Object({
  report: CoverageReportSchema,
  suspect: Type.Array(SuspectLinkView),
  ruleRoles: Type.Array(Nullable(Type.String())),
  records: Type.Record(Type.String(), Type.Record(Type.String(), MatrixRecord)),
  generatedAt: Type.String(),
});
export type TraceabilityView = Static<typeof TraceabilityView>;

/** Longest name of a saved view. */
export const MAX_VIEW_NAME = 100;
/** Most saved views of a tenant: each is a line of the page's list. */
export const MAX_SAVED_VIEWS = 200;

/** `PUT`/`DELETE /api/traceability/views/:name`: the view's name (unique in the tenant). */
export const SavedViewParams = Type.Object({
  name: Type.String({ minLength: 1, maxLength: MAX_VIEW_NAME, pattern: '\\S' }),
});
export type SavedViewParams = Static<typeof SavedViewParams>;

const roleIds = Type.Array(Type.String({ pattern: TRACE_ROLE_ID_PATTERN, maxLength: 64 }), {
  minItems: 1,
  maxItems: MAX_TRACE_ROLES,
  uniqueItems: true,
});
const revisionIds = Type.Array(ObjectId, {
  minItems: 1,
  maxItems: MAX_EXPORT_TOPICS,
  uniqueItems: true,
});

/**
 * `PUT /api/traceability/views/:name`: what a view shows, either trace-model roles (a subset of the
 * model, in the order wanted) or topic revisions (in the order of the V): exactly one of the two
 * (else 422).
 */
export const SavedViewPut = Type.Object(
  { roles: Type.Optional(roleIds), revisions: Type.Optional(revisionIds) },
  { additionalProperties: false },
);
export type SavedViewPut = Static<typeof SavedViewPut>;

/** A saved view of the traceability page, as listed. */
export const SavedView = Type.Object({
  name: Type.String(),
  roles: Nullable(Type.Array(Type.String())),
  revisions: Nullable(Type.Array(Type.String())),
  updatedAt: Type.String(),
  updatedBy: Type.String(),
});
export type SavedView = Static<typeof SavedView>;
