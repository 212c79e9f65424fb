import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KnowledgeTopicRevision } from '../../../contract/src/knowledge-topic.js';
import type { ServiceRecord } from '../../../contract/src/record.js';
import { buildFieldMap } from './field-map.js';
import { mapRecord } from './record.js';
import {
  convertTypedValue,
  convertValue,
  FieldNameError,
  FieldResolver,
  FieldValueError,
  setFieldValue,
} from './record-input.js';

const samples = new URL('../../../../reference/samples/', import.meta.url);
const load = <T>(file: string) => JSON.parse(readFileSync(new URL(file, samples), 'utf8')) as T;
const sampleTopic = load<KnowledgeTopicRevision>('kt_system_requirements.json');
const sampleRecords = load<ServiceRecord[]>('records_system_requirements.json');

const map = buildFieldMap({
  components: [
    { type: 'textfield', key: 'title', label: 'Title' },
    { type: 'number', key: 'score', label: 'Risk score' },
    { type: 'checkbox', key: 'done', label: 'Done' },
    {
      type: 'select',
      key: 'priority',
      label: 'Priority',
      values: [
        { value: 'h', label: 'High' },
        { value: 'l', label: 'Low' },
      ],
    },
    {
      type: 'checklist',
      key: 'areas',
      label: 'Areas',
      values: [
        { value: 'sw', label: 'Software' },
        { value: 'hw', label: 'Hardware' },
      ],
    },
    { type: 'textfield', key: 'Title2', label: 'title' },
    { type: 'group', path: 'nested', components: [{ type: 'textfield', key: 'inner', label: 'Inner' }] },
    {
      type: 'dynamiclist',
      path: 'steps',
      label: 'Steps',
      components: [{ type: 'textfield', key: 's', label: 'S' }],
    },
  ],
});
const resolver = new FieldResolver(map.fields);
const field = (name: string) => resolver.resolve(name);

describe('FieldResolver', () => {
  it('finds a field by semantic name or form key, exactly or ignoring case', () => {
    expect(field('Risk score').key).toBe('score');
    expect(field('score').key).toBe('score');
    expect(field('risk SCORE').key).toBe('score');
    expect(field('Inner').key).toBe('nested.inner');
    expect(field('nested.inner').key).toBe('nested.inner');
  });
  it('refuses an unknown name with every valid one, and a name that is two fields', () => {
    expect(() => field('Severity')).toThrow(FieldNameError);
    expect(() => field('Severity')).toThrow(/"Risk score" \(score\)/);
    // "Title" (title) and "title" (Title2) are one name when case is ignored.
    expect(field('Title').key).toBe('title');
    expect(() => field('TITLE')).toThrow(/names 2 fields/);
  });
});

describe('convertValue', () => {
  it('converts text to what each component stores', () => {
    expect(convertValue(field('Risk score'), ' 4.5 ')).toBe(4.5);
    expect(convertValue(field('Done'), 'yes')).toBe(true);
    expect(convertValue(field('Done'), 'FALSE')).toBe(false);
    expect(convertValue(field('Priority'), 'High')).toBe('h');
    expect(convertValue(field('Priority'), 'l')).toBe('l');
    expect(convertValue(field('Areas'), 'Software, hw')).toEqual(['sw', 'hw']);
    expect(convertValue(field('Areas'), '["Hardware"]')).toEqual(['hw']);
    expect(convertValue(field('Areas'), '')).toEqual([]);
    expect(convertValue(field('Steps'), '[{"s":"one"}]')).toEqual([{ s: 'one' }]);
    expect(convertValue(field('Title'), '  =SUM(A1)\nline two ')).toBe('  =SUM(A1)\nline two ');
  });
  it('refuses what the component cannot hold, saying what it takes', () => {
    expect(() => convertValue(field('Risk score'), 'high')).toThrow(/takes a number, not "high"/);
    expect(() => convertValue(field('Risk score'), '')).toThrow(FieldValueError);
    expect(() => convertValue(field('Risk score'), 'Infinity')).toThrow(FieldValueError);
    expect(() => convertValue(field('Done'), 'maybe')).toThrow(/true or false/);
    expect(() => convertValue(field('Priority'), 'Medium')).toThrow(/"h" \(High\), "l" \(Low\)/);
    expect(() => convertValue(field('Areas'), 'Software, Firmware')).toThrow(/not "Firmware"/);
    expect(() => convertValue(field('Steps'), 'one, two')).toThrow(/JSON list of objects/);
    // An item key naming a prototype is the value's problem (the row is refused), not a crash.
    expect(() => convertTypedValue(field('Steps'), '[{"__proto__": 1}]')).toThrow(FieldValueError);
    expect(() => convertTypedValue(field('Steps'), '[{"__proto__": 1}]')).toThrow(
      /"__proto__" cannot be kept/,
    );
  });
  it('gives each row a list of its own, and refuses a wrong option every time', () => {
    // An import converts the same few option texts on every row: each answer is the row's own.
    const first = convertValue(field('Areas'), 'Software; Hardware') as string[];
    first.push('changed by the first row');
    const second = convertValue(field('Areas'), 'Software; Hardware');
    expect(second).toEqual(['sw', 'hw']);
    expect(second).not.toBe(first);
    // A list read from JSON with no options to match keeps its objects: never shared either.
    const steps = convertValue(field('Steps'), '[{"s":"one"}]') as { s: string }[];
    steps[0]!.s = 'changed';
    expect(convertValue(field('Steps'), '[{"s":"one"}]')).toEqual([{ s: 'one' }]);
    for (let i = 0; i < 3; i++)
      expect(() => convertValue(field('Priority'), 'Medium')).toThrow(/"h" \(High\), "l" \(Low\)/);
    // Past the texts remembered, conversions go on as before.
    for (let i = 0; i < 300; i++)
      expect(convertValue(field('Priority'), i % 2 ? ` High${' '.repeat(i)}` : 'l')).toBe(i % 2 ? 'h' : 'l');
  });
});

describe('setFieldValue', () => {
  it('writes nested keys as paths, and never into a prototype', () => {
    const data: Record<string, unknown> = { nested: { other: 1 } };
    setFieldValue(data, 'nested.inner', 'x');
    setFieldValue(data, 'deep.er.key', 2);
    expect(data).toEqual({ nested: { other: 1, inner: 'x' }, deep: { er: { key: 2 } } });
    expect(() => setFieldValue(data, '__proto__.polluted', 1)).toThrow(FieldNameError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('the way back from an export', () => {
  const sampleMap = buildFieldMap(sampleTopic.knowledge_topic_schema);
  const sampleResolver = new FieldResolver(sampleMap.fields);

  it('the sample records, exported by semantic name (values or labels), read back to their data', () => {
    for (const labels of [false, true]) {
      for (const original of sampleRecords) {
        const { record } = mapRecord(original, sampleMap, { labels });
        const data: Record<string, unknown> = {};
        for (const [name, value] of Object.entries(record.values)) {
          const f = sampleResolver.resolve(name);
          const text = typeof value === 'string' ? value : JSON.stringify(value);
          setFieldValue(data, f.key, labels || typeof value === 'string' ? convertValue(f, text) : value);
        }
        expect(data, `${original._id} labels=${labels}`).toEqual(original.data);
      }
    }
  });

  it('property: any option, given by value or by label, is stored as its value', () => {
    const priority = field('Priority');
    fc.assert(
      fc.property(fc.constantFrom(...priority.options!), fc.boolean(), (option, byLabel) => {
        expect(convertValue(priority, byLabel ? option.label : String(option.value))).toBe(option.value);
      }),
    );
  });
});
