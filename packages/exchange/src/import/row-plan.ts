import { createHash } from 'node:crypto';
import type { FormComponent, FormSchema } from '@rxs/contract';
import { sameCanonicalJson } from '@rxs/contract/plain';
import type { RecordCreate, RecordUpdate, ServiceRecord } from '@rxs/contract';
import { readableIdOf, type IdentifierRule } from '../export/identity.js';
import type { ExportedField, TopicPresentation } from '../export/model.js';
import { isPlainObject, splitPath } from '../mapping/paths.js';
import {
  convertTypedValue,
  FieldNameError,
  FieldValueError,
  setFieldValue,
} from '../mapping/record-input.js';
import type { recordDataValidator } from '@rxs/contract/validation/checks';
import type { ImportColumns } from './columns.js';
import { formDate, type DateOfDateTime } from './form-dates.js';
import { FIXED_COLUMNS, type Cell, type FactColumn, type SourceRow } from './source-row.js';
import { CLI_WORDING, type ImportWording } from './wording.js';

/** The topic imported into, as the planner needs it. */
export interface ImportTarget {
  revisionId: string;
  historyId: string;
  name: string;
  /** Every revision of the topic: a row exported from an older one still belongs to it. */
  revisionIds: ReadonlySet<string>;
  schema: FormSchema;
  /** Checks a record's data against the form (recordDataValidator of `schema`). */
  validateData: ReturnType<typeof recordDataValidator>;
  fields: readonly ExportedField[];
  /** The fields by form key, for naming a validation problem's field. */
  fieldsByKey: ReadonlyMap<string, ExportedField>;
  components: ReadonlyMap<string, FormComponent>;
  presentation: TopicPresentation;
  rule: IdentifierRule;
}

/** The topic's records a file refers to, found before the rows are planned. */
export interface ExistingRecords {
  byId(id: string): ServiceRecord | undefined;
  byReadableId(readableId: string): ServiceRecord | undefined;
  /** The records whose `context.global_element_id` is this source identity (more than one: ambiguous). */
  bySourceId(sourceId: string): readonly ServiceRecord[];
  /** Why an `_id` that is no record of the topic cannot be updated (another topic's, or none). */
  whyNot(id: string): string;
}

export type RowAction = 'create' | 'update' | 'unchanged' | 'rejected';

export interface RowPlan {
  where: string;
  action: RowAction;
  /** The record updated or left unchanged. */
  recordId?: string;
  readableId?: string;
  name?: string;
  problems: string[];
  /** The row's warnings (SourceRow): it imports without what they name. */
  warnings: string[];
  /** Date-times the row gave date fields, taken as their dates: the report says so once a field. */
  datesOfDateTimes: DateOfDateTime[];
  create?: RecordCreate;
  update?: RecordUpdate;
  /** Sent with the write: a retry, or a re-run of the same file, never writes twice. */
  idempotencyKey?: string;
}

export interface RowPlannerOptions {
  /** Copy the rows in as new records: `_id` and the topic they came from are not looked at. */
  newRecords?: boolean;
  /** Overwrite records that changed since the file was written (its `version` column). */
  ignoreVersions?: boolean;
  /**
   * The column (ReqIF: attribute) whose value is each row's identity in its source, kept as the
   * record's `context.global_element_id`. Default: the `source_id` column (ReqIF: the IDENTIFIER).
   */
  keyColumn?: string;
  reason?: string;
  /**
   * Whether the plan is to be written: only then is its idempotency key made (a hash of the whole
   * write), which a check of the file does not need.
   */
  writing?: boolean;
  /** How advice names the options (default: `rxs import`'s). */
  wording?: ImportWording;
}

/** A row with what identifies it, derived once for the passes that need it. */
export interface IdentifiedRow {
  row: SourceRow;
  /** Its `readable_id`, else what the topic's rule derives from its name and title. */
  readableId: string | undefined;
  /** Its identity in its source (`sourceIdOf`). */
  sourceId: string | undefined;
  /**
   * Its identity in the file: `_id …`, else `source id …`, else `readable id …`; a record twice in
   * a file is refused.
   */
  identity: string | undefined;
}

/**
 * What a row's identities are counted under in a file (HashedCounts), besides its `identity`. Each
 * kind starts with words of its own (`_id `, `readable id `, `source id `, `fallback readable id `),
 * so that no id of one kind is counted as another kind's, whatever text it holds.
 */
export const sourceIdentity = (sourceId: string) => `source id ${sourceId}`;
/** A row matched by its source id whose readable id may match a record that has none. */
export const readableFallback = (readableId: string) => `fallback readable id ${readableId}`;

export function identifyRow(
  row: SourceRow,
  target: ImportTarget,
  columns: ImportColumns,
  options: RowPlannerOptions,
  factColumns: ReadonlyMap<string, FactColumn> = FIXED_COLUMNS,
): IdentifiedRow {
  const readableId = readableIdOfRow(row, target, columns);
  const sourceId =
    sourceIdOf(row, options.keyColumn, factColumns) ??
    (options.newRecords ? row.facts.exportedAs : undefined);
  const identity =
    row.facts.id !== undefined && !options.newRecords
      ? `_id ${row.facts.id}`
      : sourceId !== undefined
        ? sourceIdentity(sourceId)
        : readableId === undefined
          ? undefined
          : `readable id ${readableId}`;
  return { row, readableId, sourceId, identity };
}

/**
 * A row's identity in its source: the value of the key column (a value of the row, else a fact the
 * reader took from that column), else its `source_id` (ReqIF: the IDENTIFIER). Kept as written;
 * empty is none.
 */
export function sourceIdOf(
  row: SourceRow,
  keyColumn: string | undefined,
  factColumns: ReadonlyMap<string, FactColumn>,
): string | undefined {
  let value: unknown = row.facts.sourceId;
  if (keyColumn !== undefined) {
    const cell = row.values.get(keyColumn);
    const fact = factColumns.get(keyColumn);
    value =
      cell !== undefined
        ? 'text' in cell
          ? cell.text
          : cell.value
        : fact && fact !== 'skip'
          ? row.facts[fact]
          : undefined;
  }
  if (typeof value === 'number' || typeof value === 'boolean') value = String(value);
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The source identity a record keeps (`context.global_element_id`), if any. */
export function sourceIdOfRecord(record: ServiceRecord): string | undefined {
  const id = record.context?.global_element_id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The row's readable id: its `readable_id`, else what the topic's rule derives from its name and title. */
function readableIdOfRow(row: SourceRow, target: ImportTarget, columns: ImportColumns): string | undefined {
  if (row.facts.readableId !== undefined) return row.facts.readableId;
  const values: Record<string, unknown> = {};
  const title = target.presentation.titleField;
  if (title !== undefined)
    for (const [column, cell] of row.values) {
      const use = columns.use(column, row.byFormKey);
      if ('field' in use && use.field.name === title) values[title] = 'text' in cell ? cell.text : cell.value;
    }
  const derived = readableIdOf(
    { id: '', name: row.facts.name ?? '', values },
    unprefixed(target.rule),
    target.presentation,
  );
  // Without a derived id the rule makes one up from the `_id`: a new row has none.
  return derived === '_' ? undefined : derived;
}

/** The rule without a prefix, made once a rule: every row derives its readable id by it. */
const unprefixedRules = new WeakMap<IdentifierRule, IdentifierRule>();
function unprefixed(rule: IdentifierRule): IdentifierRule {
  let made = unprefixedRules.get(rule);
  if (!made) unprefixedRules.set(rule, (made = { ...rule, prefix: '' }));
  return made;
}

/**
 * What to do with one row: create a record (keeping the row's source id), update one (the row's
 * `_id`, else the record of its source id, else the record with its readable id), leave one
 * unchanged, or reject the row with every reason. Nothing is written here.
 */
export function planRow(
  { row, readableId, sourceId }: IdentifiedRow,
  target: ImportTarget,
  columns: ImportColumns,
  existing: ExistingRecords,
  duplicateOf: string | undefined,
  options: RowPlannerOptions,
  /** Whether the row's readable id may find a record without a source id (it is the only row of that readable id). */
  mayMatchByReadableId = false,
): RowPlan {
  const plan: RowPlan = {
    where: row.where,
    action: 'rejected',
    problems: [...row.problems],
    warnings: row.warnings ?? [],
    datesOfDateTimes: [],
  };
  if (readableId !== undefined) plan.readableId = readableId;
  if (duplicateOf !== undefined)
    plan.problems.push(`the file has this record more than once (${duplicateOf}): keep one of the rows.`);

  const key = options.keyColumn;
  if (key !== undefined && sourceId === undefined && (row.facts.id === undefined || options.newRecords))
    plan.problems.push(
      `it has no value in the key column "${key}": the key is what finds its record when a newer file is imported.`,
    );
  const bySource = sourceId === undefined ? [] : existing.bySourceId(sourceId);
  if (bySource.length > 1)
    plan.problems.push(
      `${bySource.length} records of "${target.name}" have the source id "${sourceId}" (${bySource.map((r) => r._id).join(', ')}): delete the extra ones, then import again.`,
    );
  let record: ServiceRecord | undefined;
  if (row.facts.id !== undefined && !options.newRecords) {
    record = existing.byId(row.facts.id);
    if (!record) plan.problems.push(existing.whyNot(row.facts.id));
    const holds = record && sourceIdOfRecord(record);
    const other = bySource.length === 1 && bySource[0]!._id !== row.facts.id ? bySource[0] : undefined;
    if (sourceId !== undefined && holds !== undefined && holds !== sourceId)
      plan.problems.push(
        `its _id is record ${row.facts.id}, whose source id is "${holds}", not this row's "${sourceId}": clear the _id to match the row by its source id, or correct the source id.`,
      );
    else if (other)
      plan.problems.push(
        `its source id "${sourceId}" is record ${other._id}'s, not record ${row.facts.id}'s (its _id): clear the _id to update ${other._id}, or correct the source id.`,
      );
  } else if (sourceId !== undefined) {
    // A record imported before it kept a source id is found by its readable id, as it was then.
    const unidentified =
      mayMatchByReadableId && readableId !== undefined ? existing.byReadableId(readableId) : undefined;
    record =
      bySource.length === 1
        ? bySource[0]
        : bySource.length === 0 && unidentified && sourceIdOfRecord(unidentified) === undefined
          ? unidentified
          : undefined;
  } else if (readableId !== undefined) record = existing.byReadableId(readableId);
  const from = row.facts.topicRevisionId;
  if (from !== undefined && !options.newRecords && !target.revisionIds.has(from))
    plan.problems.push(
      `it comes from another topic (topic revision ${from}), not "${target.name}". Import it into its own topic, or copy it in as a new record ${(options.wording ?? CLI_WORDING).newRecords}.`,
    );
  // A record changed since the file was written is not overwritten; a row that holds what the
  // record holds now is unchanged whatever its version, as nothing would be written over the change.
  let changedSince: string | undefined;
  const changedSinceAt = plan.problems.length;
  if (record) {
    plan.recordId = record._id;
    if (
      row.facts.version !== undefined &&
      !sameVersion(row.facts.version, record.version) &&
      !options.ignoreVersions
    )
      changedSince = `record ${record._id} changed since the file was written (version ${row.facts.version} in the file, ${record.version} now): export it again and redo the change, or overwrite it ${(options.wording ?? CLI_WORDING).ignoreVersions}.`;
  }

  const data = record && isPlainObject(record.data) ? structuredClone(record.data) : {};
  for (const [column, cell] of row.values) {
    const use = columns.use(column, row.byFormKey);
    if ('ignored' in use) continue;
    const key = 'field' in use ? use.field.key : use.dataKey;
    try {
      const value =
        'field' in use
          ? fieldValue(use.field, cell, target.components.get(key), plan.datesOfDateTimes)
          : valueOf(cell);
      if (value === CLEAR) removeFieldValue(data, key);
      else setFieldValue(data, key, value);
    } catch (error) {
      // A key naming an object's prototype (in a cell's JSON, say) is the row's problem too.
      if (!(error instanceof FieldValueError || error instanceof FieldNameError)) throw error;
      plan.problems.push(error.message);
    }
  }
  const name = row.facts.name ?? record?.name ?? titleOf(data, target);
  if (name === undefined || name.trim() === '')
    plan.problems.push('it has no name: give the record a name in a "name" column (or a title).');
  else if (name.length > 500)
    plan.problems.push(`its name is ${name.length} characters long; a name has at most 500.`);
  else plan.name = name;

  for (const item of target.validateData(data, { locPrefix: [] })) {
    const key = item.loc.join('.');
    const field = target.fieldsByKey.get(key) ?? target.fieldsByKey.get(String(item.loc[0]));
    plan.problems.push(field ? `${field.name} (${field.key}): ${item.msg}` : `${key || 'data'}: ${item.msg}`);
  }
  const unchanged = record !== undefined && plan.name !== undefined && sameRecord(record, plan.name, data);
  if (changedSince !== undefined && !(unchanged && plan.problems.length === 0))
    plan.problems.splice(changedSinceAt, 0, changedSince);
  if (plan.problems.length > MAX_ROW_PROBLEMS)
    plan.problems.splice(
      MAX_ROW_PROBLEMS,
      Infinity,
      `and ${plan.problems.length - MAX_ROW_PROBLEMS} more problems: fix these and check the file again to see them.`,
    );
  if (plan.problems.length > 0 || plan.name === undefined) return plan;

  if (record) {
    if (unchanged) {
      plan.action = 'unchanged';
      return plan;
    }
    plan.action = 'update';
    plan.update = {
      ...(record.name !== plan.name && { name: plan.name }),
      data,
      version: record.version,
      ...(options.reason !== undefined && { change_reason: options.reason }),
    };
    if (options.writing) plan.idempotencyKey = keyOf([target.revisionId, 'update', record._id, plan.update]);
    return plan;
  }
  plan.action = 'create';
  plan.create = {
    name: plan.name,
    form: {},
    data,
    context: {
      knowledge_unit_topic_id: target.revisionId,
      ...(sourceId !== undefined && { global_element_id: sourceId }),
    },
    ...(options.reason !== undefined && { change_reason: options.reason }),
  };
  // The row's identity, else its place: the same row of the same file is the same request.
  if (options.writing)
    plan.idempotencyKey = keyOf([
      target.revisionId,
      'create',
      sourceId ?? readableId ?? row.where,
      plan.create,
    ]);
  return plan;
}

/**
 * Problems a row lists word for word: a report keeps the problems of up to a thousand rows, and a
 * row of thousands of bad cells would otherwise fill it with them.
 */
const MAX_ROW_PROBLEMS = 50;

/** An empty cell (or a JSON null): the field is cleared. */
const CLEAR: unique symbol = Symbol('clear');

function fieldValue(
  field: ExportedField,
  cell: Cell,
  component: FormComponent | undefined,
  datesOfDateTimes: DateOfDateTime[],
): unknown {
  if ('text' in cell && cell.text === '') return CLEAR;
  const given = 'text' in cell ? cell.text : cell.value;
  if (given === null) return CLEAR;
  if (field.type !== 'datetime' || typeof given !== 'string') return convertTypedValue(field, given);
  const date = formDate(given, component?.['subtype']);
  if (date.fromDateTime)
    datesOfDateTimes.push({ field: `"${field.name}" (${field.key})`, given, date: date.value });
  return convertTypedValue(field, date.value);
}

function valueOf(cell: Cell): unknown {
  if ('text' in cell) return cell.text === '' ? CLEAR : cell.text;
  return cell.value === null ? CLEAR : cell.value;
}

function removeFieldValue(data: Record<string, unknown>, key: string): void {
  const path = splitPath(key);
  let target: unknown = data;
  for (const part of path.slice(0, -1)) target = isPlainObject(target) ? target[part] : undefined;
  if (isPlainObject(target)) delete target[path[path.length - 1]!];
}

function titleOf(data: Record<string, unknown>, target: ImportTarget): string | undefined {
  const field = target.fields.find((f) => f.name === target.presentation.titleField);
  const value = field ? data[field.key] : undefined;
  return typeof value === 'string' && value.trim() !== '' ? value.slice(0, 500) : undefined;
}

/**
 * Whether a version in a file is the record's: equal as numbers when both are decimal numbers (a
 * spreadsheet saves "1.0" as "1"), else equal as text.
 */
function sameVersion(inFile: string, now: string): boolean {
  const number = (version: string) => (DECIMAL.test(version.trim()) ? Number(version) : undefined);
  const a = number(inFile);
  const b = number(now);
  return a !== undefined && b !== undefined ? a === b : inFile === now;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)$/;

/**
 * Whether the record is as the row would leave it. The service trims a name as it writes it: a
 * name that differs from the record's only in spaces at either end would change nothing.
 */
function sameRecord(record: ServiceRecord, name: string, data: Record<string, unknown>): boolean {
  return (record.name === name || record.name === name.trim()) && sameCanonicalJson(record.data ?? {}, data);
}

/**
 * An idempotency key of a write: a hash of JSON with object keys in the order an object built from
 * its sorted entries has (array-index keys first, ascending; the others sorted). Frozen: a re-run of
 * an import made by an earlier version must make the same keys, or the service writes its rows again.
 * A plan to write carries it as `inFileOrder` makes it.
 */
function keyOf(parts: unknown[]): string {
  return `rxs-import-${createHash('sha256')
    .update(keyJson(parts) ?? 'null')
    .digest('hex')
    .slice(0, 40)}`;
}

/**
 * The text `keyOf` hashes: what `JSON.stringify(value, replacer)` writes with a replacer that
 * turns every object into one built from its entries sorted by key (so array-index keys come
 * first, in numeric order, as in any object), written directly: a replacer runs a function and
 * builds an object for every value, and an import makes a key a row.
 */
export function keyJson(value: unknown, key = ''): string | undefined {
  if (typeof value === 'object' && value !== null) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = toJSON.call(value, key);
  }
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++)
      text += `${i === 0 ? '' : ','}${keyJson(value[i], String(i)) ?? 'null'}`;
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  let text = '{';
  for (const member of keysInEntryOrder(Object.keys(object))) {
    const json = keyJson(object[member], member);
    if (json !== undefined) text += `${text.length === 1 ? '' : ','}${JSON.stringify(member)}:${json}`;
  }
  return `${text}}`;
}

/** Keys sorted, then in the order an object made from entries in that order lists them. */
function keysInEntryOrder(keys: string[]): string[] {
  // The default order is by UTF-16 code units, as `<` compares strings.
  keys.sort();
  if (!keys.some(isArrayIndex)) return keys;
  const indexes = keys.filter(isArrayIndex).sort((x, y) => Number(x) - Number(y));
  return [...indexes, ...keys.filter((key) => !isArrayIndex(key))];
}

/** A key an object lists before all others, in numeric order: a canonical integer below 2^32 - 1. */
function isArrayIndex(key: string): boolean {
  const first = key.charCodeAt(0);
  if (!(first >= 0x30 && first <= 0x39)) return false;
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && n < 4294967295 && String(n) === key;
}

/**
 * A row's key as it is sent: its place among the file's rows (1 for the first), then its hash. The
 * service keeps every key in an index ordered by key; the ascending keys of one import go into it
 * side by side, a few pages a batch, where hashes alone would dirty a page of the index for almost
 * every row written (a third of the service's work at 100,000 rows). The same file makes the same
 * keys; frozen, as `keyOf` is.
 */
export function inFileOrder(ordinal: number, key: string): string {
  return `rxs-import-${String(ordinal).padStart(9, '0')}-${key.slice('rxs-import-'.length)}`;
}
