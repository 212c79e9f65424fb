import { MappingError } from './errors.js';
import type { ExportedField } from './model.js';
import { MULTI_VALUE_TYPES, OPTION_TYPES, type FieldOption } from './options.js';
import { isPlainObject, splitPath } from './paths.js';

/**
 * The way back from an export's names to a record's data: fields named by their semantic name (the
 * export's column) or by their form key, values given as text converted to what the form component
 * stores. What `rxs record create|update --set` and imports use.
 */

/** A name that is no field, or two fields at once: the message lists the names that are. */
export class FieldNameError extends MappingError {
  override name = 'FieldNameError';
  override readonly code = 'RXS_ERR_FIELD_NAME';
}

/** A value the field's component cannot hold: the message says what it takes. */
export class FieldValueError extends MappingError {
  override name = 'FieldValueError';
  override readonly code = 'RXS_ERR_FIELD_VALUE';
}

/** Finds a topic's fields by semantic name or form key (nested list items aside: they come whole). */
export class FieldResolver {
  private readonly byName = new Map<string, ExportedField>();
  private readonly byKey = new Map<string, ExportedField>();

  constructor(readonly fields: readonly ExportedField[]) {
    for (const field of fields) {
      this.byName.set(field.name, field);
      this.byKey.set(field.key, field);
    }
  }

  /** The field `nameOrKey` names: a semantic name first, then a form key; exact, then ignoring case. */
  resolve(nameOrKey: string): ExportedField {
    const named = this.byName.get(nameOrKey);
    const keyed = this.byKey.get(nameOrKey);
    if (named && keyed && named !== keyed)
      throw new FieldNameError(
        `"${nameOrKey}" is the semantic name of ${named.key} and the form key of "${keyed.name}": say which by the other one (form key ${named.key}, or semantic name "${keyed.name}").`,
      );
    const exact = named ?? keyed;
    if (exact) return exact;
    const folded = nameOrKey.toLowerCase();
    const matches = this.fields.filter(
      (f) => f.name.toLowerCase() === folded || f.key.toLowerCase() === folded,
    );
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1)
      throw new FieldNameError(
        `"${nameOrKey}" names ${matches.length} fields when case is ignored (${matches.map((f) => `"${f.name}"`).join(', ')}): write it as one of them.`,
      );
    throw new FieldNameError(
      `No field is named "${nameOrKey}". The fields are: ${this.fields.map((f) => `"${f.name}" (${f.key})`).join(', ') || 'none (the form has no fields)'}.`,
    );
  }
}

/** How a message names the field: made only for a message (conversions run for every cell). */
const fieldInMessage = (field: ExportedField) => `"${field.name}" (${field.key}, ${field.type || 'data'})`;

const TRUE = new Set(['true', 'yes', 'y', '1', 'on', 'x']);
const FALSE = new Set(['false', 'no', 'n', '0', 'off', '']);

/**
 * `text` as the field's component stores it: a number for number, a boolean for checkbox, an
 * option's value for select and radio (given as the value or its label), a list of them for
 * checklist and taglist (a JSON array, or values separated by commas), a list of objects for a
 * dynamiclist (JSON); text otherwise.
 */
export function convertValue(field: ExportedField, text: string): unknown {
  const type = field.type ?? '';
  if (type === 'number') {
    const trimmed = text.trim();
    const value = Number(trimmed);
    if (trimmed === '' || !Number.isFinite(value))
      throw new FieldValueError(`${fieldInMessage(field)} takes a number, not "${text}".`);
    return value;
  }
  if (type === 'checkbox') {
    const folded = text.trim().toLowerCase();
    if (TRUE.has(folded)) return true;
    if (FALSE.has(folded)) return false;
    throw new FieldValueError(`${fieldInMessage(field)} takes true or false (yes/no, 1/0), not "${text}".`);
  }
  if (type === 'dynamiclist') {
    const value = parseJson(text);
    if (!Array.isArray(value) || !value.every(isPlainObject))
      throw new FieldValueError(
        `${fieldInMessage(field)} takes a JSON list of objects, e.g. [{"key": "value"}], not "${text}".`,
      );
    return value;
  }
  if (MULTI_VALUE_TYPES.has(type)) return remembered(field, text, () => optionValues(field, text));
  if (OPTION_TYPES.has(type)) return remembered(field, text, () => optionValue(field, text));
  return text;
}

/** A checklist's or taglist's text as its list of option values. */
function optionValues(field: ExportedField, text: string): unknown[] {
  const parsed = text.trim().startsWith('[') ? parseJson(text) : undefined;
  // Exports join a list with "; "; by hand people write commas.
  const separator = text.includes(';') ? ';' : ',';
  const items = Array.isArray(parsed)
    ? parsed
    : text.trim() === ''
      ? []
      : text.split(separator).map((item) => item.trim());
  return items.map((item) => optionValue(field, item));
}

/**
 * The option fields' conversions met so far, by text: such a column holds a few texts over and
 * over, and an import converts one a row. Only values made of strings, numbers and booleans are
 * kept (a list as a copy, handed out as a copy), so no row shares an object with another.
 */
const conversions = new WeakMap<ExportedField, Map<string, unknown>>();
/** Texts remembered a field: past them, conversions are made each time. */
const MAX_CONVERSIONS = 256;

function remembered(field: ExportedField, text: string, convert: () => unknown): unknown {
  let known = conversions.get(field);
  if (!known) conversions.set(field, (known = new Map()));
  const hit = known.get(text);
  if (hit !== undefined) return Array.isArray(hit) ? hit.slice() : hit;
  const value = convert();
  if (known.size < MAX_CONVERSIONS && isFlat(value))
    known.set(text, Array.isArray(value) ? value.slice() : value);
  return value;
}

const isPrimitive = (value: unknown) =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
const isFlat = (value: unknown) => isPrimitive(value) || (Array.isArray(value) && value.every(isPrimitive));

/**
 * A value a file names in more than one way, most specific first (a ReqIF enumeration value: its
 * key, then its label): a field with options takes the first name that is one of its options'
 * values or labels; any other field takes the first name, as text.
 */
export class NamedValue {
  constructor(
    readonly names: readonly string[],
    /** The value as the file shows it, for a message: `the enumeration value "Navy" (key "0")`. */
    readonly description: string,
  ) {}

  toString(): string {
    return this.names[0] ?? '';
  }

  toJSON(): string {
    return this.toString();
  }
}

/** NamedValues (alone or in a list) as their first names: what a field without options holds. */
const firstNames = (value: unknown): unknown =>
  value instanceof NamedValue
    ? value.toString()
    : Array.isArray(value) && value.some((item) => item instanceof NamedValue)
      ? value.map(firstNames)
      : value;

/**
 * A value already typed (from JSON, a typed spreadsheet cell or ReqIF attribute) as the field's
 * component stores it: kept when it has the right type, converted from text when it is text, a
 * dynamiclist's items renamed from their semantic names to their keys.
 */
export function convertTypedValue(field: ExportedField, given: unknown): unknown {
  const type = field.type ?? '';
  const value = OPTION_TYPES.has(type) ? given : firstNames(given);
  if (typeof value === 'string') {
    if (type === 'dynamiclist') return renameItems(field, convertValue(field, value));
    return convertValue(field, value);
  }
  if (type === 'dynamiclist') {
    if (!Array.isArray(value) || !value.every(isPlainObject))
      throw new FieldValueError(
        `${fieldInMessage(field)} takes a list of objects, not ${JSON.stringify(value)?.slice(0, 60)}.`,
      );
    return renameItems(field, value);
  }
  if (MULTI_VALUE_TYPES.has(type))
    return (Array.isArray(value) ? value : [value]).map((item) => optionValue(field, item));
  if (OPTION_TYPES.has(type)) return optionValue(field, value);
  if (type === 'number' && typeof value !== 'number')
    throw new FieldValueError(
      `${fieldInMessage(field)} takes a number, not ${JSON.stringify(value)?.slice(0, 60)}.`,
    );
  if (type === 'checkbox' && typeof value !== 'boolean')
    throw new FieldValueError(
      `${fieldInMessage(field)} takes true or false, not ${JSON.stringify(value)?.slice(0, 60)}.`,
    );
  // A text field given a number or a yes/no cell takes it as the text a person sees.
  if (TEXT_TYPES.has(type) && (typeof value === 'number' || typeof value === 'boolean')) return String(value);
  return value;
}

const TEXT_TYPES: ReadonlySet<string> = new Set(['textfield', 'textarea', 'datetime']);

/** One resolver per dynamiclist field, made on its first value: an import converts a value per row. */
const itemResolvers = new WeakMap<ExportedField, FieldResolver>();

/** A dynamiclist's items with their keys back from the item fields' semantic names. */
function renameItems(field: ExportedField, items: unknown): unknown {
  if (!Array.isArray(items) || !field.itemFields?.length) return items;
  let resolver = itemResolvers.get(field);
  if (!resolver) itemResolvers.set(field, (resolver = new FieldResolver(field.itemFields)));
  return items.map((item) => {
    if (!isPlainObject(item)) return item;
    const renamed: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(item)) {
      let key = name;
      try {
        key = resolver.resolve(name).key;
      } catch {
        // A key the item fields do not name stays as it is, as the export kept it.
      }
      try {
        setFieldValue(renamed, key, value);
      } catch (error) {
        if (!(error instanceof FieldNameError)) throw error;
        throw new FieldValueError(
          `${fieldInMessage(field)}: an item's key "${name}" cannot be kept: it names an object's prototype.`,
        );
      }
    }
    return renamed;
  });
}

/**
 * An option's value, given as the value itself or as its label (ignoring case); a NamedValue by
 * the first of its names that is either.
 */
function optionValue(field: ExportedField, given: unknown): unknown {
  const options = field.options ?? [];
  if (options.length === 0) return firstNames(given);
  const names = given instanceof NamedValue ? given.names : [given];
  for (const name of names) {
    const option = optionNamed(options, name);
    if (option) return option.value;
  }
  throw new FieldValueError(
    `${fieldInMessage(field)} takes one of ${options.map((o) => (String(o.value) === o.label ? `"${o.label}"` : `"${String(o.value)}" (${o.label})`)).join(', ')}, not ${given instanceof NamedValue ? given.description : `"${String(given)}"`}.`,
  );
}

/** The option `name` is the value of, else the one option it is the label of (ignoring case). */
function optionNamed(options: readonly FieldOption[], name: unknown): FieldOption | undefined {
  const byValue = options.find((o) => o.value === name || String(o.value) === String(name));
  if (byValue) return byValue;
  const folded = String(name).trim().toLowerCase();
  const byLabel = options.filter(
    (o) => o.label.toLowerCase() === folded || String(o.value).toLowerCase() === folded,
  );
  return byLabel.length === 1 ? byLabel[0] : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Sets a form key's value in record data: "a.b" is a path into nested objects, as form-js reads it. */
export function setFieldValue(data: Record<string, unknown>, key: string, value: unknown): void {
  // Most keys are one name: nothing to split (this runs for every cell of an import).
  const path = key.includes('.') ? splitPath(key) : undefined;
  if (path ? path.some(namesPrototype) : namesPrototype(key))
    throw new FieldNameError(`The form key "${key}" cannot be written: it names an object's prototype.`);
  if (!path) {
    data[key] = value;
    return;
  }
  let target = data;
  for (let i = 0; i < path.length - 1; i++) {
    const part = path[i]!;
    const next = target[part];
    if (!isPlainObject(next)) target[part] = {};
    target = target[part] as Record<string, unknown>;
  }
  target[path[path.length - 1]!] = value;
}

const namesPrototype = (part: string) =>
  part === '__proto__' || part === 'constructor' || part === 'prototype';
