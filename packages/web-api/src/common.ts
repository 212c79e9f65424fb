import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  APPROVAL_MEANINGS,
  Nullable,
  CHANGE_CHANNELS,
  PERMISSIONS,
  RECORD_VERSION_ACTIONS,
  ROLES,
  ValidationErrorItem,
} from '@rxs/contract';
import { EXPORT_FORMATS } from '@rxs/exchange/export';
import type { CoverageReport, ImportReport, NameSource } from '@rxs/exchange';

// The service contract's shapes, and the exchange's reports.
export type {
  Approval,
  ApprovalMeaning,
  ChangeChannel,
  FormSchema,
  KnowledgeTopicRevision,
  KnowledgeTopicType,
  Permission,
  RecordVersionAction,
  RelationType,
  Role,
  ServiceRecord,
  ValidationErrorItem,
} from '@rxs/contract';
export type { CoverageReport, ExportFormat, ImportReport, NameSource } from '@rxs/exchange';

/** One of `values`, typed as their union. */
export const OneOf = <const T extends string>(values: readonly T[]) =>
  Type.Union(values.map((value) => Type.Literal(value)));

export const RoleSchema = OneOf(ROLES);
export const PermissionSchema = OneOf(PERMISSIONS);
export const ExportFormatSchema = OneOf(EXPORT_FORMATS);
export const ApprovalMeaningSchema = OneOf(APPROVAL_MEANINGS);
export const ChangeChannelSchema = OneOf(CHANGE_CHANNELS);
export const RecordVersionActionSchema = OneOf(RECORD_VERSION_ACTIONS);

/** Where a column's semantic name came from (the sdk's `NameSource`). */
export const NameSourceSchema = Type.Unsafe<NameSource>(Type.String());

/** The sdk's coverage report, as `rxs trace-report --format json` writes it; its type is the sdk's. */
export const CoverageReportSchema = Type.Unsafe<CoverageReport>(Type.Object({}));

/** The sdk's import report, as `rxs import` makes it; its type is the sdk's. */
export const ImportReportSchema = Type.Unsafe<ImportReport>(Type.Object({}));

/** Every error body: a sentence, or for 422 one item per problem. */
export const ApiErrorBody = Type.Object({
  detail: Type.Union([Type.String(), Type.Array(ValidationErrorItem)]),
});
export type ApiErrorBody = Static<typeof ApiErrorBody>;

/** A page of a keyset listing: its items, and `next` to pass as `after` for the next page (null at the end). */
export const KeysetPage = <Item extends TSchema>(item: Item) =>
  Type.Object({ items: Type.Array(item), next: Nullable(Type.String()) });
