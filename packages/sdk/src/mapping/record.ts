import type { ServiceRecord } from '../contract/record.js';
import type { ExportedField, ExportedRecord } from '../export/model.js';
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
 */
export function mapRecord(
  record: ServiceRecord,
  map: Pick<FieldMap, 'fields'>,
  options: MapRecordOptions = {},
): MappedRecord {
  const mapper = new ScopeMapper(map.fields, options.labels === true);
  const values = mapper.map(isPlainObject(record.data) ? record.data : {});
  const audit = record.audit_info as Partial<ServiceRecord['audit_info']> | undefined;
  const exported: ExportedRecord = {
    id: record._id,
    name: record.name,
    version: record.version,
    topicRevisionId: record.context?.knowledge_unit_topic_id ?? '',
    values,
  };
  if (audit?.timestamp_created !== undefined) exported.createdAt = audit.timestamp_created;
  if (audit?.timestamp_last_updated !== undefined) exported.updatedAt = audit.timestamp_last_updated;
  return { record: exported, newFields: mapper.newFields };
}

/** A node of the tree of known data paths: "a.b" and "a.c" share the node "a". */
interface PathNode {
  field?: ExportedField;
  children: Map<string, PathNode>;
}

/** Maps objects of one naming scope: a record's data, or the items of one dynamiclist. */
class ScopeMapper {
  readonly newFields: ExportedField[] = [];
  private readonly root: PathNode = { children: new Map() };
  /** Fields the schema does not define (source 'data'), by key; a key met twice in one record has two. */
  private readonly dataFields = new Map<string, ExportedField[]>();
  private readonly names = new Set<string>();
  private readonly order: ExportedField[] = [];
  private readonly itemMappers = new Map<ExportedField, ScopeMapper>();

  constructor(
    fields: readonly ExportedField[],
    private readonly labels: boolean,
  ) {
    for (const field of fields) {
      this.names.add(field.name);
      this.order.push(field);
      if (field.source === 'data') {
        this.dataFields.set(field.key, [...(this.dataFields.get(field.key) ?? []), field]);
        continue;
      }
      let node = this.root;
      for (const segment of splitPath(field.key)) {
        let child = node.children.get(segment);
        if (!child) node.children.set(segment, (child = { children: new Map() }));
        node = child;
      }
      node.field ??= field;
    }
  }

  map(data: Record<string, unknown>): Record<string, unknown> {
    const assigned = new Map<ExportedField, unknown>();
    this.walk(data, this.root, [], assigned);
    // Values in column order, whatever the order of the data. fromEntries keeps odd keys such as
    // "__proto__" as plain properties.
    return Object.fromEntries(
      this.order.filter((f) => assigned.has(f)).map((f) => [f.name, assigned.get(f)]),
    );
  }

  private walk(
    data: Record<string, unknown>,
    node: PathNode,
    prefix: string[],
    assigned: Map<ExportedField, unknown>,
  ): void {
    for (const [key, value] of Object.entries(data)) {
      // A literal "a.b" key means the same path as { a: { b } }, as the form key "a.b" does.
      const segments = splitPath(key);
      let target: PathNode | undefined = node;
      for (const segment of segments) target = target?.children.get(segment);
      const path = [...prefix, ...segments];

      if (target?.field && !assigned.has(target.field)) {
        assigned.set(target.field, this.convert(target.field, value));
      } else if (target && !target.field && target.children.size > 0 && isPlainObject(value)) {
        this.walk(value, target, path, assigned);
      } else {
        // Unknown to the schema, or a second value for a path already filled ({"a.b"} and {a:{b}}).
        assigned.set(this.dataField(path.join('.'), assigned), value);
      }
    }
  }

  private dataField(key: string, assigned: Map<ExportedField, unknown>): ExportedField {
    const known = this.dataFields.get(key) ?? [];
    const free = known.find((field) => !assigned.has(field));
    if (free) return free;
    const name = this.names.has(key) ? disambiguateName(key, key, this.names) : key;
    const field: ExportedField = { key, name, source: 'data' };
    this.dataFields.set(key, [...known, field]);
    this.names.add(name);
    this.order.push(field);
    this.newFields.push(field);
    return field;
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
