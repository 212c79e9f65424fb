import type { FormComponent, FormSchema } from '../form.js';
import { describe, expect, it } from 'vitest';
import sampleTopic from '../../../../reference/samples/kt_system_requirements.json' with { type: 'json' };
import sampleRecords from '../../../../reference/samples/records_system_requirements.json' with { type: 'json' };
import { validateRecordData } from './index.js';

const sampleSchema = sampleTopic.knowledge_topic_schema as FormSchema;
const form = (...components: FormComponent[]): FormSchema => ({ components });
const types = (schema: FormSchema, data: unknown) =>
  validateRecordData(schema, data).map((item) => item.type);

describe('the reference sample', () => {
  it.each(sampleRecords.map((record) => [record.name, record.data] as const))(
    '%s is valid',
    (_name, data) => {
      expect(validateRecordData(sampleSchema, data)).toEqual([]);
    },
  );

  it('accepts an empty record: the sample has no required component', () => {
    expect(validateRecordData(sampleSchema, {})).toEqual([]);
  });

  it('names the field and its allowed values when a select value is unknown', () => {
    expect(validateRecordData(sampleSchema, { priority: 'urgent' })).toEqual([
      {
        loc: ['body', 'data', 'priority'],
        msg: '"urgent" is not one of the allowed values of "Priority": value, low, medium, high, n/a',
        type: 'enum',
      },
    ]);
  });

  it('reports every problem, in schema order', () => {
    const problems = validateRecordData(sampleSchema, {
      priority: 'urgent',
      name: 7,
      checklist_kgd0ri: ['Other', 'nope'],
    });
    expect(problems.map((item) => item.loc)).toEqual([
      ['body', 'data', 'name'],
      ['body', 'data', 'checklist_kgd0ri', 1],
      ['body', 'data', 'priority'],
    ]);
  });
});

describe('data itself', () => {
  it.each([
    [[], 'dict_type'],
    ['text', 'dict_type'],
    [null, 'dict_type'],
    [undefined, 'missing'],
  ])('%j is refused as %s', (data, type) => {
    expect(validateRecordData(sampleSchema, data)).toEqual([
      { loc: ['body', 'data'], msg: expect.any(String), type },
    ]);
  });

  it('uses the given location prefix', () => {
    const schema = form({ type: 'textfield', key: 'a', label: 'A', validate: { required: true } });
    expect(validateRecordData(schema, {}, { locPrefix: ['data'] })[0]?.loc).toEqual(['data', 'a']);
  });

  it('allows keys the schema does not know', () => {
    expect(validateRecordData(sampleSchema, { legacy_key: { any: ['thing'] }, priority: 'low' })).toEqual([]);
  });

  it('tolerates a schema without components', () => {
    expect(validateRecordData({} as FormSchema, { a: 1 })).toEqual([]);
    expect(validateRecordData({ components: 'x' } as unknown as FormSchema, { a: 1 })).toEqual([]);
  });
});

describe('required', () => {
  const schema = form({ type: 'textfield', key: 'name', label: 'Name', validate: { required: true } });

  it.each([[{}], [{ name: '' }], [{ name: null }]])('is missing in %j', (data) => {
    expect(validateRecordData(schema, data)).toEqual([
      { loc: ['body', 'data', 'name'], msg: 'Field "Name" (name) is required', type: 'missing' },
    ]);
  });

  it('is satisfied by a value, even a blank-looking one form-js keeps', () => {
    expect(validateRecordData(schema, { name: 'x' })).toEqual([]);
    expect(validateRecordData(schema, { name: ' ' })).toEqual([]);
  });

  it('counts an empty list as missing', () => {
    const list = form({
      type: 'checklist',
      key: 'c',
      values: [{ label: 'A', value: 'a' }],
      validate: { required: true },
    });
    expect(types(list, { c: [] })).toEqual(['missing']);
    expect(types(list, { c: ['a'] })).toEqual([]);
  });

  it('asks a required checkbox to be checked', () => {
    const box = form({ type: 'checkbox', key: 'ok', label: 'I agree', validate: { required: true } });
    expect(validateRecordData(box, { ok: false })).toEqual([
      {
        loc: ['body', 'data', 'ok'],
        msg: 'Field "I agree" (ok) is required: it must be checked',
        type: 'missing',
      },
    ]);
    expect(types(box, { ok: true })).toEqual([]);
  });

  it('names a field without label by its key, and a datetime by its date label', () => {
    expect(
      validateRecordData(form({ type: 'textfield', key: 'k', validate: { required: true } }), {})[0]?.msg,
    ).toBe('Field "k" is required');
    const date = form({ type: 'datetime', key: 'd', dateLabel: 'Executed on', validate: { required: true } });
    expect(validateRecordData(date, {})[0]?.msg).toBe('Field "Executed on" (d) is required');
  });

  it('skips disabled components, as form-js does', () => {
    expect(
      types(form({ type: 'textfield', key: 'a', disabled: true, validate: { required: true } }), {}),
    ).toEqual([]);
  });
});

describe('types by component', () => {
  it.each([
    ['textfield', 1, 'hello', 'string_type'],
    ['textarea', ['x'], 'long\ntext', 'string_type'],
    ['datetime', 20260101, '2026-01-01', 'string_type'],
    ['number', '12', 12.5, 'float_type'],
    ['checkbox', 'yes', false, 'bool_type'],
    ['checklist', 'a', ['a'], 'list_type'],
    ['taglist', { a: 1 }, ['a'], 'list_type'],
  ])('%s refuses %j and accepts %j', (type, bad, good, problem) => {
    const schema = form({ type, key: 'v', label: 'V', values: [{ label: 'A', value: 'a' }] });
    expect(types(schema, { v: bad })).toEqual([problem]);
    expect(types(schema, { v: good })).toEqual([]);
  });

  it('accepts null and "" as unset for an optional field of any type (form-js clears fields to null)', () => {
    for (const type of ['textfield', 'number', 'checkbox', 'select', 'checklist']) {
      expect(types(form({ type, key: 'v', values: [{ value: 'a' }] }), { v: null })).toEqual([]);
      expect(types(form({ type, key: 'v', values: [{ value: 'a' }] }), { v: '' })).toEqual([]);
    }
  });

  it('reads a number serialized as a string when the field says so', () => {
    const schema = form({ type: 'number', key: 'n', serializeToString: true, validate: { max: 10 } });
    expect(types(schema, { n: '9.5' })).toEqual([]);
    expect(types(schema, { n: 9.5 })).toEqual([]);
    expect(types(schema, { n: '12' })).toEqual(['less_than_equal']);
    expect(types(schema, { n: 'twelve' })).toEqual(['float_parsing']);
  });

  it('gives display-only components no rules, even with a key', () => {
    for (const type of ['text', 'html', 'image', 'button', 'separator', 'spacer', 'iframe']) {
      expect(types(form({ type, key: 'v', validate: { required: true } }), { v: 42 })).toEqual([]);
    }
  });

  it('applies the generic rules of validate to unknown component types, without a type check', () => {
    const schema = form({ type: 'my-custom', key: 'v', validate: { required: true, min: 3, maxLength: 2 } });
    expect(types(schema, {})).toEqual(['missing']);
    expect(types(schema, { v: 1 })).toEqual(['greater_than_equal']);
    expect(types(schema, { v: 'abc' })).toEqual(['string_too_long']);
    expect(types(schema, { v: { any: 'object' } })).toEqual([]);
  });
});

describe('allowed values', () => {
  const values = [
    { label: 'Low', value: 'low' },
    { label: 'High', value: 'high' },
  ];

  it.each(['select', 'radio'])('%s takes one allowed value', (type) => {
    const schema = form({ type, key: 'p', label: 'P', values });
    expect(types(schema, { p: 'high' })).toEqual([]);
    expect(types(schema, { p: 'High' })).toEqual(['enum']);
    expect(types(schema, { p: ['high'] })).toEqual(['enum']);
  });

  it('checks every entry of a checklist, at its index', () => {
    const schema = form({ type: 'checklist', key: 'c', label: 'C', values });
    expect(validateRecordData(schema, { c: ['low', 'mid', 'high', 'top'] }).map((item) => item.loc)).toEqual([
      ['body', 'data', 'c', 1],
      ['body', 'data', 'c', 3],
    ]);
  });

  it('skips the check when the options are dynamic', () => {
    expect(types(form({ type: 'select', key: 'p', valuesKey: 'options' }), { p: 'anything' })).toEqual([]);
    expect(
      types(form({ type: 'select', key: 'p', valuesExpression: '=options', values }), { p: 'anything' }),
    ).toEqual([]);
    expect(types(form({ type: 'taglist', key: 'p', valuesKey: 'options' }), { p: ['anything'] })).toEqual([]);
    expect(types(form({ type: 'taglist', key: 'p', valuesKey: 'options' }), { p: 'anything' })).toEqual([
      'list_type',
    ]);
  });

  it('compares strictly: the number 1 is not the option "1"', () => {
    expect(types(form({ type: 'select', key: 'p', values: [{ value: '1' }] }), { p: 1 })).toEqual(['enum']);
  });
});

describe('validate rules', () => {
  const field = (validate: FormComponent['validate'], extra: Partial<FormComponent> = {}) =>
    form({ type: 'textfield', key: 'v', label: 'V', validate, ...extra });
  const number = (extra: Partial<FormComponent>) => form({ type: 'number', key: 'n', label: 'N', ...extra });

  it('min and max bound numbers', () => {
    const schema = number({ validate: { min: 0, max: 1440 } });
    expect(validateRecordData(schema, { n: -1 })).toEqual([
      {
        loc: ['body', 'data', 'n'],
        msg: 'Field "N" (n) must be at least 0, not -1',
        type: 'greater_than_equal',
      },
    ]);
    expect(types(schema, { n: 1441 })).toEqual(['less_than_equal']);
    expect(types(schema, { n: 0 })).toEqual([]);
    expect(types(schema, { n: 1440 })).toEqual([]);
  });

  it('minLength and maxLength count the trimmed text, as form-js does', () => {
    const schema = field({ minLength: 3, maxLength: 5 });
    expect(types(schema, { v: 'ab' })).toEqual(['string_too_short']);
    expect(types(schema, { v: ' ab  ' })).toEqual(['string_too_short']);
    expect(types(schema, { v: 'abcdef' })).toEqual(['string_too_long']);
    expect(types(schema, { v: 'abc' })).toEqual([]);
    expect(types(schema, { v: '' })).toEqual([]);
  });

  it('pattern is a JavaScript regular expression', () => {
    const schema = field({ pattern: '^TC-[0-9]{3}$' });
    expect(validateRecordData(schema, { v: 'TC-1' })).toEqual([
      {
        loc: ['body', 'data', 'v'],
        msg: 'Field "V" (v) must match the pattern ^TC-[0-9]{3}$, not "TC-1"',
        type: 'string_pattern_mismatch',
      },
    ]);
    expect(types(schema, { v: 'TC-001' })).toEqual([]);
  });

  it('skips an invalid pattern instead of failing', () => {
    expect(types(field({ pattern: '([a-z' }), { v: 'anything' })).toEqual([]);
  });

  it('checks e-mail addresses simply', () => {
    const schema = field({ validationType: 'email' });
    for (const good of ['name@example.com', 'a.b+c@sub.example.org', 'root@localhost'])
      expect(types(schema, { v: good })).toEqual([]);
    for (const bad of ['name', 'name@', '@example.com', 'a b@example.com', 'a@b@c', 'a@example..com']) {
      expect(types(schema, { v: bad })).toEqual(['email_format']);
    }
  });

  it('checks international phone numbers simply', () => {
    const schema = field({ validationType: 'phone' });
    for (const good of ['+4930664040900', '004930664040900']) expect(types(schema, { v: good })).toEqual([]);
    for (const bad of ['030664040900', '+49 30 664040900', '+0123456789', 'call me']) {
      expect(types(schema, { v: bad })).toEqual(['phone_format']);
    }
  });

  it('decimalDigits limits the decimal places of a number field', () => {
    expect(types(number({ decimalDigits: 2 }), { n: 1.25 })).toEqual([]);
    expect(types(number({ decimalDigits: 2 }), { n: 1.255 })).toEqual(['decimal_max_places']);
    expect(validateRecordData(number({ decimalDigits: 0 }), { n: 1.5 })[0]?.msg).toBe(
      'Field "N" (n) must be a whole number, not 1.5',
    );
  });

  it('increment asks for an exact multiple and names the nearest ones', () => {
    expect(types(number({ increment: '0.1' }), { n: 0.3 })).toEqual([]);
    expect(validateRecordData(number({ increment: '0.5' }), { n: -1.3 })[0]?.msg).toBe(
      'Field "N" (n) must be a multiple of 0.5: the nearest valid values are -1.5 and -1, not -1.3',
    );
  });

  it('ignores bounds that are not numbers', () => {
    expect(
      types(field({ minLength: 'x' as unknown as number, pattern: 3 as unknown as string }), { v: 'a' }),
    ).toEqual([]);
  });
});
