import type { ExportedField } from '../export/model.js';
import { FieldNameError, FieldResolver } from '../mapping/record-input.js';
import { CLI_WORDING, type ImportWording } from './wording.js';

/** What a column of the file becomes: a field's value, a data key kept as is, or nothing (and why). */
export type ColumnUse = { field: ExportedField } | { dataKey: string } | { ignored: true };

/** A column of the file and what the import makes of it. */
export interface ColumnMapping {
  column: string;
  /** `field`: a field's value; `data-key`: a data key the form does not show; `ignored`: left out; `unknown`: names nothing. */
  as: 'field' | 'data-key' | 'ignored' | 'unknown';
  field?: { name: string; key: string };
}

/** The export's twin column of a value that did not fit its typed ReqIF attribute. */
const AS_TEXT = / \(as text\)$/;

/**
 * The columns of a file against the topic's fields: by semantic name (the export's headers), by
 * form key, after the user's renames. An unknown column stops the import (a typo would otherwise
 * drop a whole column of data), unless the user leaves unknown columns out on purpose.
 */
/** What the importer takes from a ReqIF standard attribute whether or not it fills a field. */
const STANDARD_ATTRIBUTE_ROLES: ReadonlyMap<string, string> = new Map([
  ['ReqIF.Name', "the record's name"],
  ['ReqIF.ForeignID', "the row's readable id"],
]);

export class ImportColumns {
  private readonly resolver: FieldResolver;
  /** What each column met becomes, by column name and by form key (a service record's `data`). */
  private readonly usesByName = new Map<string, ColumnUse>();
  private readonly usesByKey = new Map<string, ColumnUse>();
  /** The columns met, in order. */
  private readonly met: { column: string; use: ColumnUse }[] = [];
  /** Columns that name no field: the import cannot go on (each named once). */
  readonly problems: string[] = [];
  /** Columns left out on purpose, said in the report. */
  readonly notes: string[] = [];
  private readonly unknown = new Set<string>();

  constructor(
    private readonly topicName: string,
    fields: readonly ExportedField[],
    private readonly renames: ReadonlyMap<string, string> = new Map(),
    private readonly ignoreUnknown = false,
    private readonly words: ImportWording = CLI_WORDING,
    /** The column whose values are the rows' source identities: it fills a field only if it names one. */
    private readonly keyColumn?: string,
  ) {
    this.resolver = new FieldResolver(fields);
  }

  /** Each column of the file met so far, in order, and what it becomes: the import's column mapping. */
  mapping(): ColumnMapping[] {
    const list: ColumnMapping[] = [];
    for (const { column, use } of this.met) {
      if ('field' in use)
        list.push({ column, as: 'field', field: { name: use.field.name, key: use.field.key } });
      else if ('dataKey' in use) list.push({ column, as: 'data-key' });
      else list.push({ column, as: this.unknown.has(column) ? 'unknown' : 'ignored' });
    }
    return list;
  }

  use(column: string, byFormKey = false): ColumnUse {
    const uses = byFormKey ? this.usesByKey : this.usesByName;
    let use = uses.get(column);
    if (!use) {
      use = this.resolve(column, byFormKey);
      uses.set(column, use);
      this.met.push({ column, use });
    }
    return use;
  }

  private resolve(column: string, byFormKey: boolean): ColumnUse {
    if (column !== this.keyColumn) return this.resolveValue(column, byFormKey);
    const use = this.resolveValue(column, byFormKey, true);
    const fills =
      'field' in use
        ? `; it also fills "${use.field.name}"`
        : 'dataKey' in use
          ? '; it is also kept as a data key'
          : '';
    this.notes.push(
      `${column}: the key column, each row's identity in its source (the record's source id)${fills}.`,
    );
    return use;
  }

  private resolveValue(column: string, byFormKey: boolean, isKey = false): ColumnUse {
    const renamed = this.renames.get(column);
    if (renamed === '') return this.ignore(column, this.words.leftOut);
    const name = renamed ?? column;
    try {
      return { field: this.resolver.resolve(name) };
    } catch (error) {
      if (!(error instanceof FieldNameError)) throw error;
      // A service record's data may hold keys its form does not show: they stay as they are.
      if (byFormKey) return { dataKey: name };
      const base = name.replace(AS_TEXT, '');
      if (base !== name) {
        const twin = this.use(base);
        if ('field' in twin) return twin; // its text is converted like any text cell
      }
      // The key column needs no field: the identity is what it is imported for.
      if (isKey) return { ignored: true };
      if (renamed === undefined && name.startsWith('ReqIF.')) {
        const role = STANDARD_ATTRIBUTE_ROLES.get(name);
        const why = `an rxs export repeats it in a field's own attribute. ${role ? 'To fill a field with it too' : 'From another tool'}, ${this.words.mapColumn(column)}`;
        if (!role) return this.ignore(column, `a ReqIF standard attribute; ${why}`);
        this.notes.push(`${column}: ${role}, in no field (${why}).`);
        return { ignored: true };
      }
      if (this.ignoreUnknown) return this.ignore(column, this.words.unknownLeftOut);
      this.unknown.add(column);
      this.problems.push(
        `Column "${column}"${renamed !== undefined ? ` (renamed "${renamed}")` : ''} names no field of "${this.topicName}". ` +
          `${error.message} ${this.words.unknownColumn(column)}`,
      );
      return { ignored: true };
    }
  }

  private ignore(column: string, why: string): ColumnUse {
    this.notes.push(`${column}: not imported (${why}).`);
    return { ignored: true };
  }
}
