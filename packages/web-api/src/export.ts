import { Type, type Static } from '@sinclair/typebox';
import { AsOf } from '@rxs/contract';
import { ExportFormatSchema } from './common.js';

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
  format: ExportFormatSchema,
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
