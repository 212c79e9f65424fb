import { jsonEqual } from '@rxs/contract/plain';
import type { Change, FieldChange, RecordChange } from './report.js';
import type { StoredRecord } from './state.js';

/**
 * What changed in a record between two snapshots: its name, its version and each value by
 * semantic name, compared deeply (arrays by position, objects by key, so a change inside a
 * dynamiclist item shows as a change of the list's value). Undefined when nothing changed.
 */
export function diffRecord(before: StoredRecord, after: StoredRecord): RecordChange | undefined {
  const fields: FieldChange[] = [];
  for (const name of Object.keys(after.values)) {
    const value = after.values[name];
    if (!Object.hasOwn(before.values, name)) fields.push({ field: name, change: 'added', after: value });
    else if (!jsonEqual(before.values[name], value))
      fields.push({ field: name, change: 'modified', before: before.values[name], after: value });
  }
  for (const name of Object.keys(before.values))
    if (!Object.hasOwn(after.values, name))
      fields.push({ field: name, change: 'removed', before: before.values[name] });

  const nameChange = textChange(before.name, after.name);
  const versionChange = textChange(before.version, after.version);
  if (fields.length === 0 && !nameChange && !versionChange) return undefined;
  return { id: after.id, name: after.name, nameChange, versionChange, fields };
}

function textChange(before: string, after: string): Change<string> | null {
  return before === after ? null : { before, after };
}
