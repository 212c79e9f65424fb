import type { ExportedField } from '@rxs/exchange/export';
import { jsonEqual } from '@rxs/contract/plain';
import type { Change, FieldModification, FieldRef, SchemaChanges } from './report.js';

/** The part of a topic a schema comparison needs. */
export interface SchemaSide {
  fields: readonly ExportedField[];
  schemaHash: string;
}

/**
 * Compares the fields of two snapshots of a topic by form key: added, removed, renamed (same key,
 * another semantic name) and modified (type, label or options). Either side may be missing: a new
 * topic has only added fields, a topic no longer exported only removed ones.
 */
export function diffSchema(before: SchemaSide | undefined, after: SchemaSide | undefined): SchemaChanges {
  const changes: SchemaChanges = {
    changed: (before?.schemaHash ?? null) !== (after?.schemaHash ?? null),
    previousHash: before?.schemaHash ?? null,
    hash: after?.schemaHash ?? null,
    fieldsAdded: [],
    fieldsRemoved: [],
    fieldsRenamed: [],
    fieldsModified: [],
  };
  diffFields(before?.fields ?? [], after?.fields ?? [], { key: '', name: '' }, changes);
  if (
    changes.fieldsAdded.length +
      changes.fieldsRemoved.length +
      changes.fieldsRenamed.length +
      changes.fieldsModified.length >
    0
  )
    changes.changed = true;
  return changes;
}

interface Prefix {
  key: string;
  name: string;
}

function ref(field: ExportedField, prefix: Prefix): FieldRef {
  return { key: prefix.key + field.key, name: prefix.name + field.name, type: field.type ?? null };
}

function change<T>(before: T, after: T): Change<T> | null {
  return jsonEqual(before, after) ? null : { before, after };
}

function byKey(fields: readonly ExportedField[]): Map<string, ExportedField> {
  const map = new Map<string, ExportedField>();
  for (const field of fields) if (!map.has(field.key)) map.set(field.key, field);
  return map;
}

function diffFields(
  before: readonly ExportedField[],
  after: readonly ExportedField[],
  prefix: Prefix,
  out: SchemaChanges,
): void {
  const old = byKey(before);
  const current = byKey(after);
  for (const field of current.values()) {
    const previous = old.get(field.key);
    if (!previous) {
      out.fieldsAdded.push(ref(field, prefix));
      for (const item of field.itemFields ?? []) out.fieldsAdded.push(ref(item, itemPrefix(prefix, field)));
      continue;
    }
    if (previous.name !== field.name)
      out.fieldsRenamed.push({
        key: prefix.key + field.key,
        before: prefix.name + previous.name,
        after: prefix.name + field.name,
      });
    const modification: FieldModification = {
      key: prefix.key + field.key,
      name: prefix.name + field.name,
      type: change(previous.type ?? null, field.type ?? null),
      label: change(previous.label ?? null, field.label ?? null),
      options: change(previous.options ?? null, field.options ?? null),
    };
    if (modification.type || modification.label || modification.options)
      out.fieldsModified.push(modification);
    if (previous.itemFields || field.itemFields)
      diffFields(previous.itemFields ?? [], field.itemFields ?? [], itemPrefix(prefix, field), out);
  }
  for (const field of old.values()) {
    if (current.has(field.key)) continue;
    out.fieldsRemoved.push(ref(field, prefix));
    for (const item of field.itemFields ?? []) out.fieldsRemoved.push(ref(item, itemPrefix(prefix, field)));
  }
}

function itemPrefix(prefix: Prefix, list: ExportedField): Prefix {
  return { key: `${prefix.key}${list.key}[].`, name: `${prefix.name}${list.name}[].` };
}
