import { isPlainObject } from '../mapping/paths.js';
import { DEFAULT_IMPORT_LIMITS, RowBytes, tooManyColumns, type ImportLimits } from './limits.js';
import { FIXED_COLUMNS, type FactColumn, type RecordFacts, type SourceRow } from './source-row.js';

/**
 * Keys of a flat object that are a record's facts, as exports and hand-made files name them: the
 * CSV/XLSX columns, and the names `rxs export`'s JSON gives them.
 */
const FACT_KEYS: ReadonlyMap<string, FactColumn> = new Map([
  ...FIXED_COLUMNS,
  ['id', 'id'],
  ['readableId', 'readableId'],
  ['topicRevisionId', 'topicRevisionId'],
  ['sourceId', 'sourceId'],
  ['createdAt', 'skip'],
  ['updatedAt', 'skip'],
]);

/**
 * A row from a JSON object, in any of the three shapes people have: a record of `rxs export`
 * (`{id, readableId, name, version, topicRevisionId, values: {...by semantic name}}`), a record of
 * the service (`{_id, name, data: {...by form key}, context}`), or a flat object of facts and
 * fields by name (`{"name": "...", "Priority": "high"}`).
 */
export function rowOfObject(
  object: unknown,
  where: string,
  limits: ImportLimits = DEFAULT_IMPORT_LIMITS,
): SourceRow {
  const row: SourceRow = { where, facts: {}, values: new Map(), problems: [] };
  const bytes = new RowBytes(limits, where);
  /** A value of the row: at most `maxColumns` of them, a text no longer than a cell may be. */
  const set = (column: string, value: unknown) => {
    if (row.values.size >= limits.maxColumns)
      throw tooManyColumns(limits, `${where} has more than ${limits.maxColumns.toLocaleString('en')} values`);
    if (typeof value === 'string') bytes.add(value, column);
    row.values.set(column, { value });
  };
  if (!isPlainObject(object)) {
    row.problems.push(
      `it is ${Array.isArray(object) ? 'a list' : JSON.stringify(object)?.slice(0, 40)}, not an object of a record's fields.`,
    );
    return row;
  }
  const takeFact = (fact: keyof RecordFacts, value: unknown) => {
    if (value === undefined || value === null || value === '') return;
    if (typeof value === 'string' || typeof value === 'number') row.facts[fact] = String(value);
    else row.problems.push(`its ${fact} is ${JSON.stringify(value).slice(0, 40)}, not a text.`);
  };
  if (isPlainObject(object.values)) {
    for (const [key, value] of Object.entries(object)) {
      const fact = FACT_KEYS.get(key);
      if (fact && fact !== 'skip') takeFact(fact, value);
    }
    for (const [name, value] of Object.entries(object.values)) set(name, value);
    return row;
  }
  if (isPlainObject(object.data)) {
    takeFact('id', object._id);
    takeFact('name', object.name);
    takeFact('version', object.version);
    if (isPlainObject(object.context)) {
      takeFact('topicRevisionId', object.context.knowledge_unit_topic_id);
      takeFact('sourceId', object.context.global_element_id);
    }
    row.byFormKey = true;
    for (const [key, value] of Object.entries(object.data)) set(key, value);
    return row;
  }
  for (const [key, value] of Object.entries(object)) {
    const fact = FACT_KEYS.get(key);
    if (fact === 'skip') continue;
    if (fact) takeFact(fact, value);
    else set(key, value);
  }
  return row;
}
