import type { ExportedField } from '@rxs/exchange/export';

/** Rewrites a previous snapshot's values to the current semantic names. */
export type ValueRenamer = (values: Record<string, unknown>) => Record<string, unknown>;

interface Rename {
  name: string;
  /** For a dynamiclist: how its items' names changed. */
  items?: ValueRenamer;
}

/**
 * When a form key got another semantic name (a new `service-key` or label), the previous snapshot
 * holds its values under the old name. This returns a function that moves them to the new name
 * (inside dynamiclist items too), so a renamed field is reported once as a schema change and not
 * as a change of every record. Undefined when no name changed.
 */
export function valueRenamer(
  before: readonly ExportedField[],
  after: readonly ExportedField[],
): ValueRenamer | undefined {
  const current = new Map<string, ExportedField>();
  for (const field of after) if (!current.has(field.key)) current.set(field.key, field);
  const renames = new Map<string, Rename>();
  for (const field of before) {
    const now = current.get(field.key);
    if (!now || renames.has(field.name)) continue;
    const items =
      field.itemFields && now.itemFields ? valueRenamer(field.itemFields, now.itemFields) : undefined;
    if (now.name !== field.name || items) renames.set(field.name, { name: now.name, items });
  }
  if (renames.size === 0) return undefined;

  return (values) => {
    const result = new Map<string, unknown>();
    for (const [name, value] of Object.entries(values)) {
      const rename = renames.get(name);
      if (!rename) continue;
      const items = rename.items;
      result.set(
        rename.name,
        items && Array.isArray(value) ? value.map((item) => (isObject(item) ? items(item) : item)) : value,
      );
    }
    // A value whose name a renamed field took over belonged to a field that is gone: the renamed
    // field's value wins.
    for (const [name, value] of Object.entries(values))
      if (!renames.has(name) && !result.has(name)) result.set(name, value);
    return Object.fromEntries(result);
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
