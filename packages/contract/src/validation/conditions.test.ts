import type { FormComponent, FormSchema } from '../form.js';
import { describe, expect, it } from 'vitest';
import sampleTopic from '../../../../reference/samples/kt_system_requirements.json' with { type: 'json' };
import { validateRecordData, type ConditionWarning } from './index.js';

const sample = sampleTopic.knowledge_topic_schema as FormSchema;

/** The sample with `keys` made required: they are visible only under their `conditional.hide`. */
function requiring(...keys: string[]): FormSchema {
  const copy = structuredClone(sample);
  for (const component of copy.components) {
    if (component.key && keys.includes(component.key)) component.validate = { required: true };
  }
  return copy;
}
const missing = (schema: FormSchema, data: unknown) =>
  validateRecordData(schema, data)
    .filter((item) => item.type === 'missing')
    .map((item) => item.loc.at(-1));

describe("the sample's FEEL conditions", () => {
  it('=type != "Other": the "specify Other Type" field is required only when type is Other', () => {
    const schema = requiring('textfield_ollccr');
    expect(missing(schema, { type: 'Other' })).toEqual(['textfield_ollccr']);
    expect(missing(schema, { type: 'Other', textfield_ollccr: 'Sterility' })).toEqual([]);
    expect(missing(schema, { type: 'functional' })).toEqual([]);
    expect(missing(schema, {})).toEqual([]);
  });

  it('=not("Other" in checklist_kgd0ri): required only when Other is checked', () => {
    const schema = requiring('textfield_hbgy8i');
    expect(missing(schema, { checklist_kgd0ri: ['Equipment', 'Other'] })).toEqual(['textfield_hbgy8i']);
    expect(missing(schema, { checklist_kgd0ri: ['Equipment'] })).toEqual([]);
    expect(missing(schema, { checklist_kgd0ri: [] })).toEqual([]);
  });

  it('a multi-line expression (=\\nselect_1jzpmh\\n != "Other") and a chain of conditions', () => {
    const schema = requiring('select_1jzpmh', 'textfield_uu051a');
    // Infrastructure not concerned: the select is hidden, so is the field depending on it.
    expect(missing(schema, { checklist_kgd0ri: ['Equipment'] })).toEqual([]);
    expect(missing(schema, { checklist_kgd0ri: ['Infrastructure'] })).toEqual(['select_1jzpmh']);
    expect(missing(schema, { checklist_kgd0ri: ['Infrastructure'], select_1jzpmh: 'Other' })).toEqual([
      'textfield_uu051a',
    ]);
  });

  it('does not check the value rules of hidden components', () => {
    const schema = requiring('select_1jzpmh');
    expect(validateRecordData(schema, { checklist_kgd0ri: [], select_1jzpmh: 'not an option' })).toEqual([]);
    expect(
      validateRecordData(schema, {
        checklist_kgd0ri: ['Infrastructure'],
        select_1jzpmh: 'not an option',
      }).map((i) => i.type),
    ).toEqual(['enum']);
  });
});

describe('conditions', () => {
  const form = (...components: FormComponent[]): FormSchema => ({ components });
  const required = (key: string, hide: unknown): FormComponent => ({
    type: 'textfield',
    key,
    validate: { required: true },
    conditional: { hide } as FormComponent['conditional'],
  });

  it('a FEEL expression that cannot be parsed leaves the component visible, and says so', () => {
    const warnings: ConditionWarning[] = [];
    const schema = form(required('a', '=foo(('));
    expect(
      validateRecordData(schema, {}, { onWarning: (warning) => warnings.push(warning) }).map((i) => i.type),
    ).toEqual(['missing']);
    expect(warnings).toEqual([
      {
        loc: ['body', 'data'],
        component: 'a',
        expression: '=foo((',
        message: expect.stringContaining('treated as visible'),
      },
    ]);
  });

  it('an empty expression is a failure too, not a crash', () => {
    expect(validateRecordData(form(required('a', '=')), {}).map((i) => i.type)).toEqual(['missing']);
  });

  it('ignores a hide that is not an expression (form-js does)', () => {
    for (const hide of ['true', true, 1, null, { x: 1 }]) {
      expect(validateRecordData(form(required('a', hide)), {}).map((i) => i.type)).toEqual(['missing']);
    }
  });

  it('hides only on exactly true', () => {
    expect(validateRecordData(form(required('a', '="yes"')), {}).map((i) => i.type)).toEqual(['missing']);
    expect(validateRecordData(form(required('a', '=flag')), { flag: true })).toEqual([]);
    expect(validateRecordData(form(required('a', '=flag')), { flag: 'true' }).map((i) => i.type)).toEqual([
      'missing',
    ]);
  });

  it('a hidden group hides everything inside it', () => {
    const schema = form({
      type: 'group',
      label: 'G',
      conditional: { hide: '=skip' },
      components: [{ type: 'textfield', key: 'inner', validate: { required: true } }],
    });
    expect(validateRecordData(schema, { skip: true })).toEqual([]);
    expect(validateRecordData(schema, { skip: false }).map((i) => i.loc)).toEqual([
      ['body', 'data', 'inner'],
    ]);
  });

  it('reads nested values by path, and names with spaces', () => {
    const schema = form(required('a', '=details.kind = "none"'), required('b', '=my value > 3'));
    expect(validateRecordData(schema, { details: { kind: 'none' }, 'my value': 4 })).toEqual([]);
    expect(missing(schema, { details: { kind: 'some' }, 'my value': 2 })).toEqual(['a', 'b']);
  });

  it('stops evaluating past its budget and refuses the record as too complex', () => {
    const schema = form(required('a', '=count(big) > 0'), required('b', '=count(big) > 1'));
    const data = { big: Array.from({ length: 50 }, (_, i) => i) };
    expect(validateRecordData(schema, data, { conditionBudget: 1200 })).toEqual([]);
    expect(validateRecordData(schema, data, { conditionBudget: 800 }).map((i) => i.type)).toEqual([
      'too_complex',
    ]);
  });

  it('evaluates no condition of an optional field that holds nothing: it passes either way', () => {
    const optional = (key: string, hide: string): FormComponent => ({
      type: 'select',
      key,
      values: [{ label: 'Yes', value: 'yes' }],
      conditional: { hide },
    });
    // An expression that cannot be parsed says when it is evaluated.
    const schema = form(optional('a', '=foo(('), optional('b', '=foo(('));
    const warned = (data: Record<string, unknown>) => {
      const warnings: ConditionWarning[] = [];
      const items = validateRecordData(schema, data, { onWarning: (warning) => warnings.push(warning) });
      return {
        items: items.map((i) => `${String(i.loc.at(-1))} ${i.type}`),
        warned: warnings.map((w) => w.component),
      };
    };
    expect(warned({})).toEqual({ items: [], warned: [] });
    expect(warned({ a: null, b: '' })).toEqual({ items: [], warned: [] });
    // A value is checked, visible or not as its condition says.
    expect(warned({ a: 'no' })).toEqual({ items: ['a enum'], warned: ['a'] });
    // Nothing to evaluate costs no budget: a record of many empty conditional fields is not too complex.
    const many = form(...Array.from({ length: 50 }, (_, i) => optional(`f${i}`, `=count(big) > ${i}`)));
    const data = { big: Array.from({ length: 50 }, (_, i) => i) };
    expect(validateRecordData(many, data, { conditionBudget: 1200 })).toEqual([]);
    expect(
      validateRecordData(many, { ...data, f0: 'yes', f1: 'yes', f2: 'yes' }, { conditionBudget: 1200 }).map(
        (i) => i.type,
      ),
    ).toEqual(['too_complex']);
  });
});
