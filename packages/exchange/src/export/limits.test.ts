import { describe, expect, it } from 'vitest';
import type { ServiceRecord } from '../../../contract/src/record.js';
import { buildFieldMap, extendFieldMap, RecordMapper } from '../mapping/index.js';
import {
  checkExportColumns,
  countColumns,
  DEFAULT_MAX_EXPORT_COLUMNS,
  TooManyColumnsError,
} from './limits.js';

const schema = {
  components: [
    { type: 'textfield', key: 'title', label: 'Title' },
    {
      type: 'dynamiclist',
      key: 'steps',
      path: 'steps',
      label: 'Steps',
      components: [{ type: 'textfield', key: 'action', label: 'Action' }],
    },
  ],
};

const record = (id: string, data: Record<string, unknown>) =>
  ({
    _id: id,
    name: id,
    form: {},
    version: '1.0',
    data,
    read_only: false,
    metadata: { tenant_id: 't' },
    context: { knowledge_unit_topic_id: 'rev' },
    audit_info: { user_id_created: 'u', timestamp_created: '2024-01-01T00:00:00.000Z' },
  }) as unknown as ServiceRecord;

/** Maps records as the export procedure does, checking the columns each time the map grows. */
function mapTopic(records: ServiceRecord[], limit?: number) {
  let map = buildFieldMap(schema as never);
  const mapper = new RecordMapper(map);
  for (const item of records) {
    const mapped = mapper.map(item);
    if (mapped.newFields.length > 0) {
      map = extendFieldMap(map, mapped.newFields);
      checkExportColumns({ name: 'Tests', revisionId: 'rev' }, map.fields, limit);
    }
  }
  return map;
}

describe('export column limit', () => {
  it('counts fields and the item fields of dynamic lists', () => {
    expect(countColumns(buildFieldMap(schema as never).fields)).toBe(3);
  });

  it('lets a topic whose records add a few data-only keys through', () => {
    const map = mapTopic([record('a', { title: 'x', extra: 1 }), record('b', { other: 2 })]);
    expect(map.fields.map((f) => f.name)).toContain('extra');
  });

  it('stops a topic whose one record holds more keys than the limit, naming topic, count and limit', () => {
    const data = Object.fromEntries(
      Array.from({ length: DEFAULT_MAX_EXPORT_COLUMNS + 10 }, (_, i) => [`k${i}`, i]),
    );
    let error: unknown;
    try {
      mapTopic([record('a', { title: 'fine' }), record('b', data)]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TooManyColumnsError);
    const tooMany = error as TooManyColumnsError;
    expect(tooMany.columns).toBe(DEFAULT_MAX_EXPORT_COLUMNS + 13);
    expect(tooMany.message).toContain('"Tests" (revision rev)');
    expect(tooMany.message).toContain(`more than the limit of ${DEFAULT_MAX_EXPORT_COLUMNS}`);
  });

  it('counts keys spread over many records, and honours a lower limit', () => {
    const records = Array.from({ length: 30 }, (_, i) => record(`r${i}`, { [`stray${i}`]: i }));
    expect(() => mapTopic(records, 20)).toThrow(/would export 21 columns, more than the limit of 20/);
    expect(() => mapTopic(records.slice(0, 17), 20)).not.toThrow();
  });
});
