import { eventLoopSlices } from '../event-loop.js';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import {
  cellTooLarge,
  DistinctColumns,
  importLimits,
  RowBytes,
  XmlRuns,
  type ImportLimits,
} from './limits.js';
import { decodeTextFile } from './text-decoding.js';
import { ImportFileError } from './errors.js';
import type { Cell, RowSource, SourceRow } from './source-row.js';
import { CLI_WORDING, type ImportWording } from './wording.js';

export interface ReqifSourceOptions {
  /** The SPEC-OBJECT-TYPE to import, by LONG-NAME; default: the only one, else the topic's. */
  specType?: string;
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
  xhtml: string;
}

interface OpenObject {
  identifier: string;
  type?: string;
  values: OpenValue[];
}

const local = (name: string) => name.slice(name.indexOf(':') + 1);

/**
 * Records of a ReqIF 1.2 file, streamed: the SPEC-OBJECTs of one SPEC-OBJECT-TYPE, with their
 * attributes by LONG-NAME. Reads `rxs export --format reqif` (`RXS.RecordId`, `ReqIF.ForeignID`,
 * `RXS.RecordName`, `RXS.Version` give the record's facts) and the usual structure of DOORS and
 * Polarion exports (`ReqIF.Name` gives the name when there is no `RXS.RecordName`; XHTML values
 * are read as their text; other `ReqIF.*` attributes come as columns of that name).
 */
export class ReqifSource implements RowSource {
  readonly format = 'reqif' as const;
  readonly notes: string[] = [];
  private readonly limits: ImportLimits;

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
    const enumValues = new Map<string, string>();
    const definitions = new Map<string, AttributeDefinition>();
    const types = new Map<string, string>();
    let chosenType: string | undefined;
    const ready: SourceRow[] = [];
    const stack: string[] = [];
    let enumValue: { id: string; name: string } | undefined;
    let object: OpenObject | undefined;
    let value: OpenValue | undefined;
    let text = '';
    let count = 0;
    let failure: Error | undefined;

    const parser = new SaxesParser({ xmlns: false, position: true });
    parser.on('error', (error) => {
      failure ??= error;
    });
    parser.on('opentag', (tag: SaxesTagPlain) => {
      const name = local(tag.name);
      const attribute = (key: string) => tag.attributes[key] as string | undefined;
      const parent = stack[stack.length - 1];
      stack.push(name);
      text = '';
      if (value && stack.includes('THE-VALUE') && value.kind === 'XHTML') {
        if (name === 'br') value.xhtml += '\n';
        return;
      }
      if (name === 'ENUM-VALUE')
        enumValue = { id: attribute('IDENTIFIER') ?? '', name: attribute('LONG-NAME') ?? '' };
      else if (name === 'EMBEDDED-VALUE' && enumValue)
        enumValues.set(enumValue.id, attribute('OTHER-CONTENT') || enumValue.name);
      else if (
        name.startsWith('ATTRIBUTE-DEFINITION-') &&
        !name.endsWith('-REF') &&
        parent === 'SPEC-ATTRIBUTES'
      )
        definitions.set(attribute('IDENTIFIER') ?? '', {
          name: attribute('LONG-NAME') ?? attribute('IDENTIFIER') ?? '',
          kind: name.slice('ATTRIBUTE-DEFINITION-'.length),
        });
      else if (name === 'SPEC-OBJECT-TYPE')
        types.set(attribute('IDENTIFIER') ?? '', attribute('LONG-NAME') ?? '');
      else if (name === 'SPEC-OBJECT') object = { identifier: attribute('IDENTIFIER') ?? '', values: [] };
      else if (name.startsWith('ATTRIBUTE-VALUE-') && object) {
        value = { kind: name.slice('ATTRIBUTE-VALUE-'.length), enumRefs: [], xhtml: '' };
        const theValue = attribute('THE-VALUE');
        if (theValue !== undefined) value.theValue = theValue;
      }
    });
    parser.on('text', (chunk: string) => {
      if (value?.kind === 'XHTML' && stack.includes('THE-VALUE')) {
        value.xhtml += chunk.replace(/\s*\n\s*/g, ' ');
        if (value.xhtml.length > this.limits.maxCellBytes)
          failure ??= cellTooLarge(this.limits, `${this.file}, spec object ${object?.identifier}`);
      } else text += chunk;
    });
    parser.on('closetag', (tag) => {
      const name = local(tag.name);
      stack.pop();
      if (value?.kind === 'XHTML' && stack.includes('THE-VALUE')) {
        if (/^(p|div|li|h[1-6]|tr)$/.test(name)) value.xhtml += '\n';
        return;
      }
      if (name === 'ENUM-VALUE') enumValue = undefined;
      else if (name === 'SPEC-OBJECT-TYPE-REF' && object) object.type = text.trim();
      else if (name.startsWith('ATTRIBUTE-DEFINITION-') && name.endsWith('-REF') && value)
        value.definition = text.trim();
      else if (name === 'ENUM-VALUE-REF' && value) value.enumRefs.push(text.trim());
      else if (name.startsWith('ATTRIBUTE-VALUE-') && object && value) {
        object.values.push(value);
        value = undefined;
      } else if (name === 'SPEC-OBJECT' && object) {
        chosenType ??= this.chooseType(types);
        if (object.type === chosenType) {
          const row = this.rowOf(object, ++count, definitions, enumValues);
          columns.add(row);
          ready.push(row);
        }
        object = undefined;
      }
    });

    let line = 1;
    const runs = new XmlRuns(this.limits.maxCellBytes);
    const columns = new DistinctColumns(this.limits, this.file);
    const turn = eventLoopSlices();
    try {
      for await (const chunk of decodeTextFile(this.file)) {
        if (runs.exceeds(chunk)) throw cellTooLarge(this.limits, `${this.file}, after line ${line}`);
        parser.write(chunk);
        if (failure) break;
        line = parser.line;
        for (const row of ready.splice(0)) {
          yield row;
          await turn();
        }
      }
      if (!failure) parser.close();
    } catch (error) {
      if (error instanceof ImportFileError) throw error;
      failure ??= error as Error;
    }
    if (failure instanceof ImportFileError) throw failure;
    if (failure)
      throw new ImportFileError(
        `${this.file} is not well-formed XML near line ${line}: ${failure.message.split('\n')[0]}. The file may be cut short: export it again.`,
      );
    yield* ready.splice(0);
    if (types.size === 0)
      throw new ImportFileError(
        `${this.file} holds no SPEC-OBJECT-TYPE: it is not a ReqIF file with requirements.`,
      );
  }

  /** The spec object type whose objects are imported. */
  private chooseType(types: Map<string, string>): string {
    const wanted = this.options.specType ?? (types.size > 1 ? this.options.topicTypeName : undefined);
    if (wanted === undefined && types.size === 1) return [...types.keys()][0]!;
    for (const [id, name] of types)
      if (wanted !== undefined && name.toLowerCase() === wanted.toLowerCase()) return id;
    throw new ImportFileError(
      `${this.file} has ${types.size} spec object types and ${this.options.specType ? `none is named "${this.options.specType}"` : `none is named after the topic ("${wanted}")`}: ` +
        `${[...types.values()].map((n) => `"${n}"`).join(', ')}. ${(this.options.wording ?? CLI_WORDING).chooseSpecType}`,
    );
  }

  private rowOf(
    object: OpenObject,
    number: number,
    definitions: Map<string, AttributeDefinition>,
    enumValues: Map<string, string>,
  ): SourceRow {
    const row: SourceRow = {
      where: `spec object ${number} (${object.identifier})`,
      facts: {},
      values: new Map(),
      problems: [],
    };
    let reqifName: string | undefined;
    const bytes = new RowBytes(this.limits, `spec object ${number} (${object.identifier})`);
    for (const value of object.values) {
      const definition = definitions.get(value.definition ?? '');
      if (!definition) {
        row.problems.push(
          `a value refers to the attribute definition "${value.definition}", which the file does not define.`,
        );
        continue;
      }
      const cell = cellOf(value, enumValues, definition, row.problems);
      if (!cell) continue;
      const text = 'text' in cell ? cell.text : String(cell.value);
      bytes.add(text, definition.name);
      switch (definition.name) {
        case 'RXS.RecordId':
          row.facts.id = text;
          break;
        case 'ReqIF.ForeignID':
          row.facts.readableId = text;
          break;
        case 'RXS.RecordName':
          row.facts.name = text;
          break;
        case 'RXS.Version':
          row.facts.version = text;
          break;
        case 'ReqIF.Name':
          reqifName = text;
          break;
        default:
          row.values.set(definition.name, cell);
      }
    }
    if (row.facts.name === undefined && reqifName !== undefined && reqifName !== '')
      row.facts.name = reqifName;
    const exported = /^R-([0-9a-f]{24})$/.exec(object.identifier);
    if (row.facts.id === undefined && exported) row.facts.id = exported[1]!;
    return row;
  }
}

function cellOf(
  value: OpenValue,
  enumValues: Map<string, string>,
  definition: AttributeDefinition,
  problems: string[],
): Cell | undefined {
  switch (value.kind) {
    case 'ENUMERATION': {
      const values = value.enumRefs.map((ref) => enumValues.get(ref) ?? ref);
      return { value: values.length === 1 ? values[0] : values };
    }
    case 'XHTML':
      return {
        text: value.xhtml
          .replace(/[ \t]+\n/g, '\n')
          .replace(/\n+$/, '')
          .trim(),
      };
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
