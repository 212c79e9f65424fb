import type { FormComponent, FormSchema } from '../form.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import sampleTopic from '../../../../reference/samples/kt_system_requirements.json' with { type: 'json' };
import { validateRecordData, type ConditionWarning } from './index.js';

const sample = sampleTopic.knowledge_topic_schema as FormSchema;
const form = (...components: FormComponent[]): FormSchema => ({ components });
const required = (key: string, extra: Partial<FormComponent> = {}): FormComponent => ({
  type: 'textfield',
  key,
  validate: { required: true },
  ...extra,
});

function deeplyNested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
}

describe('prototype keys', () => {
  it('never reads a prototype through __proto__, constructor or toString', () => {
    const schema = form(
      required('__proto__'),
      required('constructor'),
      required('toString'),
      required('a.__proto__.b'),
    );
    expect(validateRecordData(schema, {}).map((item) => item.loc)).toEqual([
      ['body', 'data', '__proto__'],
      ['body', 'data', 'constructor'],
      ['body', 'data', 'toString'],
      ['body', 'data', 'a', '__proto__', 'b'],
    ]);
  });

  it('reads them as the plain own keys JSON makes of them, and pollutes nothing', () => {
    const data = JSON.parse(
      '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "type": "Other"}',
    );
    const schema = form(
      required('__proto__.polluted', { type: 'checkbox' }),
      required('x', {
        conditional: { hide: '=__proto__.polluted = true and constructor.prototype.polluted = true' },
      }),
    );
    expect(validateRecordData(schema, data)).toEqual([]);
    expect(validateRecordData(sample, data)).toEqual([]);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('size and depth', () => {
  it('survives data nested 100,000 levels deep, also where a condition reads it', () => {
    const warnings: ConditionWarning[] = [];
    const schema = form(required('deep', { type: 'my-custom', conditional: { hide: '=deep.a.a = 1' } }));
    const problems = validateRecordData(
      schema,
      { deep: deeplyNested(100_000) },
      { onWarning: (w) => warnings.push(w) },
    );
    expect(problems).toEqual([]);
    expect(warnings).toHaveLength(1);
  });

  it('survives a schema nested 10,000 groups deep', () => {
    let component: FormComponent = required('leaf');
    for (let level = 0; level < 10_000; level += 1)
      component = { type: 'group', path: 'g', components: [component] };
    expect(() => validateRecordData(form(component), {})).not.toThrow();
  });

  it('caps the answer for a huge list of wrong values', () => {
    const schema = form({ type: 'checklist', key: 'c', values: [{ value: 'a' }] });
    const problems = validateRecordData(schema, { c: Array.from({ length: 200_000 }, () => 'x') });
    expect(problems).toHaveLength(101);
    expect(problems.at(-1)).toMatchObject({ loc: ['body', 'data'], type: 'too_many_errors' });
  });

  // No timings here (they belong in benchmarks): the cap on FEEL work is what keeps this bounded.
  it('answers too_complex for a huge dynamic list with a condition per entry', () => {
    const schema = form({
      type: 'dynamiclist',
      path: 'rows',
      isRepeating: true,
      components: [required('note', { conditional: { hide: '=this.kind != "x"' } }), required('name')],
    });
    const rows = Array.from({ length: 300_000 }, () => ({ kind: 'y', name: 'n' }));
    const problems = validateRecordData(schema, { rows });
    expect(problems.map((item) => item.type)).toEqual(['too_complex']);
  });

  it('evaluates a condition once when it reads only top-level data', () => {
    const schema = form({
      type: 'dynamiclist',
      path: 'rows',
      isRepeating: true,
      components: [required('note', { conditional: { hide: '=mode != "strict"' } })],
    });
    const rows = Array.from({ length: 100_000 }, () => ({}));
    expect(validateRecordData(schema, { mode: 'lax', rows })).toEqual([]);
  });

  it('validates data with a huge number of top-level keys that no expression names', () => {
    const data: Record<string, unknown> = { type: 'Other' };
    for (let index = 0; index < 200_000; index += 1) data[`k${index}`] = index;
    const schema = structuredClone(sample);
    expect(validateRecordData(schema, data)).toEqual([]);
  });
});

describe('hostile schemas', () => {
  it('ignores components and rules of the wrong shape', () => {
    const schema = {
      components: [
        null,
        7,
        'text',
        [],
        { type: 5, key: 'a', validate: 'required' },
        { type: 'select', key: 'b', values: 'low,high' },
        { type: 'select', key: 'c', values: [null, 3, { label: 'no value' }] },
        { type: 'textfield', key: 7 },
        { type: 'group', components: { not: 'a list' } },
        { type: 'textfield', key: 'd', conditional: 'hide' },
        { type: 'number', key: 'e', increment: 'x', decimalDigits: -1, validate: { min: '=1', max: {} } },
      ],
    } as unknown as FormSchema;
    expect(validateRecordData(schema, { a: 1, b: 'x', c: 'y', d: 'z', e: 1.234 })).toEqual([]);
  });
});

describe('property: any data, any sample-like schema', () => {
  const prefixes: (string | number)[][] = [['body', 'data'], ['data'], []];
  const json = fc.jsonValue({ maxDepth: 6 });
  const withHostileKeys = fc.dictionary(
    fc.constantFrom('__proto__', 'constructor', 'type', 'checklist_kgd0ri', 'priority', 'risks', 'g', 'a.b'),
    json,
  );
  const schema: FormSchema = {
    components: [
      ...structuredClone(sample.components).map((component) => ({
        ...component,
        validate: { required: true, minLength: 2, pattern: '^[A-Z]' },
      })),
      { type: 'number', key: 'n', validate: { min: 0, max: 9 }, increment: '0.5', decimalDigits: 1 },
      { type: 'checkbox', key: 'ok', validate: { required: true } },
      {
        type: 'group',
        path: 'g',
        components: [{ type: 'datetime', key: 'a.b', validate: { required: true } }],
      },
      {
        type: 'dynamiclist',
        path: 'risks',
        isRepeating: true,
        components: [
          {
            type: 'radio',
            key: 'severity',
            values: [{ value: 'low' }],
            conditional: { hide: '=this.x = parent.y' },
          },
        ],
      },
    ],
  };

  it('returns without throwing, and every loc starts with the prefix', () => {
    fc.assert(
      fc.property(fc.oneof(json, withHostileKeys), fc.constantFrom(...prefixes), (data, prefix) => {
        const problems = validateRecordData(schema, data, { locPrefix: prefix });
        for (const problem of problems) {
          expect(problem.loc.slice(0, prefix.length)).toEqual(prefix);
          expect(problem.msg).toEqual(expect.any(String));
          expect(problem.type).toMatch(/^[a-z_]+$/);
        }
        expect(validateRecordData(schema, data, { locPrefix: prefix })).toEqual(problems);
      }),
      { numRuns: 500 },
    );
  });

  it('returns without throwing for any schema-shaped value either', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 4 })), json, (components, data) => {
        expect(() => validateRecordData({ components } as unknown as FormSchema, data)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
