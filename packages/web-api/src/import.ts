import { Type, type Static } from '@sinclair/typebox';
import { ImportReportSchema, OneOf } from './common.js';

/** The files the import page takes (JSON, JSON Lines and ReqIF import with `rxs import`). */
export const UPLOAD_FORMATS = ['csv', 'xlsx'] as const;
export type UploadFormat = (typeof UPLOAD_FORMATS)[number];

/** Longest `renames` text. */
export const MAX_RENAMES_TEXT = 64 * 1024;
/** A reason travels in the query string: shorter than a record's (MAX_CHANGE_REASON), so any text fits a URL. */
export const MAX_IMPORT_REASON = 500;

/** `POST /api/import/check` and `POST /api/import`: the file is the body, what to do with it the query. */
export const ImportQuery = Type.Object({
  revision: Type.String({ pattern: '^[0-9a-f]{24}$' }),
  /** The file's name, for its format and for the report. */
  name: Type.String({ minLength: 1, maxLength: 255 }),
  format: Type.Optional(OneOf(UPLOAD_FORMATS)),
  sheet: Type.Optional(Type.String({ maxLength: 255 })),
  continue_on_error: Type.Boolean({ default: false }),
  new_records: Type.Boolean({ default: false }),
  /**
   * The column whose value is each row's identity in its source (kept as the record's source id);
   * default: the `source_id` column, if the file has one.
   */
  key_column: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  /** Delete the topic's records whose source id the file no longer has, once every row is written. */
  remove_missing: Type.Boolean({ default: false }),
  /** `{"file column": "field name or form key", "left out": ""}` as JSON. */
  renames: Type.Optional(Type.String({ maxLength: MAX_RENAMES_TEXT })),
  /** Why, kept in the history of each record written. */
  reason: Type.Optional(Type.String({ maxLength: MAX_IMPORT_REASON })),
});
export type ImportQuery = Static<typeof ImportQuery>;

/** `POST /api/import/check` and `POST /api/import`: the file, the topic's fields and the report. */
export const ImportView = Type.Object({
  file: Type.Object({ name: Type.String(), size: Type.Integer(), format: OneOf(UPLOAD_FORMATS) }),
  /** The topic's fields (semantic name and form key), to map a column of the file to one. */
  fields: Type.Array(Type.Object({ name: Type.String(), key: Type.String() })),
  report: ImportReportSchema,
});
export type ImportView = Static<typeof ImportView>;
