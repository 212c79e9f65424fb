import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { fragment } from 'xmlbuilder2';
import { MULTI_VALUE_TYPES, OPTION_TYPES } from '../../mapping/options.js';
import type { ExportedField, ExportedRecord, ExportedTopic, ExportPart } from '../model.js';
import { cellText } from './cells.js';
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

/** Attributes every record carries before its fields, under the names ReqIF tools map by default. */
const RECORD_ATTRIBUTES: { name: string; value: (record: ExportedRecord) => string }[] = [
  { name: 'ReqIF.ForeignID', value: (record) => record.id },
  { name: 'ReqIF.Name', value: (record) => record.name },
  { name: 'RXS.Version', value: (record) => record.version },
];

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
 */
export function specObjectId(recordId: string): string {
  return readableId('R', recordId);
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

/** What a topic's select, radio, checklist or taglist field held, learnt while records pass. */
interface EnumUsage {
  field: ExportedField;
  multi: boolean;
  /** Values found in records that are not options of the schema, by `valueKey`. */
  extras: Map<string, unknown>;
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
  enumeration?: { datatypeId: string; multi: boolean; values: EnumValuePlan[]; field: ExportedField };
}

interface TopicPlan {
  summary: TopicSummary;
  scope: string;
  typeId: string;
  attributes: AttributePlan[];
}

/**
 * ReqIF 1.2: one SPEC-OBJECT-TYPE and one SPECIFICATION per topic, one SPEC-OBJECT per record
 * (IDENTIFIER "R-<record id>"), SPEC-RELATIONs for the traces whose both ends are exported
 * records, one SPEC-RELATION-TYPE per relation type. Fields are string attributes, except select
 * and radio (enumeration) and checklist and taglist (multi-valued enumeration); values records
 * hold that are not options are added to the enumeration rather than dropped.
 *
 * ReqIF puts datatypes and types before the objects, and relations and specifications after
 * them, so records wait in a temporary file and the document is written on close, replaying that
 * file (twice, three times with traces). Memory holds the types, the traces and the ids of
 * records that are trace ends, never the records.
 */
export class ReqifWriter extends SpooledWriter {
  readonly extension = 'reqif';
  private readonly enumUsage: Map<string, EnumUsage>[] = [];
  private maxTextLength = MIN_STRING_LENGTH;

  constructor(
    out: Writable,
    private readonly options: ReqifWriterOptions = {},
  ) {
    super(out, options.tempDir);
  }

  protected override observe(part: ExportPart): void {
    if (part.kind === 'topic') {
      const usage = new Map<string, EnumUsage>();
      for (const field of part.topic.fields) {
        if (!isEnumeration(field)) continue;
        usage.set(field.name, { field, multi: MULTI_VALUE_TYPES.has(field.type ?? ''), extras: new Map() });
      }
      this.enumUsage.push(usage);
    } else if (part.kind === 'record') {
      this.learn(part.record, this.enumUsage[this.tracker.current.index]!);
    }
  }

  /** Notes what the types must allow: the longest text, and enumeration values beyond the options. */
  private learn(record: ExportedRecord, usage: Map<string, EnumUsage>): void {
    for (const text of [record.id, record.name, record.version])
      this.maxTextLength = Math.max(this.maxTextLength, text.length);
    for (const [name, value] of Object.entries(record.values)) {
      const enumUsage = usage.get(name);
      if (!enumUsage) {
        this.maxTextLength = Math.max(this.maxTextLength, cellText(value).length);
        continue;
      }
      const items = Array.isArray(value) ? value : [value];
      if (items.length > 1) enumUsage.multi = true;
      for (const item of items) {
        if (item !== null && item !== undefined && !findOption(enumUsage.field, item))
          enumUsage.extras.set(valueKey(item), item);
      }
    }
  }

  protected async produce(): Promise<void> {
    await loadBuilder();
    const header = this.tracker.header;
    const exportedAt = xsdDateTime(header?.exportedAt, new Date().toISOString());
    const plans = this.planTopics();
    const relations = await this.exportedRelations();
    const relationTypes = [...new Set(relations.map((link) => link.relationType))];
    const emit = (text: string) => writeChunk(this.out, text);

    await emit(`<?xml version="1.0" encoding="UTF-8"?>\n<REQ-IF xmlns="${REQIF_NAMESPACE}">\n`);
    await emit(serialize(this.headerXml(exportedAt), 1));
    await emit('  <CORE-CONTENT>\n    <REQ-IF-CONTENT>\n');
    await emit(serialize(this.datatypesXml(plans, exportedAt), 3));
    await emit(serialize(specTypesXml(plans, relationTypes, exportedAt), 3));

    await emit('      <SPEC-OBJECTS>\n');
    for await (const { topic, record } of this.spool.replay()) {
      await emit(specObjectXml(plans[topic]!, record, exportedAt));
    }
    await emit('      </SPEC-OBJECTS>\n');
    if (relations.length > 0) await emit(serialize(specRelationsXml(relations, exportedAt), 3));

    await emit('      <SPECIFICATIONS>\n');
    const records = this.spool.replay()[Symbol.asyncIterator]();
    let next = await records.next();
    for (const [index, plan] of plans.entries()) {
      const [start, end] = splitAtMarker(specificationXml(plan, exportedAt), 4);
      await emit(start);
      for (; !next.done && next.value.topic === index; next = await records.next()) {
        await emit(hierarchyXml(next.value.record, exportedAt));
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
      const columns = new SemanticColumns(RECORD_ATTRIBUTES.map((a) => a.name)).add(summary.fields);
      const attributes: AttributePlan[] = RECORD_ATTRIBUTES.map(({ name, value }) => ({
        id: hashedId('AD', scope, 'record', name),
        longName: name,
        value,
      }));
      columns.fields.forEach((field, column) => {
        const attribute: AttributePlan = {
          id: hashedId('AD', scope, field.source === 'data' ? 'data' : 'form', field.key),
          longName: columns.headers[column]!,
          value: (record) => valueOf(record, field.name),
        };
        const usage = this.enumUsage[index]?.get(field.name);
        if (usage && isEnumeration(field)) attribute.enumeration = enumerationPlan(scope, field, usage);
        attributes.push(attribute);
      });
      return { summary, scope, typeId: hashedId('SOT', scope), attributes };
    });
  }

  /** Links between two exported records, each trace and relation type once. */
  private async exportedRelations(): Promise<Link[]> {
    const exported = await this.exportedTraceEnds();
    const seen = new Set<string>();
    return this.tracker.traces.flatMap(linksOf).filter(({ trace: { id, source, target }, relationType }) => {
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
    const revisions = topics.map(
      ({ topic }) => `${topic.name} ${topic.version} (revision ${topic.revisionId})`,
    );
    reqifHeader
      .ele('COMMENT')
      .txt(xmlText(`Snapshot exported by RXS: ${revisions.join('; ') || 'no topics'}.`));
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
    datatypes.ele(
      'DATATYPE-DEFINITION-STRING',
      xmlAttributes({
        IDENTIFIER: STRING_DATATYPE_ID,
        'LAST-CHANGE': exportedAt,
        'LONG-NAME': 'String',
        'MAX-LENGTH': String(this.maxTextLength),
      }),
    );
    for (const plan of plans) {
      for (const { longName, enumeration } of plan.attributes) {
        if (!enumeration) continue;
        const datatype = datatypes.ele(
          'DATATYPE-DEFINITION-ENUMERATION',
          xmlAttributes({
            IDENTIFIER: enumeration.datatypeId,
            'LAST-CHANGE': exportedAt,
            'LONG-NAME': `${plan.summary.topic.name}: ${longName}`,
          }),
        );
        const values = datatype.ele('SPECIFIED-VALUES');
        enumeration.values.forEach(({ id, label, value }, key) => {
          values
            .ele(
              'ENUM-VALUE',
              xmlAttributes({ IDENTIFIER: id, 'LAST-CHANGE': exportedAt, 'LONG-NAME': label }),
            )
            .ele('PROPERTIES')
            .ele('EMBEDDED-VALUE', xmlAttributes({ KEY: String(key), 'OTHER-CONTENT': cellText(value) }));
        });
      }
    }
    return root;
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

function enumerationPlan(
  scope: string,
  field: ExportedField,
  usage: EnumUsage,
): AttributePlan['enumeration'] {
  const values = new Map<string, EnumValuePlan>();
  const add = (value: unknown, label: string) => {
    const key = valueKey(value);
    if (!values.has(key)) values.set(key, { id: hashedId('EV', scope, field.key, key), label, value });
  };
  for (const option of field.options ?? []) add(option.value, option.label);
  for (const extra of usage.extras.values()) add(extra, cellText(extra));
  return {
    datatypeId: hashedId('DT', scope, field.key),
    multi: usage.multi,
    values: [...values.values()],
    field,
  };
}

function enumValueRefs(
  enumeration: NonNullable<AttributePlan['enumeration']>,
  scope: string,
  value: unknown,
): string[] {
  const items = Array.isArray(value) ? value : [value];
  const refs = new Set<string>();
  for (const item of items) {
    if (item === null || item === undefined) continue;
    const option = findOption(enumeration.field, item);
    refs.add(hashedId('EV', scope, enumeration.field.key, valueKey(option ? option.value : item)));
  }
  return [...refs];
}

function specTypesXml(plans: TopicPlan[], relationTypes: string[], exportedAt: string): XMLBuilder {
  const root = newFragment();
  const types = root.ele('SPEC-TYPES');
  for (const { summary, typeId, attributes } of plans) {
    const type = types.ele(
      'SPEC-OBJECT-TYPE',
      xmlAttributes({ IDENTIFIER: typeId, 'LAST-CHANGE': exportedAt, 'LONG-NAME': summary.topic.name }),
    );
    const definitions = type.ele('SPEC-ATTRIBUTES');
    for (const { id, longName, enumeration } of attributes) {
      const common = { IDENTIFIER: id, 'LAST-CHANGE': exportedAt, 'LONG-NAME': longName };
      if (enumeration) {
        definitions
          .ele(
            'ATTRIBUTE-DEFINITION-ENUMERATION',
            xmlAttributes({ ...common, 'MULTI-VALUED': String(enumeration.multi) }),
          )
          .ele('TYPE')
          .ele('DATATYPE-DEFINITION-ENUMERATION-REF')
          .txt(enumeration.datatypeId);
      } else {
        stringDefinition(definitions, common);
      }
    }
  }
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
  for (const relationType of relationTypes) {
    types.ele(
      'SPEC-RELATION-TYPE',
      xmlAttributes({
        IDENTIFIER: readableId('RT', relationType),
        'LAST-CHANGE': exportedAt,
        'LONG-NAME': relationType,
      }),
    );
  }
  return root;
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

function stringValue(definitionId: string, value: string, pad: string): string {
  return (
    `${pad}<ATTRIBUTE-VALUE-STRING THE-VALUE="${attr(value)}">\n` +
    `${pad}  <DEFINITION>\n${pad}    <ATTRIBUTE-DEFINITION-STRING-REF>${text(definitionId)}</ATTRIBUTE-DEFINITION-STRING-REF>\n${pad}  </DEFINITION>\n` +
    `${pad}</ATTRIBUTE-VALUE-STRING>\n`
  );
}

function lastChange(record: ExportedRecord, exportedAt: string): string {
  return xsdDateTime(record.updatedAt ?? record.createdAt, exportedAt);
}

/**
 * One SPEC-OBJECT as text. Records are the bulk of a file, so they are written as strings directly
 * (with the same escaping) instead of through an xmlbuilder2 tree per record, which was ~50x slower.
 */
function specObjectXml(plan: TopicPlan, record: ExportedRecord, exportedAt: string): string {
  const pad = '        ';
  let xml =
    `${pad}<SPEC-OBJECT IDENTIFIER="${attr(specObjectId(record.id))}" LAST-CHANGE="${attr(lastChange(record, exportedAt))}" LONG-NAME="${attr(record.name)}">\n` +
    `${pad}  <TYPE>\n${pad}    <SPEC-OBJECT-TYPE-REF>${text(plan.typeId)}</SPEC-OBJECT-TYPE-REF>\n${pad}  </TYPE>\n`;
  let values = '';
  for (const { id, value, enumeration } of plan.attributes) {
    const raw = value(record);
    if (raw === undefined || raw === null) continue;
    if (!enumeration) {
      values += stringValue(id, cellText(raw), `${pad}    `);
      continue;
    }
    const refs = enumValueRefs(enumeration, plan.scope, raw);
    if (refs.length === 0) continue;
    values +=
      `${pad}    <ATTRIBUTE-VALUE-ENUMERATION>\n` +
      `${pad}      <DEFINITION>\n${pad}        <ATTRIBUTE-DEFINITION-ENUMERATION-REF>${text(id)}</ATTRIBUTE-DEFINITION-ENUMERATION-REF>\n${pad}      </DEFINITION>\n` +
      `${pad}      <VALUES>\n${refs.map((ref) => `${pad}        <ENUM-VALUE-REF>${text(ref)}</ENUM-VALUE-REF>\n`).join('')}${pad}      </VALUES>\n` +
      `${pad}    </ATTRIBUTE-VALUE-ENUMERATION>\n`;
  }
  xml += values ? `${pad}  <VALUES>\n${values}${pad}  </VALUES>\n` : `${pad}  <VALUES/>\n`;
  return `${xml}${pad}</SPEC-OBJECT>\n`;
}

function specRelationsXml(relations: Link[], exportedAt: string): XMLBuilder {
  const root = newFragment();
  const list = root.ele('SPEC-RELATIONS');
  for (const { trace, relationType } of relations) {
    const relation = list.ele(
      'SPEC-RELATION',
      xmlAttributes({
        IDENTIFIER: hashedId('REL', trace.id, relationType),
        'LAST-CHANGE': exportedAt,
        'LONG-NAME': relationType,
      }),
    );
    relation.ele('TYPE').ele('SPEC-RELATION-TYPE-REF').txt(readableId('RT', relationType));
    relation.ele('SOURCE').ele('SPEC-OBJECT-REF').txt(specObjectId(trace.source.id));
    relation.ele('TARGET').ele('SPEC-OBJECT-REF').txt(specObjectId(trace.target.id));
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

function hierarchyXml(record: ExportedRecord, exportedAt: string): string {
  const pad = '            ';
  return (
    `${pad}<SPEC-HIERARCHY IDENTIFIER="${attr(readableId('H', record.id))}" LAST-CHANGE="${attr(lastChange(record, exportedAt))}">\n` +
    `${pad}  <OBJECT>\n${pad}    <SPEC-OBJECT-REF>${text(specObjectId(record.id))}</SPEC-OBJECT-REF>\n${pad}  </OBJECT>\n` +
    `${pad}</SPEC-HIERARCHY>\n`
  );
}
