import { Type, type Static } from '@sinclair/typebox';
import { CoverageReportSchema, OneOf } from './common.js';
import { MappingText, RevisionList } from './export.js';

/** The formats `GET /api/traceability/report` downloads. */
export const REPORT_FORMATS = ['html', 'xlsx', 'md', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** `GET /api/traceability`: the coverage of the topics, in this order. */
export const CoverageQuery = Type.Object({ revisions: RevisionList });
export type CoverageQuery = Static<typeof CoverageQuery>;

/** `POST /api/traceability`: with a mapping file, whose links between the topics are the rules. */
export const CoverageBody = Type.Object({ revisions: RevisionList, mapping: Type.Optional(MappingText) });
export type CoverageBody = Static<typeof CoverageBody>;

const reportFormat = OneOf(REPORT_FORMATS);

/** `GET /api/traceability/report`: the coverage report as a file. */
export const ReportQuery = Type.Object({ revisions: RevisionList, format: reportFormat });
export type ReportQuery = Static<typeof ReportQuery>;

/** `POST /api/traceability/report`: the same with a mapping file. */
export const ReportBody = Type.Object({
  revisions: RevisionList,
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

/** `GET /api/traceability`: coverage per rule (as `rxs trace-report --format json`) and the suspect links. */
export const TraceabilityView = Type.Object({
  report: CoverageReportSchema,
  suspect: Type.Array(SuspectLinkView),
  generatedAt: Type.String(),
});
export type TraceabilityView = Static<typeof TraceabilityView>;
