import { ExportDataError } from './errors.js';
import { ClaimTable } from './id-table.js';
import type { ExportedField, ExportedRecord, TopicPresentation } from './model.js';

/**
 * Readable identifiers: requirements tools and Sphinx-Needs work with human ids (`SYSREQ_001`),
 * not the service's 24-hex `_id`. A topic's identifier rule derives one per record; the `_id`
 * stays beside it in every format, so a round trip still finds its record.
 */

/** Where a record's readable id may come from, tried in order. */
export type IdentifierSource =
  /** A leading id (`REQ_001 — …`) in the topic's title field. */
  | 'title'
  /** A leading id in the record's name. */
  | 'name'
  /** The record's name as a whole, when it is a valid id. */
  | 'whole-name'
  /** A leading id in the value of this semantic field. */
  | { field: string };

export interface IdentifierRule {
  sources: IdentifierSource[];
  /** Finds a leading id in a text; the first capture group (else the whole match) is the id. */
  pattern: RegExp;
  /** Prefix of the id made up when no source gives one: `<prefix>_<_id>`. */
  prefix: string;
}

/**
 * A leading `PREFIX_NNN` or `PREFIX-NNN` (`REQ_001`, `SYS-REQ-12`, `UR_3a`... not `Requirements`),
 * ended by the end of the text or by a character that cannot belong to an id (space, dash, colon).
 */
export const LEADING_ID_PATTERN =
  /^\s*([A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*[_-][0-9]+[A-Za-z]?)(?![A-Za-z0-9_.-])/;

/** A whole name that can serve as an id as it is: letters, digits, `_ . -`, at most 64 characters. */
export const VALID_ID = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export const DEFAULT_SOURCES: IdentifierSource[] = ['title', 'name', 'whole-name'];

/** The default rule of a topic: a leading id in the title or name, the name, else prefix and `_id`. */
export function defaultIdentifierRule(presentation: TopicPresentation): IdentifierRule {
  return { sources: DEFAULT_SOURCES, pattern: LEADING_ID_PATTERN, prefix: presentation.idPrefix };
}

/** The service's ids (24 hex digits): an id made of a prefix and one of them is unique by construction. */
const SERVICE_ID = /^[0-9a-f]{24}$/;
/** A text that ends like a made-up id (`_` and 24 hex digits): never taken as a derived id. */
const MADE_UP_ID_TAIL = /_[0-9a-fA-F]{24}$/;

/**
 * The readable id of a record by a rule: the first source that gives one, else `<prefix>_<_id>`.
 * A derived id that looks like a made-up one is passed over, so the two kinds never meet.
 */
export function readableIdOf(
  record: Pick<ExportedRecord, 'id' | 'name' | 'values'>,
  rule: IdentifierRule,
  presentation: Pick<TopicPresentation, 'titleField'>,
): string {
  for (const source of rule.sources) {
    const id = candidate(record, source, rule, presentation);
    if (id !== undefined && id !== '' && !MADE_UP_ID_TAIL.test(id)) return id;
  }
  return madeUpId(rule.prefix, record.id);
}

function madeUpId(prefix: string, recordId: string): string {
  return `${prefix}_${recordId}`;
}

function candidate(
  record: Pick<ExportedRecord, 'name' | 'values'>,
  source: IdentifierSource,
  rule: IdentifierRule,
  presentation: Pick<TopicPresentation, 'titleField'>,
): string | undefined {
  if (source === 'whole-name') return VALID_ID.test(record.name) ? record.name : undefined;
  const text =
    source === 'name'
      ? record.name
      : source === 'title'
        ? presentation.titleField === undefined
          ? undefined
          : record.values[presentation.titleField]
        : record.values[source.field];
  if (typeof text !== 'string') return undefined;
  const match = rule.pattern.exec(text);
  return match ? (match[1] ?? match[0]).trim() : undefined;
}

/** Two records of one export derived the same readable id: never two needs or rows with one id. */
export class DuplicateIdentifierError extends ExportDataError {
  override name = 'DuplicateIdentifierError';
  override readonly code = 'RXS_ERR_DUPLICATE_IDENTIFIER';

  constructor(
    readonly readableId: string,
    readonly firstRecordId: string,
    readonly secondRecordId: string,
  ) {
    super(
      `Records ${firstRecordId} and ${secondRecordId} both have the readable id "${readableId}". ` +
        `Give one of them another id in its name or title, or set an identifier rule for the topic in a mapping file ` +
        `(for example "identifier": {"from": ["record-id"]}).`,
    );
  }
}

/** Sphinx-Needs' built-in need types; a type must be declared in `needs_types` to be imported. */
const NEED_TYPE_BY_WORD: [RegExp, string][] = [
  [/\b(tests?|verification|validation|test ?cases?|qualification)\b/i, 'test'],
  [/\b(specifications?|specs?|design|architecture)\b/i, 'spec'],
  [/\b(implementations?|code|software units?)\b/i, 'impl'],
];

const TITLE_NAMES = ['title', 'name', 'summary', 'heading'];

function fieldNamed(fields: readonly ExportedField[], candidates: readonly string[]): string | undefined {
  for (const candidate of candidates) {
    const field = fields.find((f) => f.name.toLowerCase() === candidate);
    if (field) return field.name;
  }
  return undefined;
}

/**
 * What a topic looks like without a mapping file: a built-in Sphinx-Needs type chosen from its name
 * (`test` for tests and verification, `spec` for specifications and design, else `req`), the type
 * in upper case as id prefix, the topic's name as ReqIF type, and title, description and status from
 * fields of those names.
 */
export function defaultPresentation(topicName: string, fields: readonly ExportedField[]): TopicPresentation {
  const needType = NEED_TYPE_BY_WORD.find(([words]) => words.test(topicName))?.[1] ?? 'req';
  return {
    needType,
    idPrefix: needType.toUpperCase(),
    reqifTypeName: topicName,
    titleField: fieldNamed(fields, TITLE_NAMES),
    descriptionField: fieldNamed(fields, ['description', 'text', 'details']),
    statusField: fieldNamed(fields, ['status', 'state']),
  };
}

/** A made-up id (`<prefix>_<24 hex _id>`): unique by construction, never one a record derived. */
export function isMadeUpId(readableId: string, recordId: string): boolean {
  return SERVICE_ID.test(recordId) && readableId.endsWith(`_${recordId}`);
}

/**
 * Checks that readable ids are unique across the whole export and refuses a second record with
 * the same one. Made-up ids (`<prefix>_<24 hex _id>`) are unique by construction and derived ids
 * never look like them, so only derived ids are remembered: an export whose records have no
 * readable ids of their own keeps nothing per record.
 */
export class ReadableIds {
  // Compact: at a million records a Map of the strings would hold about 200 MB of the exporter.
  private readonly owners = new ClaimTable();

  assign(readableId: string, recordId: string): string {
    if (isMadeUpId(readableId, recordId)) return readableId;
    const owner = this.owners.claim(readableId, recordId);
    if (owner !== undefined && owner !== recordId)
      throw new DuplicateIdentifierError(readableId, owner, recordId);
    return readableId;
  }
}
