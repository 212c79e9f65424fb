import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { fragment } from 'xmlbuilder2';
import type { FormComponent } from '@rxs/contract';
import { keptOutline, type OutlineEntryShape } from '@rxs/contract/plain';
import { MULTI_VALUE_TYPES, OPTION_TYPES } from '../../mapping/options.js';
import { componentsByKey } from '../../reqif/form-components.js';
import { roleRelationTypeId } from '../../reqif/relation-types.js';
import type {
  ExportedField,
  ExportedOutline,
  ExportedRecord,
  ExportedTopic,
  ExportPart,
  TopicPresentation,
} from '../model.js';
import { cellText, xmlSafe } from './cells.js';
import { SemanticColumns, valueOf } from './columns.js';
import { writeChunk } from './output.js';
import { SpooledWriter } from './spooled-writer.js';
import type { TopicSummary } from './tracker.js';
import { linksOf, RECORD_NODE_TYPE, type Link } from './traces.js';
import {
  attr,
  childrenMarker,
  serialize,
  splitAtMarker,
  text,
  xmlAttributes,
  xmlText,
  type XMLBuilder,
} from './xml.js';

// xmlbuilder2 is loaded when a ReqIF file is produced, not whenever the sdk is imported.
let builder: typeof fragment | undefined;
async function loadBuilder(): Promise<void> {
  builder ??= (await import('xmlbuilder2')).fragment;
}
function newFragment(): ReturnType<typeof fragment> {
  if (!builder) throw new Error('xmlbuilder2 is not loaded yet');
  return builder();
}

export const REQIF_NAMESPACE = 'http://www.omg.org/spec/ReqIF/20110401/reqif.xsd';
export const REQIF_TOOL_ID = 'RXS';

export interface ReqifWriterOptions {
  /** Where records wait until the types are written (default: the system temp folder). */
  tempDir?: string;
  /** TITLE of the ReqIF header (default: the names of the exported topics). */
  title?: string;
}

/**
 * Attributes every record carries before its fields, under the names of the ReqIF Implementation
 * Guide where one fits: `ReqIF.ForeignID` is the readable id (the IDENTIFIER is the source id's
 * or the `_id`'s, see `SpecObjectIds`),
 * `ReqIF.Name` the title, `ReqIF.Text` the description; the `_id` and name stay for round trips.
 */
function recordAttributes(
  presentation: TopicPresentation,
): { name: string; value: (record: ExportedRecord) => string }[] {
  const { titleField, descriptionField } = presentation;
  const title = (record: ExportedRecord) => {
    const value = titleField === undefined ? undefined : cellText(valueOf(record, titleField));
    return value ? value : record.name;
  };
  return [
    { name: 'ReqIF.ForeignID', value: (record) => record.readableId },
    { name: 'ReqIF.Name', value: title },
    ...(descriptionField === undefined
      ? []
      : [
          {
            name: 'ReqIF.Text',
            value: (record: ExportedRecord) => cellText(valueOf(record, descriptionField)),
          },
        ]),
    { name: 'RXS.RecordId', value: (record) => record.id },
    // The source id also where it cannot be the IDENTIFIER (not an NCName, or not unique).
    { name: 'RXS.SourceId', value: (record) => record.sourceId ?? '' },
    { name: 'RXS.RecordName', value: (record) => record.name },
    { name: 'RXS.Version', value: (record) => record.version },
  ];
}

/** Attributes of a specification (one per topic): which revision of which topic it holds. */
const TOPIC_ATTRIBUTES: { name: string; id: string; value: (topic: ExportedTopic) => string }[] = [
  { name: 'RXS.RevisionId', id: 'AD-topic-revision-id', value: (topic) => topic.revisionId },
  {
    name: 'RXS.LatestRevisionId',
    id: 'AD-topic-latest-revision-id',
    value: (topic) => topic.latestRevisionId,
  },
  { name: 'RXS.HistoryId', id: 'AD-topic-history-id', value: (topic) => topic.historyId },
  { name: 'RXS.Version', id: 'AD-topic-version', value: (topic) => topic.version },
  { name: 'RXS.Status', id: 'AD-topic-status', value: (topic) => topic.status },
];

const STRING_DATATYPE_ID = 'DT-string';
const SPECIFICATION_TYPE_ID = 'ST-knowledge-topic';
const MIN_STRING_LENGTH = 255;

/**
 * Identifiers are valid xsd:IDs and stable from one export to the next, since they derive from
 * ids and keys, never from positions: a tool that re-imports the file updates what it imported.
 * This is a record's SPEC-OBJECT IDENTIFIER when it has no source id fit to be one (see
 * `SpecObjectIds`).
 */
export function specObjectId(recordId: string): string {
  return readableId('R', recordId);
}

/**
 * A source id that can stand as an IDENTIFIER: an xsd:ID (NCName) of ASCII characters, which every
 * XML parser reads as one whatever edition of the Name rules it follows.
 */
const PORTABLE_NCNAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** What `specObjectId` and `hierarchyId` make of record ids: a source id of this shape may meet one. */
const RECORD_MADE_UP_ID = /^[RH][-_]/;
/** The IDENTIFIER an rxs export gives a record without a source id, which an import reads as its _id. */
const EXPORTED_RECORD_ID = /^R-[0-9a-f]{24}$/;
/** The other identifiers this writer makes (types, datatypes, specifications, relations, header). */
const OTHER_MADE_UP_ID =
  /^(?:(?:SOT|SPEC|REL|EV|HEADER|AD|DT)-[0-9a-f]{24}|DT-(?:string|boolean|date|integer|real-\d+)|ST-knowledge-topic|AD-topic-.*|RT[-_].*)$/;

const hierarchyId = (recordId: string) => readableId('H', recordId);

/**
 * The SPEC-OBJECT IDENTIFIER of each record: its source id (`context.global_element_id`) when that
 * is a portable NCName held by no other record of the file and equal to no other record's made-up
 * identifier, so that the tool the record came from (DOORS, Polarion) finds its own object;
 * otherwise `specObjectId`. SPEC-OBJECTs, SPEC-RELATIONs and SPEC-HIERARCHYs all take it from `of`.
 * Memory holds the records that have a source id, not the others.
 */
class SpecObjectIds {
  /**
   * Records by candidate source id while records pass; `null` once two records hold it or another
   * identifier of the file is spelled the same (an xsd:ID is unique in its document).
   */
  private readonly candidates = new Map<string, string | null>();
  /** The settled IDENTIFIER of each record whose source id is one. */
  private readonly chosen = new Map<string, string>();

  note(record: ExportedRecord): void {
    const sourceId = record.sourceId;
    if (sourceId === undefined || !PORTABLE_NCNAME.test(sourceId) || OTHER_MADE_UP_ID.test(sourceId)) return;
    // A copy's source id naming the record it was copied from (`R-<that _id>`) would read back as
    // the _id of a record this tenant does not hold: the copy is named by its own.
    if (EXPORTED_RECORD_ID.test(sourceId) && sourceId !== specObjectId(record.id)) return;
    this.candidates.set(sourceId, this.candidates.has(sourceId) ? null : record.id);
  }

  /** Settles the identifiers once every record was noted; `records` replays them all. */
  async settle(records: AsyncIterable<{ record: ExportedRecord }>): Promise<void> {
    if ([...this.candidates.keys()].some((id) => RECORD_MADE_UP_ID.test(id)))
      for await (const { record } of records) {
        for (const madeUp of [specObjectId(record.id), hierarchyId(record.id)]) {
          const holder = this.candidates.get(madeUp);
          // A record's own `R-<_id>` as its source id names the same object either way.
          if (holder !== undefined && (holder !== record.id || madeUp !== specObjectId(record.id)))
            this.candidates.set(madeUp, null);
        }
      }
    for (const [sourceId, recordId] of this.candidates)
      if (recordId !== null) this.chosen.set(recordId, sourceId);
    this.candidates.clear();
  }

  of(recordId: string): string {
    return this.chosen.get(recordId) ?? specObjectId(recordId);
  }
}

function readableId(prefix: string, raw: string): string {
  // "R-<id>" for ids made of name characters; other ids are hex-encoded under "R_", so two
  // different ids never meet.
  return /^[A-Za-z0-9_.-]+$/.test(raw)
    ? `${prefix}-${raw}`
    : `${prefix}_${Buffer.from(raw, 'utf8').toString('hex')}`;
}

function hashedId(prefix: string, ...parts: string[]): string {
  return `${prefix}-${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24)}`;
}

/** xsd:dateTime in UTC; service timestamps without a zone are UTC. */
function xsdDateTime(value: string | null | undefined, fallback: string): string {
  if (!value) return fallback;
  const millis = Date.parse(/(?:Z|[+-]\d{2}:?\d{2})$/i.test(value) ? value : `${value}Z`);
  return Number.isNaN(millis) ? fallback : new Date(millis).toISOString();
}

const valueKey = (value: unknown) => JSON.stringify(value) ?? String(value);

/**
 * The ReqIF type of a field, from its form component: number INTEGER (no decimal places, or a
 * whole increment) or REAL, checkbox BOOLEAN, date and datetime DATE, select and radio a
 * single-valued and checklist and taglist a multi-valued ENUMERATION, everything else STRING.
 * form-js has no rich-text input, so no field is XHTML.
 */
type AttributeKind = 'string' | 'integer' | 'real' | 'boolean' | 'date' | 'enumeration';

/** How one field of a topic is written: its kind, and what the records showed while they passed. */
interface FieldTyping {
  field: ExportedField;
  kind: AttributeKind;
  /** REAL: decimal places the form allows (the datatype's ACCURACY). */
  accuracy?: number;
  /** ENUMERATION: checklist or taglist. */
  multi?: boolean;
  /** Some record holds a value that does not fit the kind: the field gets a STRING twin. */
  misfits: number;
}

const INTEGER_MIN = '-9223372036854775808';
const INTEGER_MAX = '9223372036854775807';
const REAL_LIMIT = '1.7976931348623157E308';
/** ACCURACY of a REAL whose form sets no decimal places: what a double holds. */
const DEFAULT_ACCURACY = 15;
const BOOLEAN_DATATYPE_ID = 'DT-boolean';
/**
 * The attribute of every relation: "true" when a record at either end changed since the link was
 * made or last reviewed (what DOORS and Polarion call a suspect link), else "false". It is a STRING,
 * not a BOOLEAN: StrictDoc's reqif library reads only STRING, INTEGER and XHTML values on a relation
 * (and only its first value), and rejects the whole file otherwise. A STRING keeps the words of
 * xsd:boolean that a person or an import mapping recognises, where an INTEGER 0/1 would not, and
 * uses the string datatype every file has. It is the relation's only value.
 */
export const SUSPECT_ATTRIBUTE = 'Suspect';
const suspectDefinitionId = (relationTypeId: string) => `${relationTypeId}-suspect`;
const DATE_DATATYPE_ID = 'DT-date';
const INTEGER_DATATYPE_ID = 'DT-integer';
const realDatatypeId = (accuracy: number) => `DT-real-${accuracy}`;
/** The STRING attribute beside a typed one, for the values that do not fit its type. */
const TWIN_SUFFIX = ' (as text)';
/** Warnings written into the header's COMMENT; all of them stay in `ReqifWriter.warnings`. */
const COMMENT_WARNINGS = 50;
/** Warnings kept word for word; beyond them only a count. */
const KEPT_WARNINGS = 1000;

const wholeNumber = (value: unknown) =>
  (typeof value === 'number' && Number.isInteger(value)) ||
  (typeof value === 'string' && /^\s*\d+\s*$/.test(value));

function fieldTyping(field: ExportedField, component: FormComponent | undefined): FieldTyping {
  const typing = (kind: AttributeKind, extra: Partial<FieldTyping> = {}): FieldTyping => ({
    field,
    kind,
    misfits: 0,
    ...extra,
  });
  switch (field.type) {
    case 'number': {
      const digits = component?.['decimalDigits'];
      const increment = component?.['increment'];
      if (digits === 0 || (digits === undefined && wholeNumber(increment) && Number(increment) > 0))
        return typing('integer');
      const accuracy =
        typeof digits === 'number' && Number.isInteger(digits) && digits > 0 ? digits : DEFAULT_ACCURACY;
      return typing('real', { accuracy });
    }
    case 'checkbox':
      return typing('boolean');
    case 'datetime':
      // form-js stores a time of day alone ("14:30") for the "time" subtype: no date to give.
      return component?.['subtype'] === 'time' ? typing('string') : typing('date');
    default:
      return isEnumeration(field)
        ? typing('enumeration', { multi: MULTI_VALUE_TYPES.has(field.type ?? '') })
        : typing('string');
  }
}

/** xsd:double lexical form (no NaN or INF: a form never holds them). */
const DOUBLE = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
/** form-js dates ("2026-09-02") and date-times ("2026-09-02T14:30", with or without a zone). */
const FORM_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * The THE-VALUE of a typed attribute, or undefined when the value does not fit the type. Numbers
 * written as text (form-js `serializeToString`) fit; a date alone becomes midnight without a zone,
 * as the record gives none.
 */
function typedText(
  kind: Exclude<AttributeKind, 'string' | 'enumeration'>,
  value: unknown,
): string | undefined {
  switch (kind) {
    case 'integer': {
      if (typeof value === 'number') return Number.isInteger(value) ? inInteger(BigInt(value)) : undefined;
      if (typeof value !== 'string' || !/^\s*[+-]?\d+\s*$/.test(value)) return undefined;
      return inInteger(BigInt(value.trim()));
    }
    case 'real': {
      if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
      if (typeof value !== 'string') return undefined;
      const text = value.trim();
      return DOUBLE.test(text) && Number.isFinite(Number(text)) ? text : undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : undefined;
    case 'date': {
      const match = typeof value === 'string' ? FORM_DATE.exec(value.trim()) : null;
      if (!match) return undefined;
      const [, year, month, day, hours = '00', minutes = '00', seconds = '00', fraction = '', zone = ''] =
        match;
      const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
      const real =
        date.getUTCFullYear() === Number(year) &&
        date.getUTCMonth() === Number(month) - 1 &&
        date.getUTCDate() === Number(day) &&
        Number(hours) < 24 &&
        Number(minutes) < 60 &&
        Number(seconds) < 60;
      return real ? `${year}-${month}-${day}T${hours}:${minutes}:${seconds}${fraction}${zone}` : undefined;
    }
  }
}

function inInteger(value: bigint): string | undefined {
  return value >= BigInt(INTEGER_MIN) && value <= BigInt(INTEGER_MAX) ? value.toString() : undefined;
}

/** A value a record holds for a field: typed text, enumeration refs, or a misfit. */
type Written =
  | { as: 'none' }
  | { as: 'string'; text: string }
  | { as: 'typed'; text: string }
  | { as: 'enumeration'; options: unknown[] }
  | { as: 'misfit'; text: string };

/** What a value becomes under its field's typing; absent, null and empty typed values are left out. */
function written(typing: FieldTyping | undefined, value: unknown): Written {
  if (value === undefined || value === null) return { as: 'none' };
  if (!typing || typing.kind === 'string') return { as: 'string', text: cellText(value) };
  if (value === '' || (Array.isArray(value) && value.length === 0)) return { as: 'none' };
  if (typing.kind === 'enumeration') {
    if (Array.isArray(value) && !typing.multi) return { as: 'misfit', text: cellText(value) };
    const options: unknown[] = [];
    for (const item of Array.isArray(value) ? value : [value]) {
      const option = item === null || item === undefined ? undefined : findOption(typing.field, item);
      if (!option) return { as: 'misfit', text: cellText(value) };
      options.push(option.value);
    }
    return { as: 'enumeration', options };
  }
  const text = typedText(typing.kind, value);
  return text === undefined ? { as: 'misfit', text: cellText(value) } : { as: 'typed', text };
}

const KIND_NAMES: Record<AttributeKind, string> = {
  string: 'text',
  integer: 'a whole number within 64 bits',
  real: 'a number',
  boolean: 'true or false',
  date: 'a date (YYYY-MM-DD, or a date-time)',
  enumeration: "one of the form's options (a list only for a checklist or taglist)",
};

/** A short, safe quotation of a value for a warning. */
function preview(text: string): string {
  const safe = xmlSafe(text).replace(/\s+/g, ' ');
  return JSON.stringify(safe.length > 60 ? `${safe.slice(0, 60)}…` : safe);
}

interface EnumValuePlan {
  id: string;
  label: string;
  value: unknown;
}

interface AttributePlan {
  id: string;
  longName: string;
  value: (record: ExportedRecord) => unknown;
  /** Absent for the record's own facts, which are strings. */
  typing?: FieldTyping;
  datatypeId: string;
  enumeration?: { multi: boolean; values: EnumValuePlan[] };
  /** The STRING twin that carries values not fitting the type (only when some record has one). */
  twin?: { id: string; longName: string };
}

interface TopicPlan {
  summary: TopicSummary;
  scope: string;
  typeId: string;
  attributes: AttributePlan[];
}

/**
 * ReqIF 1.2: one SPEC-OBJECT-TYPE and one SPECIFICATION per topic, one SPEC-OBJECT per record
 * (IDENTIFIER its source id, else "R-<record id>", see `SpecObjectIds`; LONG-NAME its readable
 * id), SPEC-RELATIONs for the traces whose
 * both ends are exported records, one SPEC-RELATION-TYPE per relation type, named link type or
 * trace model role (see reqif/relation-types.ts).
 * Attributes are typed after the form (see `fieldTyping`); a value that does not fit its type goes,
 * as text, to a STRING twin attribute "<name> (as text)" and is reported in `warnings`.
 *
 * A topic with a document outline (contract/outline.ts) has its SPEC-HIERARCHYs nested by it:
 * the records it names in its order, each in the CHILDREN of its parent, then the topic's other
 * records at the top level in `_id` order; a topic without one lists its records flat, in `_id` order.
 *
 * ReqIF puts datatypes and types before the objects, and relations and specifications after
 * them, so records wait in a temporary file and the document is written on close, replaying that
 * file (twice, three times with traces). Memory holds the types, the traces, the ids of records
 * that are trace ends and the topics' outlines, never the records.
 */
export class ReqifWriter extends SpooledWriter {
  readonly extension = 'reqif';
  /** Per topic, the typing of each field by semantic name. */
  private readonly typings: Map<string, FieldTyping>[] = [];
  private maxTextLength = MIN_STRING_LENGTH;
  private readonly notes: string[] = [];
  /** Warnings beyond `KEPT_WARNINGS`, counted only, so memory stays flat however many records. */
  private unkept = 0;
  private readonly identifiers = new SpecObjectIds();
  /** Per topic, its document outline, when it has one. */
  private readonly outlines: (OutlinePlacement | undefined)[] = [];

  constructor(
    out: Writable,
    private readonly options: ReqifWriterOptions = {},
  ) {
    super(out, options.tempDir);
  }

  /**
   * What the file could not carry as it was, one sentence per record and field: values that do not
   * fit their type (kept in the twin attribute) and characters XML cannot hold (replaced by U+FFFD).
   */
  get warnings(): readonly string[] {
    return this.unkept === 0
      ? this.notes
      : [...this.notes, `${this.unkept} more values were changed the same ways; see docs/formats/reqif.md.`];
  }

  private warn(note: string): void {
    if (this.notes.length < KEPT_WARNINGS) this.notes.push(note);
    else this.unkept++;
  }

  protected override observe(part: ExportPart): void {
    if (part.kind === 'topic') {
      const components = componentsByKey(part.topic.schema?.components);
      const typings = new Map<string, FieldTyping>();
      for (const field of part.topic.fields)
        typings.set(field.name, fieldTyping(field, components.get(field.key)));
      this.typings.push(typings);
      this.outlines.push(part.outline && this.placementOf(part.topic, part.outline));
    } else if (part.kind === 'record') {
      const { topic, index } = this.tracker.current;
      this.learn(topic, part.record, this.typings[index]!);
      this.identifiers.note(part.record);
      this.outlines[index]?.note(part.record);
    }
  }

  /**
   * How a topic's records are placed by its outline, or undefined (flat) for an export of a moment
   * before the outline was last put: the service keeps no outline's earlier state.
   */
  private placementOf(topic: ExportedTopic, outline: ExportedOutline): OutlinePlacement | undefined {
    const asOf = this.tracker.header?.asOf;
    if (
      asOf !== undefined &&
      outline.updatedAt !== null &&
      Date.parse(outline.updatedAt) > Date.parse(asOf)
    ) {
      this.warn(
        `${topic.name}: its document outline was changed after ${asOf} and its earlier state is not kept, so its SPECIFICATION lists its records flat, in their usual order.`,
      );
      return undefined;
    }
    return new OutlinePlacement(outline.entries);
  }

  /** Notes what the types must allow (the longest text, the twins) and what to report. */
  private learn(topic: ExportedTopic, record: ExportedRecord, typings: Map<string, FieldTyping>): void {
    const where = `${topic.name}, record ${record.readableId} (${record.id})`;
    const texts: [string, string][] = [
      ['name', record.name],
      ['readable id', record.readableId],
    ];
    for (const [name, value] of Object.entries(record.values)) {
      const typing = typings.get(name);
      const out = written(typing, value);
      if (out.as === 'misfit' && typing) {
        typing.misfits++;
        this.warn(
          `${where}: field "${name}" holds ${preview(out.text)}, which is not ${KIND_NAMES[typing.kind]}; ` +
            `it is kept as text in the attribute "${name}${TWIN_SUFFIX}". Correct the record or the form.`,
        );
      }
      if (out.as === 'string' || out.as === 'misfit') texts.push([`field "${name}"`, out.text]);
    }
    for (const [what, text] of texts) {
      this.maxTextLength = Math.max(this.maxTextLength, text.length);
      if (xmlSafe(text) === text) continue;
      const replaced = [...text].filter((char) => xmlSafe(char) !== char).length;
      this.warn(
        `${where}: the ${what} holds ${replaced} character(s) XML 1.0 cannot carry (control characters, ` +
          `U+FFFE/U+FFFF or lone surrogates); the ReqIF file has U+FFFD in their place. The JSON export keeps them.`,
      );
    }
  }

  protected async produce(): Promise<void> {
    await loadBuilder();
    const header = this.tracker.header;
    const exportedAt = xsdDateTime(header?.exportedAt, new Date().toISOString());
    const plans = this.planTopics();
    await this.identifiers.settle(this.spool.replay());
    const identifierOf = (recordId: string) => this.identifiers.of(recordId);
    const relations = await this.exportedRelations();
    const relationTypes = [
      ...new Map(relations.map((link) => [relationTypeOf(link).id, relationTypeOf(link)])).values(),
    ];
    const emit = (text: string) => writeChunk(this.out, text);

    await emit(`<?xml version="1.0" encoding="UTF-8"?>\n<REQ-IF xmlns="${REQIF_NAMESPACE}">\n`);
    await emit(serialize(this.headerXml(exportedAt), 1));
    await emit('  <CORE-CONTENT>\n    <REQ-IF-CONTENT>\n');
    await emit(serialize(this.datatypesXml(plans, exportedAt), 3));
    await emit('      <SPEC-TYPES>\n');
    for (const plan of plans) await emit(specObjectTypeXml(plan, exportedAt));
    await emit(serialize(otherTypesXml(relationTypes, exportedAt), 4));
    await emit('      </SPEC-TYPES>\n');

    await emit('      <SPEC-OBJECTS>\n');
    for await (const { topic, record } of this.spool.replay()) {
      await emit(specObjectXml(plans[topic]!, record, identifierOf(record.id), exportedAt));
    }
    await emit('      </SPEC-OBJECTS>\n');
    if (relations.length > 0) await emit(serialize(specRelationsXml(relations, identifierOf, exportedAt), 3));

    await emit('      <SPECIFICATIONS>\n');
    const records = this.spool.replay()[Symbol.asyncIterator]();
    let next = await records.next();
    for (const [index, plan] of plans.entries()) {
      const [start, end] = splitAtMarker(specificationXml(plan, exportedAt), 4);
      await emit(start);
      // The records the outline places first, nested by it; then the others, top-level, in `_id` order.
      const outline = this.outlines[index];
      if (outline)
        for (const xml of nestedHierarchiesXml(outline.placed(), (recordId, pad) =>
          hierarchyStartXml(recordId, identifierOf(recordId), outline.lastChange(recordId, exportedAt), pad),
        ))
          await emit(xml);
      for (; !next.done && next.value.topic === index; next = await records.next()) {
        const { record } = next.value;
        if (outline?.places(record.id)) continue;
        await emit(
          hierarchyStartXml(
            record.id,
            identifierOf(record.id),
            lastChange(record, exportedAt),
            HIERARCHY_PAD,
          ) + `${HIERARCHY_PAD}</SPEC-HIERARCHY>\n`,
        );
      }
      await emit(end);
    }
    await emit('      </SPECIFICATIONS>\n    </REQ-IF-CONTENT>\n  </CORE-CONTENT>\n</REQ-IF>\n');
  }

  private planTopics(): TopicPlan[] {
    const scopes = new Set<string>();
    return this.tracker.topics.map((summary, index) => {
      const { topic } = summary;
      // The history id keeps types stable across re-approvals; a second revision of the same
      // topic in one export needs its own scope.
      const scope = scopes.has(topic.historyId) ? `${topic.revisionId}/${index}` : topic.historyId;
      scopes.add(scope);
      const facts = recordAttributes(topic.presentation);
      const columns = new SemanticColumns(facts.map((a) => a.name)).add(summary.fields);
      const attributes: AttributePlan[] = facts.map(({ name, value }) => ({
        id: hashedId('AD', scope, 'record', name),
        longName: name,
        value,
        datatypeId: STRING_DATATYPE_ID,
      }));
      const typings = this.typings[index] ?? new Map<string, FieldTyping>();
      columns.fields.forEach((field, column) => {
        const origin = field.source === 'data' ? 'data' : 'form';
        const longName = columns.headers[column]!;
        const typing = typings.get(field.name);
        const attribute: AttributePlan = {
          id: hashedId('AD', scope, origin, field.key),
          longName,
          value: (record) => valueOf(record, field.name),
          typing,
          datatypeId: datatypeIdOf(scope, typing),
        };
        if (typing?.kind === 'enumeration')
          attribute.enumeration = { multi: typing.multi === true, values: enumValues(scope, field) };
        if (typing && typing.misfits > 0)
          attribute.twin = {
            id: hashedId('AD', scope, origin, field.key, 'text'),
            longName: `${longName}${TWIN_SUFFIX}`,
          };
        attributes.push(attribute);
      });
      return { summary, scope, typeId: hashedId('SOT', scope), attributes };
    });
  }

  /**
   * Links between two exported records: a trace whose pair of topics has a named link type is one
   * relation of that type; any other trace is one relation per relation type it carries, the one
   * its trace model role stands on of the role's type.
   */
  private async exportedRelations(): Promise<Link[]> {
    const exported = await this.exportedTraceEnds();
    const seen = new Set<string>();
    const links = this.tracker.traces.flatMap((trace) =>
      trace.linkType ? [{ trace, relationType: trace.linkType }] : linksOf(trace, this.tracker.roles),
    );
    return links.filter(({ trace: { id, source, target }, relationType }) => {
      const key = `${id}\u0000${relationType}`;
      if (seen.has(key) || source.type !== RECORD_NODE_TYPE || target.type !== RECORD_NODE_TYPE) return false;
      seen.add(key);
      return exported.has(source.id) && exported.has(target.id);
    });
  }

  private headerXml(exportedAt: string): XMLBuilder {
    const { header, topics } = this.tracker;
    const names = topics.map(({ topic }) => topic.name);
    const title = this.options.title ?? (names.length > 0 ? names.join(', ') : 'RXS export');
    const root = newFragment();
    const reqifHeader = root
      .ele('THE-HEADER')
      .ele(
        'REQ-IF-HEADER',
        xmlAttributes({ IDENTIFIER: hashedId('HEADER', exportedAt, ...(header?.revisionIds ?? [])) }),
      );
    const revisions = topics.map(({ topic }) => {
      const approval = topic.approval;
      const approved = approval
        ? `, ${approval.meaning} by ${approval.byEmail ?? approval.by} at ${approval.at}` +
          `${approval.reason ? ` ("${approval.reason}")` : ''}, signed by ${approval.signature}`
        : '';
      return `${topic.name} ${topic.version} (revision ${topic.revisionId}${approved})`;
    });
    const shown = this.notes.slice(0, COMMENT_WARNINGS);
    const more = this.notes.length - shown.length + this.unkept;
    const warnings =
      shown.length === 0
        ? ''
        : `\nWarnings:\n${shown.map((note) => `- ${note}`).join('\n')}${more > 0 ? `\n- and ${more} more.` : ''}`;
    reqifHeader
      .ele('COMMENT')
      .txt(xmlText(`Snapshot exported by RXS: ${revisions.join('; ') || 'no topics'}.${warnings}`));
    reqifHeader.ele('CREATION-TIME').txt(exportedAt);
    reqifHeader.ele('REQ-IF-TOOL-ID').txt(REQIF_TOOL_ID);
    reqifHeader.ele('REQ-IF-VERSION').txt('1.0');
    reqifHeader
      .ele('SOURCE-TOOL-ID')
      .txt(xmlText(`RXS records service ${header?.servers.records ?? ''}`.trim()));
    reqifHeader.ele('TITLE').txt(xmlText(title));
    return root;
  }

  private datatypesXml(plans: TopicPlan[], exportedAt: string): XMLBuilder {
    const root = newFragment();
    const datatypes = root.ele('DATATYPES');
    const common = (id: string, longName: string) => ({
      IDENTIFIER: id,
      'LAST-CHANGE': exportedAt,
      'LONG-NAME': longName,
    });
    datatypes.ele(
      'DATATYPE-DEFINITION-STRING',
      xmlAttributes({ ...common(STRING_DATATYPE_ID, 'String'), 'MAX-LENGTH': String(this.maxTextLength) }),
    );
    const kinds = new Map<string, Pick<FieldTyping, 'kind' | 'accuracy'>>();
    for (const plan of plans)
      for (const { typing, datatypeId } of plan.attributes) if (typing) kinds.set(datatypeId, typing);
    for (const [id, typing] of kinds) {
      if (typing.kind === 'integer')
        datatypes.ele(
          'DATATYPE-DEFINITION-INTEGER',
          xmlAttributes({ ...common(id, 'Integer'), MAX: INTEGER_MAX, MIN: INTEGER_MIN }),
        );
      else if (typing.kind === 'real')
        datatypes.ele(
          'DATATYPE-DEFINITION-REAL',
          xmlAttributes({
            ...common(id, `Real (${typing.accuracy} decimal places)`),
            ACCURACY: String(typing.accuracy),
            MAX: REAL_LIMIT,
            MIN: `-${REAL_LIMIT}`,
          }),
        );
      else if (typing.kind === 'boolean')
        datatypes.ele('DATATYPE-DEFINITION-BOOLEAN', xmlAttributes(common(id, 'Boolean')));
      else if (typing.kind === 'date')
        datatypes.ele('DATATYPE-DEFINITION-DATE', xmlAttributes(common(id, 'Date')));
    }
    for (const plan of plans) {
      for (const { longName, enumeration, datatypeId } of plan.attributes) {
        if (!enumeration) continue;
        const datatype = datatypes.ele(
          'DATATYPE-DEFINITION-ENUMERATION',
          xmlAttributes(common(datatypeId, `${plan.summary.topic.name}: ${longName}`)),
        );
        const values = datatype.ele('SPECIFIED-VALUES');
        enumeration.values.forEach(({ id, label, value }, key) => {
          values
            .ele('ENUM-VALUE', xmlAttributes(common(id, label)))
            .ele('PROPERTIES')
            .ele('EMBEDDED-VALUE', xmlAttributes({ KEY: String(key), 'OTHER-CONTENT': cellText(value) }));
        });
      }
    }
    return root;
  }
}

function datatypeIdOf(scope: string, typing: FieldTyping | undefined): string {
  switch (typing?.kind) {
    case 'integer':
      return INTEGER_DATATYPE_ID;
    case 'real':
      return realDatatypeId(typing.accuracy ?? DEFAULT_ACCURACY);
    case 'boolean':
      return BOOLEAN_DATATYPE_ID;
    case 'date':
      return DATE_DATATYPE_ID;
    case 'enumeration':
      return hashedId('DT', scope, typing.field.key);
    default:
      return STRING_DATATYPE_ID;
  }
}

function isEnumeration(
  field: ExportedField,
): field is ExportedField & { options: NonNullable<ExportedField['options']> } {
  return OPTION_TYPES.has(field.type ?? '') && Array.isArray(field.options);
}

/** The option a value stands for: by value, or by label when the export shows labels. */
function findOption(field: ExportedField, value: unknown) {
  return (
    field.options?.find((option) => option.value === value) ??
    field.options?.find((option) => option.label === value)
  );
}

/** The schema's options, each once; values that are not options go to the twin, not here. */
function enumValues(scope: string, field: ExportedField): EnumValuePlan[] {
  const values = new Map<string, EnumValuePlan>();
  for (const { value, label } of field.options ?? []) {
    const key = valueKey(value);
    if (!values.has(key)) values.set(key, { id: enumValueId(scope, field, value), label, value });
  }
  return [...values.values()];
}

function enumValueId(scope: string, field: ExportedField, value: unknown): string {
  return hashedId('EV', scope, field.key, valueKey(value));
}

const DEFINITION_ELEMENTS: Record<AttributeKind, string> = {
  string: 'STRING',
  integer: 'INTEGER',
  real: 'REAL',
  boolean: 'BOOLEAN',
  date: 'DATE',
  enumeration: 'ENUMERATION',
};

/**
 * A topic's SPEC-OBJECT-TYPE as text: a topic can have thousands of fields, and an xmlbuilder2
 * tree of that size takes seconds to build.
 */
function specObjectTypeXml(plan: TopicPlan, exportedAt: string): string {
  const pad = '        ';
  const inner = `${pad}    `;
  let xml =
    `${pad}<SPEC-OBJECT-TYPE IDENTIFIER="${attr(plan.typeId)}" LAST-CHANGE="${attr(exportedAt)}" LONG-NAME="${attr(plan.summary.topic.presentation.reqifTypeName)}">\n` +
    `${pad}  <SPEC-ATTRIBUTES>\n`;
  for (const { id, longName, typing, datatypeId, enumeration, twin } of plan.attributes) {
    const multi = enumeration ? ` MULTI-VALUED="${enumeration.multi}"` : '';
    xml += definitionXml(
      DEFINITION_ELEMENTS[typing?.kind ?? 'string'],
      id,
      longName,
      datatypeId,
      exportedAt,
      inner,
      multi,
    );
    if (twin) xml += definitionXml('STRING', twin.id, twin.longName, STRING_DATATYPE_ID, exportedAt, inner);
  }
  return `${xml}${pad}  </SPEC-ATTRIBUTES>\n${pad}</SPEC-OBJECT-TYPE>\n`;
}

function definitionXml(
  kind: string,
  id: string,
  longName: string,
  datatypeId: string,
  exportedAt: string,
  pad: string,
  extra = '',
): string {
  return (
    `${pad}<ATTRIBUTE-DEFINITION-${kind} IDENTIFIER="${attr(id)}" LAST-CHANGE="${attr(exportedAt)}" LONG-NAME="${attr(longName)}"${extra}>\n` +
    `${pad}  <TYPE>\n${pad}    <DATATYPE-DEFINITION-${kind}-REF>${text(datatypeId)}</DATATYPE-DEFINITION-${kind}-REF>\n${pad}  </TYPE>\n` +
    `${pad}</ATTRIBUTE-DEFINITION-${kind}>\n`
  );
}

/** A SPEC-RELATION-TYPE: its IDENTIFIER and LONG-NAME. */
interface RelationTypePlan {
  id: string;
  longName: string;
}

/**
 * The SPEC-RELATION-TYPE of a link: a role's (LONG-NAME its forward name, IDENTIFIER
 * `roleRelationTypeId`), else the relation type's or named link type's, by its name.
 */
function relationTypeOf(link: Link): RelationTypePlan {
  if (link.role) return { id: roleRelationTypeId(link.role.role), longName: link.role.role.forward_name };
  return { id: readableId('RT', link.relationType), longName: link.relationType };
}

/** The SPECIFICATION-TYPE and the SPEC-RELATION-TYPEs, which follow the object types. */
function otherTypesXml(relationTypes: RelationTypePlan[], exportedAt: string): XMLBuilder {
  const types = newFragment();
  const specificationType = types.ele(
    'SPECIFICATION-TYPE',
    xmlAttributes({
      IDENTIFIER: SPECIFICATION_TYPE_ID,
      'LAST-CHANGE': exportedAt,
      'LONG-NAME': 'RXS knowledge topic',
    }),
  );
  const topicDefinitions = specificationType.ele('SPEC-ATTRIBUTES');
  for (const { id, name } of TOPIC_ATTRIBUTES) {
    stringDefinition(topicDefinitions, { IDENTIFIER: id, 'LAST-CHANGE': exportedAt, 'LONG-NAME': name });
  }
  for (const { id, longName } of relationTypes) {
    const relationDefinitions = types
      .ele(
        'SPEC-RELATION-TYPE',
        xmlAttributes({
          IDENTIFIER: id,
          'LAST-CHANGE': exportedAt,
          'LONG-NAME': longName,
        }),
      )
      .ele('SPEC-ATTRIBUTES');
    stringDefinition(relationDefinitions, {
      IDENTIFIER: suspectDefinitionId(id),
      'LAST-CHANGE': exportedAt,
      'LONG-NAME': SUSPECT_ATTRIBUTE,
    });
  }
  return types;
}

function stringDefinition(parent: XMLBuilder, attributes: Record<string, string>): void {
  parent
    .ele('ATTRIBUTE-DEFINITION-STRING', xmlAttributes(attributes))
    .ele('TYPE')
    .ele('DATATYPE-DEFINITION-STRING-REF')
    .txt(STRING_DATATYPE_ID);
}

function stringValueElement(parent: XMLBuilder, definitionId: string, value: string): void {
  parent
    .ele('ATTRIBUTE-VALUE-STRING', xmlAttributes({ 'THE-VALUE': value }))
    .ele('DEFINITION')
    .ele('ATTRIBUTE-DEFINITION-STRING-REF')
    .txt(definitionId);
}

/** A simple attribute value (STRING, INTEGER, REAL, BOOLEAN, DATE) as text. */
function simpleValue(kind: string, definitionId: string, value: string, pad: string): string {
  return (
    `${pad}<ATTRIBUTE-VALUE-${kind} THE-VALUE="${attr(value)}">\n` +
    `${pad}  <DEFINITION>\n${pad}    <ATTRIBUTE-DEFINITION-${kind}-REF>${text(definitionId)}</ATTRIBUTE-DEFINITION-${kind}-REF>\n${pad}  </DEFINITION>\n` +
    `${pad}</ATTRIBUTE-VALUE-${kind}>\n`
  );
}

/** When a record last changed, as the service said (its SPEC-OBJECT's and SPEC-HIERARCHY's LAST-CHANGE). */
const changedAtOf = (record: ExportedRecord) => record.updatedAt ?? record.createdAt;

function lastChange(record: ExportedRecord, exportedAt: string): string {
  return xsdDateTime(changedAtOf(record), exportedAt);
}

/**
 * One SPEC-OBJECT as text. Records are the bulk of a file, so they are written as strings directly
 * (with the same escaping): an xmlbuilder2 tree per record is about 50 times slower.
 */
function specObjectXml(
  plan: TopicPlan,
  record: ExportedRecord,
  identifier: string,
  exportedAt: string,
): string {
  const pad = '        ';
  const inner = `${pad}    `;
  let xml =
    `${pad}<SPEC-OBJECT IDENTIFIER="${attr(identifier)}" LAST-CHANGE="${attr(lastChange(record, exportedAt))}" LONG-NAME="${attr(record.readableId)}">\n` +
    `${pad}  <TYPE>\n${pad}    <SPEC-OBJECT-TYPE-REF>${text(plan.typeId)}</SPEC-OBJECT-TYPE-REF>\n${pad}  </TYPE>\n`;
  let values = '';
  for (const { id, value, typing, twin } of plan.attributes) {
    const out = written(typing, value(record));
    switch (out.as) {
      case 'none':
        break;
      case 'string':
        values += simpleValue('STRING', id, out.text, inner);
        break;
      case 'typed':
        values += simpleValue(DEFINITION_ELEMENTS[typing!.kind], id, out.text, inner);
        break;
      case 'misfit':
        values += simpleValue('STRING', twin!.id, out.text, inner);
        break;
      case 'enumeration': {
        const refs = [
          ...new Set(out.options.map((option) => enumValueId(plan.scope, typing!.field, option))),
        ];
        values +=
          `${inner}<ATTRIBUTE-VALUE-ENUMERATION>\n` +
          `${inner}  <DEFINITION>\n${inner}    <ATTRIBUTE-DEFINITION-ENUMERATION-REF>${text(id)}</ATTRIBUTE-DEFINITION-ENUMERATION-REF>\n${inner}  </DEFINITION>\n` +
          `${inner}  <VALUES>\n${refs.map((ref) => `${inner}    <ENUM-VALUE-REF>${text(ref)}</ENUM-VALUE-REF>\n`).join('')}${inner}  </VALUES>\n` +
          `${inner}</ATTRIBUTE-VALUE-ENUMERATION>\n`;
      }
    }
  }
  xml += values ? `${pad}  <VALUES>\n${values}${pad}  </VALUES>\n` : `${pad}  <VALUES/>\n`;
  return `${xml}${pad}</SPEC-OBJECT>\n`;
}

function specRelationsXml(
  relations: Link[],
  identifierOf: (recordId: string) => string,
  exportedAt: string,
): XMLBuilder {
  const root = newFragment();
  const list = root.ele('SPEC-RELATIONS');
  for (const link of relations) {
    const { trace, relationType, role } = link;
    const type = relationTypeOf(link);
    // A role's relation runs from the record at its `from` end (its type's name reads from there).
    const [source, target] = role ? [role.from, role.to] : [trace.source, trace.target];
    const relation = list.ele(
      'SPEC-RELATION',
      xmlAttributes({
        IDENTIFIER: hashedId('REL', trace.id, relationType),
        'LAST-CHANGE': exportedAt,
        'LONG-NAME': relationType,
      }),
    );
    stringValueElement(relation.ele('VALUES'), suspectDefinitionId(type.id), String(trace.suspect === true));
    relation.ele('TYPE').ele('SPEC-RELATION-TYPE-REF').txt(type.id);
    relation.ele('SOURCE').ele('SPEC-OBJECT-REF').txt(identifierOf(source.id));
    relation.ele('TARGET').ele('SPEC-OBJECT-REF').txt(identifierOf(target.id));
  }
  return root;
}

function specificationXml(plan: TopicPlan, exportedAt: string): XMLBuilder {
  const { topic } = plan.summary;
  const root = newFragment();
  const specification = root.ele(
    'SPECIFICATION',
    xmlAttributes({
      IDENTIFIER: hashedId('SPEC', plan.scope),
      'LAST-CHANGE': exportedAt,
      'LONG-NAME': topic.name,
    }),
  );
  specification.ele('TYPE').ele('SPECIFICATION-TYPE-REF').txt(SPECIFICATION_TYPE_ID);
  const values = specification.ele('VALUES');
  for (const { id, value } of TOPIC_ATTRIBUTES) stringValueElement(values, id, value(topic));
  childrenMarker(specification.ele('CHILDREN'));
  return root;
}

/** Where a SPECIFICATION's top-level SPEC-HIERARCHYs start; each level below is 4 spaces further in. */
const HIERARCHY_PAD = '            ';

/** A SPEC-HIERARCHY's start tag and OBJECT, at `pad`: the entry's CHILDREN or its end tag follow. */
function hierarchyStartXml(recordId: string, identifier: string, changedAt: string, pad: string): string {
  return (
    `${pad}<SPEC-HIERARCHY IDENTIFIER="${attr(hierarchyId(recordId))}" LAST-CHANGE="${attr(changedAt)}">\n` +
    `${pad}  <OBJECT>\n${pad}    <SPEC-OBJECT-REF>${text(identifier)}</SPEC-OBJECT-REF>\n${pad}  </OBJECT>\n`
  );
}

/**
 * The SPEC-HIERARCHYs of an outline's entries as text, each entry inside the CHILDREN of its parent
 * (the nearest entry before it one level up). The entries form an outline (first at level 1, no
 * level skipped, see contract/outline-rules.ts), so the elements open are always the entry's
 * ancestors, one per level above it.
 */
function* nestedHierarchiesXml(
  entries: readonly OutlineEntryShape[],
  startXml: (recordId: string, pad: string) => string,
): Generator<string> {
  const padOf = (level: number) => HIERARCHY_PAD + '    '.repeat(level - 1);
  /** Entries whose CHILDREN are open: the levels 1 to `open`. */
  let open = 0;
  for (let i = 0; i < entries.length; i++) {
    const { record_id, level } = entries[i]!;
    const next = entries[i + 1]?.level ?? 1;
    const pad = padOf(level);
    if (next > level) {
      yield `${startXml(record_id, pad)}${pad}  <CHILDREN>\n`;
      open = level;
      continue;
    }
    let xml = `${startXml(record_id, pad)}${pad}</SPEC-HIERARCHY>\n`;
    for (; open >= next; open--) xml += `${padOf(open)}  </CHILDREN>\n${padOf(open)}</SPEC-HIERARCHY>\n`;
    yield xml;
  }
}

/**
 * A topic's document outline as the writer follows it: the records it names and, of those exported,
 * when each last changed (its SPEC-HIERARCHY's LAST-CHANGE, written once every record has passed).
 * Memory holds the outline, never the records.
 */
class OutlinePlacement {
  private readonly named: Set<string>;
  /** The exported records the outline names, with the date their hierarchy entry carries. */
  private readonly exported = new Map<string, string | null | undefined>();

  constructor(private readonly entries: readonly OutlineEntryShape[]) {
    this.named = new Set(entries.map((entry) => entry.record_id));
  }

  note(record: ExportedRecord): void {
    if (this.named.has(record.id)) this.exported.set(record.id, changedAtOf(record));
  }

  /** Whether the outline places this exported record (it is not written again after the outline). */
  places(recordId: string): boolean {
    return this.exported.has(recordId);
  }

  /** The entries of the exported records: the others left out, their descendants one level up. */
  placed(): OutlineEntryShape[] {
    return keptOutline(this.entries, (entry) => this.exported.has(entry.record_id));
  }

  lastChange(recordId: string, exportedAt: string): string {
    return xsdDateTime(this.exported.get(recordId), exportedAt);
  }
}
