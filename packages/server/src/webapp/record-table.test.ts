import { describe, expect, it } from 'vitest';
import type { FormSchema, ServiceRecord } from '@rxs/contract';
import { MappedRowsCache, mapRecordRows, queryRecordTable, type TableQuery } from './record-table.js';

const schema: FormSchema = {
  components: [
    { type: 'textfield', key: 'textfield_a1', label: 'Title' },
    {
      type: 'select',
      key: 'select_p',
      label: 'Priority',
      properties: { 'service-key': 'priority' },
      values: [
        { label: 'High', value: 'h' },
        { label: 'Low', value: 'l' },
      ],
    },
    { type: 'text', text: 'no key: skipped' },
  ],
};

function record(id: string, name: string, data: Record<string, unknown>): ServiceRecord {
  return {
    _id: id.padStart(24, '0'),
    name,
    form: {},
    version: '1.0',
    data,
    read_only: false,
    metadata: { tenant_id: 't' },
    context: { knowledge_unit_topic_id: 'r' },
    audit_info: {
      user_id_created: 'u',
      timestamp_created: `2026-01-0${id}T00:00:00.000Z`,
      user_id_last_updated: null,
      timestamp_last_updated: null,
      last_action: 'created',
    },
  };
}

async function* stream(records: ServiceRecord[]) {
  yield* records;
}

const query = (over: Partial<TableQuery> = {}): TableQuery => ({
  offset: 0,
  limit: 50,
  sort: 'id',
  dir: 'asc',
  filters: {},
  ...over,
});

describe('record table', () => {
  const records = [
    record('1', 'REQ-10', { textfield_a1: 'Pump', select_p: 'h' }),
    record('2', 'REQ-9', { textfield_a1: 'Alarm', select_p: 'l', extra_key: 'kept' }),
    record('3', 'REQ-11', { textfield_a1: 'Display' }),
  ];

  it('maps form keys to the exporter’s semantic names, with option labels and unknown keys kept', async () => {
    const mapped = await mapRecordRows(schema, stream(records));
    expect(mapped.columns.map((c) => c.name)).toEqual(['Title', 'priority', 'extra_key']);
    expect(mapped.rows[0]!.values).toEqual({ Title: 'Pump', priority: 'High' });
    expect(mapped.rows[1]!.values.extra_key).toBe('kept');
  });

  it('names the columns no record fills, whatever the page, search or filters', async () => {
    const sparse = [
      record('1', 'REQ-1', { textfield_a1: 'Pump', select_p: '' }),
      record('2', 'REQ-2', { textfield_a1: '', extra_key: 'kept' }),
    ];
    const mapped = await mapRecordRows(schema, stream(sparse));
    expect(queryRecordTable('r', mapped, query()).emptyColumns).toEqual(['priority']);
    // The second record alone fills no Title, but the topic's first does.
    expect(queryRecordTable('r', mapped, query({ offset: 1 })).emptyColumns).toEqual(['priority']);
    expect(queryRecordTable('r', mapped, query({ search: 'kept' })).emptyColumns).toEqual(['priority']);
  });

  it('sorts naturally, keeps empty values last in both directions, filters and pages', async () => {
    const mapped = await mapRecordRows(schema, stream(records));
    const names = (q: Partial<TableQuery>) => queryRecordTable('r', mapped, query(q)).rows.map((r) => r.name);
    expect(names({ sort: 'name' })).toEqual(['REQ-9', 'REQ-10', 'REQ-11']);
    expect(names({ sort: 'name', dir: 'desc' })).toEqual(['REQ-11', 'REQ-10', 'REQ-9']);
    expect(names({ sort: 'field:priority' })).toEqual(['REQ-10', 'REQ-9', 'REQ-11']);
    expect(names({ sort: 'field:priority', dir: 'desc' })).toEqual(['REQ-9', 'REQ-10', 'REQ-11']);
    expect(names({ search: 'alarm' })).toEqual(['REQ-9']);
    expect(names({ filters: { priority: 'hi' } })).toEqual(['REQ-10']);
    const page = queryRecordTable('r', mapped, query({ offset: 1, limit: 1 }));
    expect(page).toMatchObject({ total: 3, unfilteredTotal: 3, offset: 1, limit: 1 });
    expect(page.rows.map((r) => r.name)).toEqual(['REQ-9']);
    expect(mapped.rows.map((r) => r.name)).toEqual(['REQ-10', 'REQ-9', 'REQ-11']);
  });

  it('caches mapped rows by fingerprint and within a row budget', async () => {
    const mapped = await mapRecordRows(schema, stream(records));
    const cache = new MappedRowsCache(5);
    cache.set('a', 'f1', mapped);
    expect(cache.get('a', 'f1')).toBe(mapped);
    expect(cache.get('a', 'f2')).toBeUndefined();
    cache.set('b', 'f1', mapped);
    expect(cache.get('a', 'f1')).toBeUndefined(); // 6 rows > 5: the older entry went
    expect(cache.get('b', 'f1')).toBe(mapped);
  });
});
