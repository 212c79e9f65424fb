/**
 * Values of the contract that need no schema library: the batch listing's limits and the id
 * check, and JSON comparison. The client, the exporter and sync import them from here, so they load without TypeBox (a
 * quarter of a second of start-up for every `rxs` command).
 */

/** Every id of the service: 24 lowercase hex characters (MongoDB ObjectId style). */
export const OBJECT_ID_PATTERN = '^[0-9a-f]{24}$';

const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && OBJECT_ID.test(value);
}

/** Items one `POST /records/bulk` may hold. */
export const MAX_BULK_RECORDS = 1000;

/** Largest number of nodes one `POST /traces/batch/list` may ask for; beyond it, 422. */
export const TRACE_BATCH_MAX_NODES = 500;
/**
 * Largest number of edges one `POST /traces/batch/list` answer may hold, counted over all its
 * results (an edge reached from two requested nodes counts twice). A request whose answer would
 * hold more is refused with 422 and a `detail` item of type TRACE_BATCH_TOO_LARGE: ask for fewer
 * nodes at once, or fewer hops.
 */
export const TRACE_BATCH_MAX_EDGES = 10_000;
/** The `type` of the 422 `detail` item when an answer would exceed TRACE_BATCH_MAX_EDGES. */
export const TRACE_BATCH_TOO_LARGE = 'answer_too_large';
/** Largest `n_hops` the batch listing accepts. */
export const TRACE_MAX_HOPS = 10;

/** The relation types of a trace (the schema of a trace's `relation_type` is the contract's). */
export const RELATION_TYPES = [
  'is_related',
  'mentions',
  'is_mentioned_by',
  'is_parent',
  'has_parent',
  'contributes_to',
  'connected_within_use_case',
  'auto_referenced_in_text_editor',
  'auto_referenced_in_process_modeller',
  'auto_based_on_template',
  'auto_document_part_of_submission',
  'auto_submission_contains_document',
  'auto_based_on_schema',
  'auto_schema_for',
  'auto_referenced_by_domain_object',
  'auto_referenced_global_element',
  'auto_referenced_product_data_collection',
  'auto_referenced_external_file',
  'auto_referenced_domain_object_contains_external_file',
  'auto_based_on_submission_template',
  'auto_template_part_of_submission_template',
  'auto_submission_template_contains_template',
] as const;

export {
  keptOutline,
  MAX_OUTLINE_ENTRIES,
  MAX_OUTLINE_LEVEL,
  type OutlineEntryShape,
} from './outline-rules.js';
export { canonicalJson, jsonEqual, sameCanonicalJson } from './json-values.js';
export { previousReleasedBaseline, type BaselineReleaseShape } from './baseline-release.js';
export {
  linkReading,
  readingText,
  relationLabel,
  relationReading,
  roleOfTrace,
  storedRole,
  traceCreateOf,
  traceTopicsOf,
  type LinkReading,
  type RecordTraceCreate,
  type TraceRoleShape,
} from './trace-roles.js';
