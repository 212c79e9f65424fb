import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FormComponent } from '../../../contract/src/form.js';
import type { KnowledgeTopicRevision } from '../../../contract/src/knowledge-topic.js';
import type { ServiceRecord } from '../../../contract/src/record.js';
import { buildFieldMap, extendFieldMap } from './field-map.js';
import { mapRecord, RecordMapper } from './record.js';

const samples = new URL('../../../../reference/samples/', import.meta.url);
const load = <T>(file: string) => JSON.parse(readFileSync(new URL(file, samples), 'utf8')) as T;
const sampleTopic = load<KnowledgeTopicRevision>('kt_system_requirements.json');
const sampleRecords = load<ServiceRecord[]>('records_system_requirements.json');

function record(data: Record<string, unknown>): ServiceRecord {
  return {
    ...structuredClone(sampleRecords[0]!),
    _id: '0123456789abcdef01234567',
    name: 'Test record',
    data,
  };
}

const mapOf = (...components: FormComponent[]) => buildFieldMap({ components });

describe('mapRecord on the sample records', () => {
  const map = buildFieldMap(sampleTopic.knowledge_topic_schema);

  it('maps every value by semantic name and keeps the record facts', () => {
    const { record: mapped, newFields } = mapRecord(sampleRecords[0]!, map);
    expect(newFields).toEqual([]);
    expect(mapped).toEqual({
      id: '6a7701ffcd5640b4bf28b05e',
      readableId: '6a7701ffcd5640b4bf28b05e',
      name: 'Requirements-1',
      version: '1.0',
      topicRevisionId: '69b989b54252b7481003b10a',
      createdAt: '2026-08-10T12:00:00.000000',
      updatedAt: null,
      values: {
        Name: 'REQ_001 — Sterilization temperature range is better',
        Description: 'Device shall achieve and maintain sterilization temperature of 121°C ± 2°C',
        Type: 'functional',
        'Requirement concerning': ['Equipment'],
        Source: 'Functional & Performance Requirements',
        Priority: 'high',
        Justification: 'Sterilization efficacy depends on controlled temperature',
      },
    });
  });

  it('shows option labels on request, keeping values that are not options', () => {
    const { record: mapped } = mapRecord(sampleRecords[1]!, map, { labels: true });
    expect(mapped.values['Requirement concerning']).toEqual(['Cleanliness of Product']);
    expect(mapped.values.Priority).toBe('High');
    expect(mapped.values.Type).toBe('Functional');
    const odd = mapRecord(record({ priority: 'urgent', checklist_kgd0ri: ['Equipment', 'Unknown'] }), map, {
      labels: true,
    });
    expect(odd.record.values).toEqual({
      Priority: 'urgent',
      'Requirement concerning': ['Equipment', 'Unknown'],
    });
  });

  it('maps all sample records without unknown keys', () => {
    for (const sample of sampleRecords) expect(mapRecord(sample, map).newFields).toEqual([]);
  });
});

describe('keys the schema does not know', () => {
  const map = mapOf({ type: 'textfield', key: 'name', label: 'Name' });

  it('keeps them under their form key and reports them as new fields', () => {
    const { record: mapped, newFields } = mapRecord(record({ name: 'n', legacy_key: 1 }), map);
    expect(mapped.values).toEqual({ Name: 'n', legacy_key: 1 });
    expect(newFields).toEqual([{ key: 'legacy_key', name: 'legacy_key', source: 'data' }]);
  });

  it('disambiguates a data key that collides with a semantic name', () => {
    const { record: mapped, newFields } = mapRecord(record({ name: 'from schema', Name: 'from data' }), map);
    expect(mapped.values).toEqual({ Name: 'from schema', 'Name (Name)': 'from data' });
    expect(newFields.map((f) => f.name)).toEqual(['Name (Name)']);
  });

  it('reuses the names of fields appended to the map', () => {
    const first = mapRecord(record({ extra: 1 }), map);
    const extended = extendFieldMap(map, first.newFields);
    const second = mapRecord(record({ extra: 2, another: 3 }), extended);
    expect(second.record.values).toEqual({ extra: 2, another: 3 });
    expect(second.newFields.map((f) => f.key)).toEqual(['another']);
  });

  it('keeps unknown keys inside a group path under their full data path', () => {
    const grouped = mapOf({
      type: 'group',
      path: 'g',
      components: [{ type: 'textfield', key: 'a', label: 'A' }],
    });
    const { record: mapped, newFields } = mapRecord(record({ g: { a: 1, b: 2 } }), grouped);
    expect(mapped.values).toEqual({ A: 1, 'g.b': 2 });
    expect(newFields.map((f) => f.key)).toEqual(['g.b']);
  });

  it('keeps a scalar where the schema expects a group as one value', () => {
    const grouped = mapOf({
      type: 'group',
      path: 'g',
      components: [{ type: 'textfield', key: 'a', label: 'A' }],
    });
    expect(mapRecord(record({ g: 'flat' }), grouped).record.values).toEqual({ g: 'flat' });
  });

  it('keeps a "__proto__" data key as a plain value', () => {
    const data = JSON.parse('{"__proto__": {"x": 1}, "name": "n"}') as Record<string, unknown>;
    const mapped = mapRecord(record(data), map).record.values;
    expect(Object.getPrototypeOf(mapped)).toBe(Object.prototype);
    expect(Object.keys(mapped)).toEqual(['Name', '__proto__']);
  });
});

describe('nested values', () => {
  it('reads dotted keys as form-js does, nested or literal', () => {
    const map = mapOf({ type: 'textfield', key: 'address.street', label: 'Street' });
    expect(mapRecord(record({ address: { street: 'Main' } }), map).record.values).toEqual({ Street: 'Main' });
    expect(mapRecord(record({ 'address.street': 'Main' }), map).record.values).toEqual({ Street: 'Main' });
  });

  it('keeps both values when a record holds a path twice', () => {
    const map = mapOf({ type: 'textfield', key: 'a.b', label: 'AB' });
    const { record: mapped } = mapRecord(record({ a: { b: 1 }, 'a.b': 2 }), map);
    expect(mapped.values).toEqual({ AB: 1, 'a.b': 2 });
  });

  it('maps dynamiclist items by their item field names', () => {
    const map = mapOf({
      type: 'dynamiclist',
      path: 'steps',
      label: 'Test steps',
      components: [
        { type: 'textarea', key: 'action', label: 'Action' },
        { type: 'radio', key: 'result', label: 'Result', values: [{ label: 'Passed', value: 'pass' }] },
      ],
    });
    const data = {
      steps: [{ action: 'Heat', result: 'pass', note: 'x' }, { action: 'Cool' }, 'not an object'],
    };
    expect(mapRecord(record(data), map).record.values).toEqual({
      'Test steps': [{ Action: 'Heat', Result: 'pass', note: 'x' }, { Action: 'Cool' }, 'not an object'],
    });
    expect(mapRecord(record(data), map, { labels: true }).record.values['Test steps']).toEqual([
      { Action: 'Heat', Result: 'Passed', note: 'x' },
      { Action: 'Cool' },
      'not an object',
    ]);
  });

  it('orders values by column, whatever the order of the data', () => {
    const map = mapOf(
      { type: 'textfield', key: 'a', label: 'A' },
      { type: 'textfield', key: 'b', label: 'B' },
    );
    expect(Object.keys(mapRecord(record({ z: 0, b: 2, a: 1 }), map).record.values)).toEqual(['A', 'B', 'z']);
  });
});

describe('RecordMapper', () => {
  it('maps a stream of records as mapRecord does with the map extended after each record', () => {
    const map = mapOf(
      { type: 'textfield', key: 'a', label: 'A' },
      {
        type: 'dynamiclist',
        path: 'list',
        label: 'List',
        components: [{ type: 'textfield', key: 'x', label: 'X' }],
      },
    );
    const records = [
      record({ a: 1, extra: 1 }),
      record({
        a: 2,
        list: [
          { x: 1, odd: 1 },
          { x: 2, 'odd (odd)': 2 },
        ],
      }),
      record({ extra: 3, A: 'data named like a field', 'a.b': 4 }),
      record({ list: [{ 'odd (odd)': 5 }], another: 6, extra: 7 }),
      record({}),
    ];
    const mapper = new RecordMapper(map);
    let extended = map;
    for (const input of records) {
      const expected = mapRecord(input, extended);
      const got = mapper.map(input);
      expect(got).toEqual(expected);
      expect(Object.keys(got.record.values)).toEqual(Object.keys(expected.record.values));
      extended = extendFieldMap(extended, expected.newFields);
    }
  });
});
