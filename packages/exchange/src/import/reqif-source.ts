import { eventLoopSlices } from '../event-loop.js';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { NamedValue } from '../mapping/record-input.js';
import {
  cellTooLarge,
  DistinctColumns,
  importLimits,
  limitError,
  RowBytes,
  sizeText,
  tooManyColumns,
  XmlRuns,
  XmlSections,
  type ImportLimits,
} from './limits.js';
import { openReqifInput, type ReqifInput } from './reqif-archive.js';
import { ImportFileError } from './errors.js';
import type { Cell, FactColumn, RowSource, SourceRow } from './source-row.js';
import { CLI_WORDING, listed, type ImportWording } from './wording.js';
import { doctypeRefused, firstBareAmpersand, saxesErrorParts } from './xml-errors.js';
import { embeddedObjectWarning, XhtmlText } from './xhtml-text.js';

export interface ReqifSourceOptions {
  /** The SPEC-OBJECT-TYPE to import, by LONG-NAME; default: the only one, else the topic's. */
  specType?: string;
  /** A ReqIF archive's .reqif file to import, by its path in the archive; default: its only one. */
  entry?: string;
  /** The name the topic's spec object type has in an export (its ReqIF type name). */
  topicTypeName?: string;
  /** How advice names the options (default: `rxs import`'s). */
  wording?: ImportWording;
  /** What reading the file may cost (default: DEFAULT_IMPORT_LIMITS). */
  limits?: Partial<ImportLimits>;
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

export const local = (name: string) => name.slice(name.indexOf(':') + 1);
/** An identifier or name as a message quotes it: its first 80 characters. */
const clipped = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}…` : text);

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
 * an enumeration value names an option by its key or its label (NamedValue); other `ReqIF.*`
 * attributes come as columns of that name.
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
    const input = await openReqifInput(this.file, { entry, wording, limits: this.limits });
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
    const ready: SourceRow[] = [];
    const open = new OpenElements(this.limits, this.file);
    const declarations = new Declarations(this.limits, this.file);
    /** Attribute definitions of the spec type being read: its columns. */
    let attributes = 0;
    /** The text of the spec object being read, as it gathers its values. */
    let objectBytes: RowBytes | undefined;
    let enumValue: { id: string; name?: string; key?: string } | undefined;
    let object: OpenObject | undefined;
    let value: OpenValue | undefined;
    let text = '';
    let count = 0;
    /** Spec objects read before any SPEC-OBJECT-TYPE: a fragment's, whose types are elsewhere. */
    let untyped = 0;
    let specifications = 0;
    const names = new NameTally();
    let failure: Error | undefined;
    let parserError: Error | undefined;
    let atEnd = false;

    const parser = new SaxesParser({ xmlns: false, position: true });
    parser.on('error', (error) => {
      parserError ??= error;
      failure ??= error;
    });
    // XmlSections finds a DOCTYPE before the parser gathers its DTD: this refuses any it let pass.
    parser.on('doctype', () => {
      throw doctypeRefused(this.file);
    });
    parser.on('opentag', (tag: SaxesTagPlain) => {
      const name = local(tag.name);
      const attribute = (key: string) => tag.attributes[key] as string | undefined;
      const parent = open.innermost;
      open.push(name, tag, parser.line);
      text = '';
      if (value?.xhtml && open.inTheValue) {
        value.xhtml.open(name, tag.attributes as Record<string, string>);
        if (value.xhtml.length > this.limits.maxCellBytes)
          throw cellTooLarge(this.limits, `${this.file}, spec object ${clipped(object?.identifier ?? '')}`);
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
        if (++attributes > this.limits.maxColumns)
          throw tooManyColumns(
            this.limits,
            `${this.file} has a spec type of more than ${this.limits.maxColumns.toLocaleString('en')} attribute definitions (line ${parser.line})`,
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
        object = { identifier: attribute('IDENTIFIER') ?? '', longName: attribute('LONG-NAME'), values: [] };
        objectBytes = new RowBytes(
          this.limits,
          `the spec object ${clipped(object.identifier)} of ${this.file}`,
        );
      } else if (name.startsWith('ATTRIBUTE-VALUE-') && (object || defaultOf !== undefined)) {
        const kind = name.slice('ATTRIBUTE-VALUE-'.length);
        value = { kind, enumRefs: [], ...(kind === 'XHTML' && { xhtml: new XhtmlText() }) };
        const theValue = attribute('THE-VALUE');
        if (theValue !== undefined) value.theValue = theValue;
      }
    });
    parser.on('text', (chunk: string) => {
      if (value?.xhtml && open.inTheValue) {
        value.xhtml.text(chunk);
        if (value.xhtml.length > this.limits.maxCellBytes)
          failure ??= cellTooLarge(
            this.limits,
            `${this.file}, spec object ${clipped(object?.identifier ?? '')}`,
          );
      } else {
        // Texts between comments or processing instructions join, beyond XmlRuns' sight.
        text += chunk;
        if (text.length > this.limits.maxCellBytes)
          throw cellTooLarge(this.limits, `${this.file}, line ${parser.line}`);
      }
    });
    parser.on('closetag', (tag) => {
      const name = local(tag.name);
      open.pop();
      if (value?.xhtml && open.inTheValue) {
        value.xhtml.close(name);
        return;
      }
      if (name === 'ENUM-VALUE' && enumValue) {
        declarations.add(enumValue.id, enumValue.name, enumValue.key);
        enumValues.set(enumValue.id, enumerationValue(enumValue));
        enumValue = undefined;
      } else if (name === 'SPEC-OBJECT-TYPE-REF' && object) object.type = text.trim();
      else if (name.startsWith('ATTRIBUTE-DEFINITION-') && name.endsWith('-REF') && value)
        value.definition = text.trim();
      else if (name === 'ENUM-VALUE-REF' && value) {
        if (value.enumRefs.length >= this.limits.maxDefinitions)
          throw limitError(
            'maxDefinitions',
            this.limits.maxDefinitions,
            `A value of the spec object ${clipped(object?.identifier ?? '')} of ${this.file} names more than ${this.limits.maxDefinitions.toLocaleString('en')} enumeration values, more than a file may declare. Export the file again.`,
          );
        value.enumRefs.push(text.trim());
      } else if (name.startsWith('ATTRIBUTE-VALUE-') && !object && defaultOf !== undefined && value) {
        // A default is held for the whole read: its length counts with the declarations'.
        declarations.addLength(valueLength(value));
        defaults.set(defaultOf, { ...value, definition: defaultOf });
        value = undefined;
      } else if (name === 'DEFAULT-VALUE') defaultOf = undefined;
      else if (name.startsWith('ATTRIBUTE-DEFINITION-') && !name.endsWith('-REF')) definitionOpen = undefined;
      else if (name.startsWith('ATTRIBUTE-VALUE-') && object && value) {
        if (object.values.length >= this.limits.maxColumns)
          throw tooManyColumns(
            this.limits,
            `The spec object ${clipped(object.identifier)} of ${this.file} has more than ${this.limits.maxColumns.toLocaleString('en')} values`,
          );
        const definition = value.definition ?? '';
        objectBytes?.addLength(valueLength(value), definitions.get(definition)?.name ?? definition);
        object.values.push(value);
        value = undefined;
      } else if (name === 'SPEC-OBJECT' && object) {
        if (types.size === 0) untyped++;
        else chosenType ??= this.chooseType(types);
        if (chosenType !== undefined && object.type === chosenType) {
          withDefaults(object, typeDefinitions.get(chosenType) ?? [], defaults);
          const row = this.rowOf(object, ++count, definitions, enumValues, names);
          columns.add(row);
          ready.push(row);
        }
        object = undefined;
      }
    });

    let line = 1;
    const runs = new XmlRuns(this.limits.maxCellBytes);
    const sections = new XmlSections(this.limits.maxCellBytes);
    const columns = new DistinctColumns(this.limits, this.file);
    const turn = eventLoopSlices();
    try {
      for await (const chunk of input.text()) {
        if (runs.exceeds(chunk)) throw cellTooLarge(this.limits, `${this.file}, after line ${line}`);
        const section = sections.check(chunk);
        if (section === 'DOCTYPE') throw doctypeRefused(this.file);
        if (section)
          throw limitError(
            'maxCellBytes',
            this.limits.maxCellBytes,
            `${this.file} holds a ${section} of more than ${sizeText(this.limits.maxCellBytes)} after line ${line}, more than any value may hold, which the XML parser would read whole: ReqIF tools write none that long. Export the file again.`,
          );
        parser.write(chunk);
        if (failure) break;
        line = parser.line;
        for (const row of ready.splice(0)) {
          yield row;
          await turn();
        }
      }
      if (!failure) {
        atEnd = true;
        parser.close();
      }
    } catch (error) {
      // What is not the parser's (a missing file, a limit) is said as it is.
      if (error !== parserError) throw error;
    }
    if (failure && failure !== parserError) throw failure;
    if (parserError) throw await this.notWellFormed(parserError, atEnd, line, input);
    yield* ready.splice(0);
    if (types.size === 0) throw this.untypedError(untyped, definitions.size, specifications);
    if (!this.namesSaid) this.notes.push(...input.notes, ...names.notes());
    this.namesSaid = true;
  }

  /**
   * The parser's first error, where a person must fix it: the place saxes gives, or an earlier bare
   * `&` that saxes read on past; an error at the end of the file says it may be cut short.
   */
  private async notWellFormed(
    error: Error,
    atEnd: boolean,
    lastLine: number,
    input: ReqifInput,
  ): Promise<ImportFileError> {
    const { at, what } = saxesErrorParts(error);
    const ampersand = at && (await firstBareAmpersand(input.text(), at));
    if (ampersand)
      return new ImportFileError(
        `${this.file} is not well-formed XML at line ${ampersand.line}, column ${ampersand.column}: an "&" that starts no character or entity reference (XML writes it as "&amp;"). Correct it there, or export the file again.`,
      );
    const where = at ? `line ${at.line}, column ${at.column}` : `near line ${lastLine}`;
    if (atEnd)
      return new ImportFileError(
        `${this.file} is not well-formed XML: it ends at ${where} before its XML is complete (${what.replace(/\.$/, '')}). The file may be cut short: export it again.`,
      );
    return new ImportFileError(
      `${this.file} is not well-formed XML at ${where}: ${what.replace(/\.$/, '')}${what === 'undefined entity.' ? ' (XML knows only &amp;, &lt;, &gt;, &quot; and &apos;, and references such as &#160;)' : ''}. Correct it there, or export the file again.`,
    );
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
    throw new ImportFileError(
      `${this.file} has ${types.size} spec object types${which}: ` +
        `${listed([...types.values()].map((n) => `"${clipped(n)}"`))}. ${(this.options.wording ?? CLI_WORDING).chooseSpecType}`,
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
      if (fact !== undefined) {
        // An empty fact is none: an export writes every fact attribute, also those a record lacks.
        if (text !== '') row.facts[fact] = text;
        continue;
      }
      switch (definition.name) {
        case 'ReqIF.Name':
          candidates['ReqIF.Name'] = text;
          break;
        default:
          if (definition.name === 'ReqIF.ChapterName' || definition.name === 'ReqIF.Text')
            candidates[definition.name] = text;
          row.values.set(definition.name, cell);
      }
    }
    if (row.facts.name === undefined) {
      const named = nameOf(candidates);
      names.add(named?.source, row.where);
      if (named) row.facts.name = named.name;
    }
    const exported = /^R-([0-9a-f]{24})$/.exec(object.identifier);
    if (row.facts.id === undefined && exported) row.facts.id = exported[1]!;
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

/** Characters of a value as it was read, before it becomes a cell: counted into its object's. */
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

function valueLength(value: OpenValue): number {
  let length = (value.theValue?.length ?? 0) + (value.xhtml?.length ?? 0);
  for (const ref of value.enumRefs) length += ref.length;
  return length;
}

/**
 * The elements open at the parser's place, innermost last. The parser holds each of them, so there
 * are at most maxDepth, with names and attributes of at most maxRowBytes characters together: the
 * elements of one spec object and its largest value fit many times.
 */
export class OpenElements {
  private readonly names: string[] = [];
  private readonly sizes: number[] = [];
  private size = 0;
  /** THE-VALUE elements open: inside one, an XHTML value's elements make its text. */
  private theValues = 0;

  constructor(
    private readonly limits: ImportLimits,
    private readonly file: string,
  ) {}

  get innermost(): string | undefined {
    return this.names[this.names.length - 1];
  }

  get inTheValue(): boolean {
    return this.theValues > 0;
  }

  /** Opens the element `name` (the tag's local name) at `line`; throws past a limit. */
  push(name: string, tag: SaxesTagPlain, line: number): void {
    let size = tag.name.length;
    for (const [key, value] of Object.entries(tag.attributes)) size += key.length + value.length;
    if (this.names.length >= this.limits.maxDepth)
      throw limitError(
        'maxDepth',
        this.limits.maxDepth,
        `${this.file} nests elements more than ${this.limits.maxDepth.toLocaleString('en')} deep at line ${line}, deeper than ReqIF tools nest a specification's hierarchy or an XHTML value. Export the file again, with a flatter hierarchy or simpler values if it still nests that deep.`,
      );
    if (this.size + size > this.limits.maxRowBytes)
      throw limitError(
        'maxRowBytes',
        this.limits.maxRowBytes,
        `${this.file} has elements open inside one another whose names and attributes hold more than ${sizeText(this.limits.maxRowBytes)} at line ${line}, more than one spec object may hold. Export the file again.`,
      );
    this.names.push(name);
    this.sizes.push(size);
    this.size += size;
    if (name === 'THE-VALUE') this.theValues++;
  }

  pop(): void {
    if (this.names.pop() === 'THE-VALUE') this.theValues--;
    this.size -= this.sizes.pop() ?? 0;
  }
}

/**
 * What the reader keeps of a file's declarations while it reads the spec objects (spec object
 * types, attribute definitions, enumeration values): at most maxDefinitions of them, their
 * identifiers and names of at most maxDefinitionBytes characters together.
 */
class Declarations {
  private count = 0;
  private characters = 0;

  constructor(
    private readonly limits: ImportLimits,
    private readonly file: string,
  ) {}

  add(...texts: (string | undefined)[]): void {
    if (++this.count > this.limits.maxDefinitions)
      throw limitError(
        'maxDefinitions',
        this.limits.maxDefinitions,
        `${this.file} declares more than ${this.limits.maxDefinitions.toLocaleString('en')} spec object types, attribute definitions and enumeration values, the most the import holds while it reads the spec objects. Export only the specification to import, with the types and attributes it uses.`,
      );
    for (const text of texts) this.characters += text?.length ?? 0;
    this.check();
  }

  /** A declaration's default value, held as long as the declarations. */
  addLength(characters: number): void {
    this.characters += characters;
    this.check();
  }

  private check(): void {
    if (this.characters > this.limits.maxDefinitionBytes)
      throw limitError(
        'maxDefinitionBytes',
        this.limits.maxDefinitionBytes,
        `The spec object types, attribute definitions and enumeration values ${this.file} declares have identifiers and names of more than ${sizeText(this.limits.maxDefinitionBytes)} together, the most the import holds while it reads the spec objects. Export only the specification to import, with the types and attributes it uses.`,
      );
  }
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
