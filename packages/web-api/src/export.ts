import { Type, type Static } from '@sinclair/typebox';
import { AsOf } from '@rxs/contract';
import type { DocumentFormat } from '@rxs/exchange';
import { ExportFormatSchema, OneOf } from './common.js';

/** Documents for people (`rxs export --format docx|pdf`): a baseline's, or the topics as they are now. */
export const DOCUMENT_DOWNLOAD_FORMATS = ['docx', 'pdf'] as const satisfies readonly DocumentFormat[];
export type DocumentDownloadFormat = (typeof DOCUMENT_DOWNLOAD_FORMATS)[number];
export const DocumentFormatSchema = OneOf(DOCUMENT_DOWNLOAD_FORMATS);

/** Topics one export or traceability report takes at most. */
export const MAX_EXPORT_TOPICS = 50;

/** The longest `revisions` text: room for MAX_EXPORT_TOPICS ids with their commas and spaces. */
export const MAX_REVISIONS_TEXT = 25 * MAX_EXPORT_TOPICS;

/** Largest mapping file the export form takes (a real one is a few KB). */
export const MAX_MAPPING_CHARS = 256 * 1024;

/** The topics' revision ids, comma separated, in the order the file lists them. */
export const RevisionList = Type.String({ minLength: 1, maxLength: MAX_REVISIONS_TEXT });

/** The text of a mapping file (docs/mapping.md), from the export or traceability form. */
export const MappingText = Type.String({ maxLength: MAX_MAPPING_CHARS });

const exportFields = {
  revisions: RevisionList,
  /** A document format always carries the traces (and needs traces:read) and shows values by their labels. */
  format: Type.Union([ExportFormatSchema, DocumentFormatSchema]),
  traces: Type.Boolean({ default: false }),
  labels: Type.Boolean({ default: false }),
  /**
   * With traces: name links by the roles of the tenant's trace model where one matches (`role`,
   * the default), or by relation type alone (`relation-type`); the relation type stays either way.
   */
  links_by: Type.Optional(Type.Union([Type.Literal('role'), Type.Literal('relation-type')])),
  /** Export what was there at this moment (a baseline's), exactly as an export taken then. */
  as_of: Type.Optional(AsOf),
};

/** `GET /api/export`: downloads the topics in a format. */
export const ExportQuery = Type.Object(exportFields);
export type ExportQuery = Static<typeof ExportQuery>;

/** `POST /api/export`: the same as the query, with a mapping file's text. */
export const ExportBody = Type.Object({ ...exportFields, mapping: Type.Optional(MappingText) });
export type ExportBody = Static<typeof ExportBody>;

/** `GET /api/baselines/{id}/document`: the baseline as a document, with its signatures and changes. */
export const BaselineDocumentQuery = Type.Object({ format: DocumentFormatSchema });
export type BaselineDocumentQuery = Static<typeof BaselineDocumentQuery>;
