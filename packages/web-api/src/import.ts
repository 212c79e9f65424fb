import { Type, type Static } from '@sinclair/typebox';
import type { OutlineImportReport, RelationImportReport } from '@rxs/exchange';
import { ImportReportSchema, OneOf } from './common.js';

/** The files the import page takes: CSV, XLSX, ReqIF and ReqIF archives (JSON and JSON Lines import with `rxs import`). */
export const UPLOAD_FORMATS = ['csv', 'xlsx', 'reqif'] as const;
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
  /** XLSX: the sheet to import (default: the topic's sheet of an export, else the only one). */
  sheet: Type.Optional(Type.String({ maxLength: 255 })),
  /** ReqIF: the SPEC-OBJECT-TYPE to import, by LONG-NAME (default: the only one, else the topic's). */
  spec_type: Type.Optional(Type.String({ maxLength: 1000 })),
  /** ReqIF archive (.reqifz): the .reqif file in it to import, by its path (default: its only one). */
  entry: Type.Optional(Type.String({ maxLength: 1000 })),
  continue_on_error: Type.Boolean({ default: false }),
  new_records: Type.Boolean({ default: false }),
  /**
   * The column whose value is each row's identity in its source (kept as the record's source id);
   * default: the `source_id` column, if the file has one (ReqIF: the spec object's IDENTIFIER).
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

/** What became of a ReqIF file's SPEC-RELATIONs: the sdk's report, as `rxs import --json` has it. */
export const RelationImportReportSchema = Type.Unsafe<RelationImportReport>(Type.Object({}));
export type { RelationImportReport };

/** What became of a ReqIF file's SPEC-HIERARCHY: the sdk's report, as `rxs import --json` has it. */
export const OutlineImportReportSchema = Type.Unsafe<OutlineImportReport>(Type.Object({}));
export type { OutlineImportReport };

/** `POST /api/import/check` and `POST /api/import`: the file, the topic's fields and the report. */
export const ImportView = Type.Object({
  file: Type.Object({ name: Type.String(), size: Type.Integer(), format: OneOf(UPLOAD_FORMATS) }),
  /** The topic's fields (semantic name and form key), to map a column of the file to one. */
  fields: Type.Array(Type.Object({ name: Type.String(), key: Type.String() })),
  report: ImportReportSchema,
  /**
   * ReqIF: the SPEC-RELATIONs between the topic's records as traces, once the spec objects are in
   * the topic (a check counts those to records it would create as skipped).
   */
  relations: Type.Optional(RelationImportReportSchema),
  /** ReqIF: the SPECIFICATION hierarchy placed in the topic's document outline (a check places none). */
  outline: Type.Optional(OutlineImportReportSchema),
});
export type ImportView = Static<typeof ImportView>;

/** The query parameters that choose one of several parts of a file: a sheet, a spec object type, an archive's .reqif file. */
export const IMPORT_CHOICES = ['sheet', 'spec_type', 'entry'] as const;
export type ImportChoiceOption = (typeof IMPORT_CHOICES)[number];

/** The parts of a file one of which the import needs to be told, as the file's reader named them. */
export const ImportChoice = Type.Object({
  option: OneOf(IMPORT_CHOICES),
  /** The names to choose among, as the file has them. */
  names: Type.Array(Type.String()),
  /** How many more the file holds than `names` (too many to list, or names too long to give whole). */
  more: Type.Integer({ minimum: 0 }),
});
export type ImportChoice = Static<typeof ImportChoice>;

/**
 * The 422 of `POST /api/import/check` (and `/api/import`) for a file that holds several of what
 * one import takes: the reader's sentence, and the names to choose among.
 */
export const ImportChoiceAnswer = Type.Object({ detail: Type.String(), choose: ImportChoice });
export type ImportChoiceAnswer = Static<typeof ImportChoiceAnswer>;
