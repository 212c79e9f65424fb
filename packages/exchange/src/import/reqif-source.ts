import { clip } from '@rxs/contract/validation';
import { NamedValue } from '../mapping/record-input.js';
import {
  cellTooLarge,
  DistinctColumns,
  importLimits,
  limitError,
  RowBytes,
  tooManyColumns,
  type ImportLimits,
} from './limits.js';
import { openReqifInput } from './reqif-archive.js';
import { Declarations, MAX_QUOTED, ReqifReader, type ReqifReadOptions } from './reqif-events.js';
import { ImportChoiceError, ImportFileError } from './errors.js';
import type { Cell, FactColumn, RowSource, SourceRow } from './source-row.js';
import { CLI_WORDING, listed } from './wording.js';
import { embeddedObjectWarning, XhtmlText } from './xhtml-text.js';

export interface ReqifSourceOptions extends ReqifReadOptions {
  /** The SPEC-OBJECT-TYPE to import, by LONG-NAME; default: the only one, else the topic's. */
  specType?: string;
  /** The name the topic's spec object type has in an export (its ReqIF type name). */
  topicTypeName?: string;
}

interface AttributeDefinition {
  name: string;
  kind: string;
}

interface OpenValue {
  kind: string;
  theValue?: string;
  definition?: string;
  enumRefs: string[];
  xhtml?: XhtmlText;
}

interface OpenObject {
  identifier: string;
  longName?: string;
  type?: string;
  values: OpenValue[];
}

/** The attributes a spec object's facts are read from, by LONG-NAME (`--key` may name them too). */
const FACT_ATTRIBUTES: ReadonlyMap<string, Exclude<FactColumn, 'skip'>> = new Map([
  ['RXS.RecordId', 'id'],
  ['RXS.SourceId', 'sourceId'],
  ['ReqIF.ForeignID', 'readableId'],
  ['RXS.RecordName', 'name'],
  ['RXS.Version', 'version'],
]);

/**
 * Where a record's name is taken from when the spec object has no `RXS.RecordName`, in the order
 * they are looked for: what DOORS, Polarion, Capella, Enterprise Architect and ReqIF Studio name
 * their objects by.
 */
const NAME_SOURCES = ['ReqIF.Name', 'LONG-NAME', 'ReqIF.ChapterName', 'ReqIF.Text'] as const;
type NameSource = (typeof NAME_SOURCES)[number];
/** The attributes of NAME_SOURCES (the LONG-NAME is the spec object's own). */
const isNameAttribute = (name: string): name is Exclude<NameSource, 'LONG-NAME'> =>
  name !== 'LONG-NAME' && (NAME_SOURCES as readonly string[]).includes(name);
/** An attribute of the ReqIF Implementation Guide (`ReqIF.ForeignID`, `ReqIF.Name`, `ReqIF.Text` …). */
const isStandardAttribute = (name: string) => name.startsWith('ReqIF.');
/** Characters of a name taken from the first line of a text. */
export const MAX_NAME_FROM_TEXT = 80;
/** Spec objects a note names one by one. */
const MAX_NAMED = 5;

/**
 * Records of a ReqIF 1.2 file, streamed: the SPEC-OBJECTs of one SPEC-OBJECT-TYPE, with their
 * attributes by LONG-NAME. Reads `rxs export --format reqif` (`RXS.RecordId`, `ReqIF.ForeignID`,
 * `RXS.RecordName`, `RXS.Version` give the record's facts) and the usual structure of other tools'
 * exports: without `RXS.RecordName` the name is the first of NAME_SOURCES the object has (the
 * report's notes say which, when it is not `ReqIF.Name`); XHTML values are read as their text
 * (XhtmlText), an embedded object's file named in the row's warnings;
 * an enumeration value names an option by its key or its label (NamedValue). Every `ReqIF.*`
 * attribute comes as a column of that name too, also those read as a fact or a name: left out
 * unless the user maps it to a field.
 */
export class ReqifSource implements RowSource {
  readonly format = 'reqif' as const;
  readonly notes: string[] = [];
  readonly factColumns = FACT_ATTRIBUTES;
  private readonly limits: ImportLimits;
  /** The notes on where names come from are said once: an import reads the file more than once. */
  private namesSaid = false;

  constructor(
    private readonly file: string,
    private options: ReqifSourceOptions = {},
  ) {
    this.limits = importLimits(options.limits);
  }

  forTopic(topic: { reqifTypeName: string }): void {
    this.options.topicTypeName ??= topic.reqifTypeName;
  }

  async *rows(): AsyncGenerator<SourceRow> {
    const { entry, wording } = this.options;
    const { file, limits } = this;
    const input = await openReqifInput(file, { entry, wording, limits });
    const reader = new ReqifReader(file, limits);
    const { open } = reader;
    const enumValues = new Map<string, NamedValue>();
    const definitions = new Map<string, AttributeDefinition>();
    const types = new Map<string, string>();
    /** The attribute definitions of each spec object type, by the type's IDENTIFIER. */
    const typeDefinitions = new Map<string, string[]>();
    /** Each attribute definition's DEFAULT-VALUE, by the definition's IDENTIFIER. */
    const defaults = new Map<string, OpenValue>();
    /** The spec object type whose SPEC-ATTRIBUTES are being read (none: another kind of type). */
    let declaringType: string[] | undefined;
    /** The attribute definition whose DEFAULT-VALUE is being read. */
    let defaultOf: string | undefined;
    let definitionOpen: string | undefined;
    let chosenType: string | undefined;
    const declarations = new Declarations(
      limits,
      file,
      'spec object types, attribute definitions and enumeration values',
      'the spec objects',
    );
    const columns = new DistinctColumns(limits, file);
    /** Attribute definitions of the spec type being read: its columns. */
    let attributes = 0;
    /** The text of the spec object being read, as it gathers its values. */
    let objectBytes: RowBytes | undefined;
    let enumValue: { id: string; name?: string; key?: string } | undefined;
    let object: OpenObject | undefined;
    let value: OpenValue | undefined;
    let count = 0;
    /** Spec objects read before any SPEC-OBJECT-TYPE: a fragment's, whose types are elsewhere. */
    let untyped = 0;
    let specifications = 0;
    const names = new NameTally();
    const objectPlace = () => `${file}, spec object ${clip(object?.identifier ?? '', MAX_QUOTED)}`;
    /** The XHTML value being read, while its THE-VALUE is open: its elements and text are its text. */
    const xhtmlOpen = () => (value?.xhtml && open.inTheValue ? value.xhtml : undefined);
    const checkXhtml = (xhtml: XhtmlText) => {
      if (xhtml.length > limits.maxCellBytes) throw cellTooLarge(limits, objectPlace());
    };

    yield* reader.read<SourceRow>(input, {
      open: (name, tag, parent) => {
        const attribute = (key: string) => tag.attributes[key] as string | undefined;
        const xhtml = xhtmlOpen();
        if (xhtml) {
          xhtml.open(name, tag.attributes as Record<string, string>);
          checkXhtml(xhtml);
          return;
        }
        if (name === 'ENUM-VALUE')
          enumValue = { id: attribute('IDENTIFIER') ?? '', name: attribute('LONG-NAME') };
        else if (name === 'EMBEDDED-VALUE' && enumValue) enumValue.key = attribute('OTHER-CONTENT');
        else if (name === 'SPECIFICATION') specifications++;
        else if (name === 'SPEC-ATTRIBUTES') attributes = 0;
        else if (
          name.startsWith('ATTRIBUTE-DEFINITION-') &&
          !name.endsWith('-REF') &&
          parent === 'SPEC-ATTRIBUTES'
        ) {
          if (++attributes > limits.maxColumns)
            throw tooManyColumns(
              limits,
              `${file} has a spec type of more than ${limits.maxColumns.toLocaleString('en')} attribute definitions (line ${reader.line})`,
            );
          const identifier = attribute('IDENTIFIER') ?? '';
          const longName = attribute('LONG-NAME') ?? identifier;
          declarations.add(identifier, longName);
          definitions.set(identifier, { name: longName, kind: name.slice('ATTRIBUTE-DEFINITION-'.length) });
          declaringType?.push(identifier);
          definitionOpen = identifier;
        } else if (name === 'DEFAULT-VALUE' && definitionOpen !== undefined) defaultOf = definitionOpen;
        else if (name.endsWith('-TYPE') && parent === 'SPEC-TYPES') declaringType = undefined;
        if (name === 'SPEC-OBJECT-TYPE') {
          const identifier = attribute('IDENTIFIER') ?? '';
          const longName = attribute('LONG-NAME') ?? '';
          declarations.add(identifier, longName);
          types.set(identifier, longName);
          typeDefinitions.set(identifier, (declaringType = []));
        } else if (name === 'SPEC-OBJECT') {
          object = {
            identifier: attribute('IDENTIFIER') ?? '',
            longName: attribute('LONG-NAME'),
            values: [],
          };
          objectBytes = new RowBytes(
            limits,
            `the spec object ${clip(object.identifier, MAX_QUOTED)} of ${file}`,
          );
        } else if (name.startsWith('ATTRIBUTE-VALUE-') && (object || defaultOf !== undefined)) {
          const kind = name.slice('ATTRIBUTE-VALUE-'.length);
          value = { kind, enumRefs: [], ...(kind === 'XHTML' && { xhtml: new XhtmlText() }) };
          const theValue = attribute('THE-VALUE');
          if (theValue !== undefined) value.theValue = theValue;
        }
      },
      text: (chunk) => {
        const xhtml = xhtmlOpen();
        if (!xhtml) return false;
        xhtml.text(chunk);
        checkXhtml(xhtml);
        return true;
      },
      close: (name, text) => {
        const xhtml = xhtmlOpen();
        if (xhtml) {
          xhtml.close(name);
          return undefined;
        }
        if (name === 'ENUM-VALUE' && enumValue) {
          declarations.add(enumValue.id, enumValue.name, enumValue.key);
          enumValues.set(enumValue.id, enumerationValue(enumValue));
          enumValue = undefined;
        } else if (name === 'SPEC-OBJECT-TYPE-REF' && object) object.type = text.trim();
        else if (name.startsWith('ATTRIBUTE-DEFINITION-') && name.endsWith('-REF') && value)
          value.definition = text.trim();
        else if (name === 'ENUM-VALUE-REF' && value) {
          if (value.enumRefs.length >= limits.maxDefinitions)
            throw limitError(
              'maxDefinitions',
              limits.maxDefinitions,
              `A value of the spec object ${clip(object?.identifier ?? '', MAX_QUOTED)} of ${file} names more than ${limits.maxDefinitions.toLocaleString('en')} enumeration values, more than a file may declare. Export the file again.`,
            );
          value.enumRefs.push(text.trim());
        } else if (name.startsWith('ATTRIBUTE-VALUE-') && !object && defaultOf !== undefined && value) {
          // A default is held for the whole read: its length counts with the declarations'.
          declarations.addLength(valueLength(value));
          defaults.set(defaultOf, { ...value, definition: defaultOf });
          value = undefined;
        } else if (name === 'DEFAULT-VALUE') defaultOf = undefined;
        else if (name.startsWith('ATTRIBUTE-DEFINITION-') && !name.endsWith('-REF'))
          definitionOpen = undefined;
        else if (name.startsWith('ATTRIBUTE-VALUE-') && object && value) {
          if (object.values.length >= limits.maxColumns)
            throw tooManyColumns(
              limits,
              `The spec object ${clip(object.identifier, MAX_QUOTED)} of ${file} has more than ${limits.maxColumns.toLocaleString('en')} values`,
            );
          const definition = value.definition ?? '';
          objectBytes?.addLength(valueLength(value), definitions.get(definition)?.name ?? definition);
          object.values.push(value);
          value = undefined;
        } else if (name === 'SPEC-OBJECT' && object) {
          const read = object;
          object = undefined;
          if (types.size === 0) untyped++;
          else chosenType ??= this.chooseType(types);
          if (chosenType === undefined || read.type !== chosenType) return undefined;
          withDefaults(read, typeDefinitions.get(chosenType) ?? [], defaults);
          const row = this.rowOf(read, ++count, definitions, enumValues, names);
          columns.add(row);
          return row;
        }
        return undefined;
      },
    });
    if (types.size === 0) throw this.untypedError(untyped, definitions.size, specifications);
    if (!this.namesSaid) this.notes.push(...input.notes, ...names.notes());
    this.namesSaid = true;
  }

  /** Why a file without a SPEC-OBJECT-TYPE has nothing to import. */
  private untypedError(objects: number, definitions: number, specifications: number): ImportFileError {
    if (objects === 0)
      return new ImportFileError(
        `${this.file} holds no SPEC-OBJECT-TYPE: it is not a ReqIF file with requirements.`,
      );
    const missing = [
      'no SPEC-OBJECT-TYPE',
      ...(definitions === 0 ? ['no attribute definitions'] : []),
      ...(specifications === 0 ? ['no SPECIFICATION'] : []),
    ];
    return new ImportFileError(
      `${this.file} holds ${objects} spec object${objects === 1 ? '' : 's'} but ${listOf(missing, 'and')}: it is a fragment of a ReqIF exchange (a partial export, as DOORS writes them), whose types are in another file, so its values have no attribute names to import by. ` +
        'Export the module again as a whole ReqIF document, with its types and specification, and import that file.',
    );
  }

  /** The spec object type whose objects are imported. */
  private chooseType(types: Map<string, string>): string {
    const wanted = this.options.specType ?? (types.size > 1 ? this.options.topicTypeName : undefined);
    if (wanted === undefined && types.size === 1) return [...types.keys()][0]!;
    for (const [id, name] of types)
      if (wanted !== undefined && name.toLowerCase() === wanted.toLowerCase()) return id;
    const which = this.options.specType
      ? ` and none is named "${this.options.specType}"`
      : wanted !== undefined
        ? ` and none is named after the topic ("${wanted}")`
        : '';
    throw new ImportChoiceError(
      `${this.file} has ${types.size} spec object types${which}: ` +
        `${listed([...types.values()].map((n) => `"${clip(n, MAX_QUOTED)}"`))}. ${(this.options.wording ?? CLI_WORDING).chooseSpecType}`,
      { option: 'spec_type', names: [...types.values()] },
    );
  }

  private rowOf(
    object: OpenObject,
    number: number,
    definitions: Map<string, AttributeDefinition>,
    enumValues: Map<string, NamedValue>,
    names: NameTally,
  ): SourceRow {
    const warnings: string[] = [];
    const row: SourceRow = {
      where: `spec object ${number} (${object.identifier})`,
      facts: {},
      values: new Map(),
      problems: [],
      warnings,
    };
    const candidates: Partial<Record<NameSource, string>> = { 'LONG-NAME': object.longName };
    const bytes = new RowBytes(this.limits, `spec object ${number} (${object.identifier})`);
    for (const value of object.values) {
      const definition = definitions.get(value.definition ?? '');
      if (!definition) {
        row.problems.push(
          `a value refers to the attribute definition "${value.definition}", which the file does not define.`,
        );
        continue;
      }
      const cell = cellOf(value, enumValues, definition, row.problems, warnings);
      if (!cell) continue;
      const text = 'text' in cell ? cell.text : String(cell.value);
      bytes.add(text, definition.name);
      const fact = FACT_ATTRIBUTES.get(definition.name);
      // An empty fact is none: an export writes every fact attribute, also those a record lacks.
      if (fact !== undefined && text !== '') row.facts[fact] = text;
      if (isNameAttribute(definition.name)) candidates[definition.name] = text;
      // A standard attribute is a column as well as a fact or a name: left out unless the user maps
      // it (ImportColumns), it fills the field it is mapped to. The `RXS.*` facts are an rxs
      // export's own and name no field.
      if (fact === undefined || isStandardAttribute(definition.name)) row.values.set(definition.name, cell);
    }
    if (row.facts.name === undefined) {
      const named = nameOf(candidates);
      names.add(named?.source, row.where);
      if (named) row.facts.name = named.name;
    }
    const exported = /^R-([0-9a-f]{24})$/.exec(object.identifier);
    if (exported) {
      row.facts.id ??= exported[1]!;
      if (row.facts.id === exported[1]) row.facts.exportedAs = object.identifier;
    }
    // The IDENTIFIER is the object's identity in its source, unless it is an rxs export's name of
    // the record (`R-` and its _id), which the _id already is.
    if (!exported || exported[1] !== row.facts.id) row.facts.sourceId ??= object.identifier;
    return row;
  }
}

/** The record name of a spec object: the first of NAME_SOURCES it has, a text by its first line. */
function nameOf(
  candidates: Partial<Record<NameSource, string>>,
): { name: string; source: NameSource } | undefined {
  for (const source of NAME_SOURCES) {
    const candidate = candidates[source];
    const name =
      candidate === undefined || candidate.trim() === ''
        ? undefined
        : source === 'ReqIF.Text'
          ? firstLine(candidate)
          : candidate;
    if (name !== undefined) return { name, source };
  }
  return undefined;
}

/** A text's first line that holds anything, cut before a word past MAX_NAME_FROM_TEXT characters. */
function firstLine(text: string): string | undefined {
  const line = text
    .split('\n')
    .map((part) => part.replace(/\s+/g, ' ').trim())
    .find((part) => part !== '');
  if (line === undefined) return undefined;
  const characters = [...line];
  if (characters.length <= MAX_NAME_FROM_TEXT) return line;
  const cut = characters.slice(0, MAX_NAME_FROM_TEXT - 1).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > MAX_NAME_FROM_TEXT / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** How many spec objects took their name from where (the first few by place), for the report's notes. */
class NameTally {
  private readonly tally = new Map<NameSource | 'none', { count: number; first: string[] }>();

  add(source: NameSource | undefined, where: string): void {
    const key = source ?? 'none';
    if (key === 'ReqIF.Name') return;
    let entry = this.tally.get(key);
    if (!entry) this.tally.set(key, (entry = { count: 0, first: [] }));
    if (++entry.count <= MAX_NAMED) entry.first.push(where);
  }

  notes(): string[] {
    const notes: string[] = [];
    const objectsOf = (key: NameSource | 'none') => {
      const entry = this.tally.get(key);
      return entry && listed(entry.first, MAX_NAMED, entry.count);
    };
    const lacking = (source: NameSource) => NAME_SOURCES.slice(0, NAME_SOURCES.indexOf(source));
    for (const source of NAME_SOURCES) {
      const objects = objectsOf(source);
      if (objects === undefined) continue;
      const from =
        source === 'LONG-NAME'
          ? "the spec object's LONG-NAME"
          : source === 'ReqIF.Text'
            ? `the first line of its ReqIF.Text (at most ${MAX_NAME_FROM_TEXT} characters)`
            : `its ${source}`;
      notes.push(`${objects}: no ${listOf(lacking(source), 'or')}; the record is named by ${from}.`);
    }
    const nameless = objectsOf('none');
    if (nameless !== undefined)
      notes.push(
        `${nameless}: no ${listOf(NAME_SOURCES, 'or')} to name the record by; without a name from another column (the topic's title field) the row is refused.`,
      );
    return notes;
  }
}

/**
 * The DEFAULT-VALUEs of the object's type for the attributes it carries no value for: ReqIF 1.2
 * says they apply to it, so the record takes them as its values.
 */
function withDefaults(
  object: OpenObject,
  typeDefinitions: readonly string[],
  defaults: Map<string, OpenValue>,
) {
  const carried = new Set(object.values.map((value) => value.definition));
  for (const definition of typeDefinitions) {
    const value = defaults.get(definition);
    if (value && !carried.has(definition)) object.values.push(value);
  }
}

/** Characters of a value as it was read, before it becomes a cell: counted into its object's. */
function valueLength(value: OpenValue): number {
  let length = (value.theValue?.length ?? 0) + (value.xhtml?.length ?? 0);
  for (const ref of value.enumRefs) length += ref.length;
  return length;
}

/** "a, b or c". */
const listOf = (items: readonly string[], last: 'and' | 'or') =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} ${last} ${items[items.length - 1]}`;

/**
 * An ENUM-VALUE as a value known by its key (`OTHER-CONTENT`: the option value of an rxs export)
 * and its label (`LONG-NAME`, else its IDENTIFIER, as Enterprise Architect names its values):
 * the field's options decide which of the two names one.
 */
function enumerationValue({ id, name, key }: { id: string; name?: string; key?: string }): NamedValue {
  const label = name || id;
  const names = [...new Set([key, label].filter((n): n is string => n !== undefined && n !== ''))];
  const description =
    key && key !== label
      ? `the enumeration value "${label}" (key "${key}")`
      : `the enumeration value "${label}"`;
  return new NamedValue(names, description);
}

function cellOf(
  value: OpenValue,
  enumValues: Map<string, NamedValue>,
  definition: AttributeDefinition,
  problems: string[],
  warnings: string[],
): Cell | undefined {
  switch (value.kind) {
    case 'ENUMERATION': {
      const values = value.enumRefs.map((ref) => enumValues.get(ref) ?? ref);
      return { value: values.length === 1 ? values[0] : values };
    }
    case 'XHTML': {
      const { text, embedded } = value.xhtml!.result();
      for (const object of embedded) warnings.push(`${definition.name}: ${embeddedObjectWarning(object)}`);
      return { text };
    }
    case 'INTEGER':
    case 'REAL': {
      const number = Number(value.theValue);
      if (value.theValue === undefined || value.theValue.trim() === '' || !Number.isFinite(number)) {
        problems.push(`${definition.name}: "${value.theValue}" is not a number.`);
        return undefined;
      }
      return { value: number };
    }
    case 'BOOLEAN':
      if (value.theValue === 'true' || value.theValue === '1') return { value: true };
      if (value.theValue === 'false' || value.theValue === '0') return { value: false };
      problems.push(`${definition.name}: "${value.theValue}" is not true or false.`);
      return undefined;
    default:
      return { text: value.theValue ?? '' };
  }
}
