import type { ServiceRecord } from '@rxs/contract';
import type { ExportedField, ExportedRecord } from './model.js';
import type { FieldMap } from './field-map.js';
import { disambiguateName } from './names.js';
import { labelValue } from './options.js';
import { isPlainObject, splitPath } from './paths.js';

export interface MapRecordOptions {
  /** Show select, radio, checklist and taglist values by their option labels. */
  labels?: boolean;
}

export interface MappedRecord {
  record: ExportedRecord;
  /**
   * Data keys the map did not know, in order of appearance, each with the name it was exported
   * under. Append them to the map (`extendFieldMap`) so later records reuse the same names.
   */
  newFields: ExportedField[];
}

/**
 * Maps a record's values from opaque form keys to semantic names.
 *
 * Every value of `record.data` lands in exactly one place: under the field its path resolves to,
 * or, for keys the schema does not know, under the key itself (disambiguated if a semantic name
 * already holds it). Dynamiclist items are mapped by their item fields the same way.
 *
 * To map many records by one map, a {@link RecordMapper} does the same without rebuilding the map's
 * lookup structures for every record.
 */
export function mapRecord(
  record: ServiceRecord,
  map: Pick<FieldMap, 'fields'>,
  options: MapRecordOptions = {},
): MappedRecord {
  return new RecordMapper(map, options).map(record);
}

/**
 * `mapRecord` for a stream of records by one map that grows as records reveal new keys: mapping
 * record after record here gives what `mapRecord(record, map)` gives when `map` is extended with
 * each result's `newFields` (`extendFieldMap`), as the export procedure does.
 */
export class RecordMapper {
  private readonly scope: ScopeMapper;

  constructor(map: Pick<FieldMap, 'fields'>, options: MapRecordOptions = {}) {
    this.scope = new ScopeMapper(map.fields, options.labels === true);
  }

  map(record: ServiceRecord): MappedRecord {
    const scope = this.scope;
    // Keys met only inside list items are not remembered from one record to the next.
    scope.resetItems();
    const newFields: ExportedField[] = [];
    const values = scope.map(isPlainObject(record.data) ? record.data : {}, newFields);
    const audit = record.audit_info as Partial<ServiceRecord['audit_info']> | undefined;
    const exported: ExportedRecord = {
      id: record._id,
      // The export procedure replaces it by the topic's identifier rule.
      readableId: record._id,
      name: record.name,
      version: record.version,
      topicRevisionId: record.context?.knowledge_unit_topic_id ?? '',
      values,
    };
    const sourceId = record.context?.global_element_id;
    if (typeof sourceId === 'string' && sourceId !== '') exported.sourceId = sourceId;
    if (audit?.timestamp_created !== undefined) exported.createdAt = audit.timestamp_created;
    if (audit?.timestamp_last_updated !== undefined) exported.updatedAt = audit.timestamp_last_updated;
    return { record: exported, newFields };
  }
}

/** A node of the tree of known data paths: "a.b" and "a.c" share the node "a". */
interface PathNode {
  field?: ExportedField;
  /** Position of `field` in the scope's column order. */
  index: number;
  children: Map<string, PathNode>;
}

/** A data-only field and its position in the scope's column order. */
interface DataField {
  field: ExportedField;
  index: number;
}

/** Values of one object by column position; `unset` marks a column without a value. */
const unset: unique symbol = Symbol('unset');
type Slots = (unknown | typeof unset)[];

/** Maps objects of one naming scope: a record's data, or the items of one dynamiclist. */
class ScopeMapper {
  private readonly root: PathNode = { index: -1, children: new Map() };
  /** Fields the schema does not define (source 'data'), by key; a key met twice in one record has two. */
  private readonly dataFields = new Map<string, DataField[]>();
  private readonly names = new Set<string>();
  private readonly order: ExportedField[] = [];
  private readonly itemMappers = new Map<ExportedField, ScopeMapper>();

  constructor(
    fields: readonly ExportedField[],
    private readonly labels: boolean,
  ) {
    for (const field of fields) {
      const index = this.order.length;
      this.names.add(field.name);
      this.order.push(field);
      if (field.source === 'data') {
        const known = this.dataFields.get(field.key);
        if (known) known.push({ field, index });
        else this.dataFields.set(field.key, [{ field, index }]);
        continue;
      }
      let node = this.root;
      for (const segment of splitPath(field.key)) {
        let child = node.children.get(segment);
        if (!child) node.children.set(segment, (child = { index: -1, children: new Map() }));
        node = child;
      }
      if (node.field === undefined) {
        node.field = field;
        node.index = index;
      }
    }
  }

  /** Forgets the mappers of list items (and so the keys they met). */
  resetItems(): void {
    if (this.itemMappers.size > 0) this.itemMappers.clear();
  }

  /** The values of `data` by semantic name, in column order; fields it creates go to `newFields`. */
  map(data: Record<string, unknown>, newFields?: ExportedField[]): Record<string, unknown> {
    const slots: Slots = new Array<unknown>(this.order.length).fill(unset);
    this.walk(data, this.root, '', slots, newFields);
    // Values in column order, whatever the order of the data. Odd keys such as "__proto__" stay
    // plain properties (as Object.fromEntries keeps them).
    const values: Record<string, unknown> = {};
    const order = this.order;
    for (let i = 0; i < slots.length; i++) {
      const value = slots[i];
      if (value === unset) continue;
      const name = order[i]!.name;
      if (name === '__proto__')
        Object.defineProperty(values, name, { value, writable: true, enumerable: true, configurable: true });
      else values[name] = value;
    }
    return values;
  }

  private walk(
    data: Record<string, unknown>,
    node: PathNode,
    prefix: string,
    slots: Slots,
    newFields: ExportedField[] | undefined,
  ): void {
    for (const key of Object.keys(data)) {
      const value = data[key];
      // A literal "a.b" key means the same path as { a: { b } }, as the form key "a.b" does.
      let target: PathNode | undefined;
      if (key.indexOf('.') < 0) target = node.children.get(key);
      else {
        target = node;
        for (const segment of splitPath(key)) target = target?.children.get(segment);
      }

      if (target?.field && slots[target.index] === unset) {
        slots[target.index] = this.convert(target.field, value);
      } else if (target && !target.field && target.children.size > 0 && isPlainObject(value)) {
        this.walk(value, target, prefix === '' ? key : `${prefix}.${key}`, slots, newFields);
      } else {
        // Unknown to the schema, or a second value for a path already filled ({"a.b"} and {a:{b}}).
        const index = this.dataField(prefix === '' ? key : `${prefix}.${key}`, slots, newFields);
        slots[index] = value;
      }
    }
  }

  /** The position of a data-only field for `key` not yet filled in this object, created if needed. */
  private dataField(key: string, slots: Slots, newFields: ExportedField[] | undefined): number {
    const known = this.dataFields.get(key);
    if (known) for (const entry of known) if (slots[entry.index] === unset) return entry.index;
    const name = this.names.has(key) ? disambiguateName(key, key, this.names) : key;
    const field: ExportedField = { key, name, source: 'data' };
    const index = this.order.length;
    if (known) known.push({ field, index });
    else this.dataFields.set(key, [{ field, index }]);
    this.names.add(name);
    this.order.push(field);
    newFields?.push(field);
    slots.push(unset);
    return index;
  }

  private convert(field: ExportedField, value: unknown): unknown {
    if (field.itemFields && Array.isArray(value)) {
      let items = this.itemMappers.get(field);
      if (!items) this.itemMappers.set(field, (items = new ScopeMapper(field.itemFields, this.labels)));
      const mapper = items;
      return value.map((item) => (isPlainObject(item) ? mapper.map(item) : item));
    }
    return this.labels ? labelValue(field, value) : value;
  }
}
