import type { FormComponent, FormSchema } from '../form.js';
import { describe, expect, it } from 'vitest';
import { validateRecordData } from './index.js';

const form = (...components: FormComponent[]): FormSchema => ({ components });
const locs = (schema: FormSchema, data: unknown) =>
  validateRecordData(schema, data).map((item) => [item.type, item.loc]);
const severity: FormComponent = {
  type: 'select',
  key: 'severity',
  label: 'Severity',
  values: [{ value: 'low' }, { value: 'high' }],
  validate: { required: true },
};

describe('groups', () => {
  it('without a path, children live at the same level', () => {
    const schema = form({ type: 'group', label: 'G', components: [severity] });
    expect(locs(schema, {})).toEqual([['missing', ['body', 'data', 'severity']]]);
    expect(locs(schema, { severity: 'low' })).toEqual([]);
  });

  it('with a path, children live under it (dotted paths too)', () => {
    const schema = form({ type: 'group', label: 'G', path: 'risk.assessment', components: [severity] });
    expect(locs(schema, { risk: { assessment: { severity: 'low' } } })).toEqual([]);
    expect(locs(schema, { risk: { assessment: { severity: 'mid' } } })).toEqual([
      ['enum', ['body', 'data', 'risk', 'assessment', 'severity']],
    ]);
    expect(locs(schema, {})).toEqual([['missing', ['body', 'data', 'risk', 'assessment', 'severity']]]);
    expect(locs(schema, { risk: 'high' })).toEqual([['dict_type', ['body', 'data', 'risk']]]);
    expect(locs(schema, { risk: { assessment: [] } })).toEqual([
      ['dict_type', ['body', 'data', 'risk', 'assessment']],
    ]);
  });

  it('a key with dots is a path', () => {
    const schema = form({ type: 'number', key: 'dims.width', label: 'Width', validate: { min: 1 } });
    expect(locs(schema, { dims: { width: 0 } })).toEqual([
      ['greater_than_equal', ['body', 'data', 'dims', 'width']],
    ]);
    expect(locs(schema, { 'dims.width': 0 })).toEqual([]);
    expect(locs(schema, { dims: 3 })).toEqual([['dict_type', ['body', 'data', 'dims']]]);
  });

  it('reports a non-object step once, however many fields sit under it', () => {
    const schema = form({ type: 'textfield', key: 'a.b' }, { type: 'textfield', key: 'a.c' });
    expect(locs(schema, { a: 'x' })).toEqual([['dict_type', ['body', 'data', 'a']]]);
  });
});

describe('dynamic lists', () => {
  const risks = (...children: FormComponent[]): FormComponent => ({
    type: 'dynamiclist',
    label: 'Risks',
    path: 'risks',
    isRepeating: true,
    components: children,
  });

  it('checks every entry, with its index in loc', () => {
    const schema = form(risks(severity));
    expect(locs(schema, { risks: [{ severity: 'low' }, {}, { severity: 'urgent' }] })).toEqual([
      ['missing', ['body', 'data', 'risks', 1, 'severity']],
      ['enum', ['body', 'data', 'risks', 2, 'severity']],
    ]);
    expect(locs(schema, { risks: [] })).toEqual([]);
    expect(locs(schema, {})).toEqual([]);
  });

  it('wants a list of objects', () => {
    const schema = form(risks(severity));
    expect(locs(schema, { risks: { severity: 'low' } })).toEqual([['list_type', ['body', 'data', 'risks']]]);
    expect(locs(schema, { risks: ['low', { severity: 'low' }, null] })).toEqual([
      ['dict_type', ['body', 'data', 'risks', 0]],
      ['dict_type', ['body', 'data', 'risks', 2]],
    ]);
  });

  it('nests lists in lists and groups in lists', () => {
    const schema = form(
      risks({
        type: 'dynamiclist',
        path: 'controls',
        isRepeating: true,
        components: [
          {
            type: 'group',
            path: 'owner',
            components: [{ type: 'textfield', key: 'name', validate: { required: true } }],
          },
        ],
      }),
    );
    const data = {
      risks: [
        { controls: [{ owner: { name: 'Ann' } }] },
        { controls: [{ owner: { name: 'Bob' } }, { owner: {} }] },
      ],
    };
    expect(locs(schema, data)).toEqual([
      ['missing', ['body', 'data', 'risks', 1, 'controls', 1, 'owner', 'name']],
    ]);
  });

  it('evaluates conditions per entry with this, parent and i, as form-js does', () => {
    const schema = form(
      risks(
        {
          type: 'textfield',
          key: 'note',
          validate: { required: true },
          conditional: { hide: '=this.level != "high"' },
        },
        {
          type: 'textfield',
          key: 'second',
          validate: { required: true },
          conditional: { hide: '=i[1] != 2' },
        },
        {
          type: 'textfield',
          key: 'audit',
          validate: { required: true },
          conditional: { hide: '=not(parent.audited)' },
        },
        {
          type: 'textfield',
          key: 'top',
          validate: { required: true },
          conditional: { hide: '=mode != "strict"' },
        },
      ),
    );
    const data = {
      mode: 'strict',
      audited: false,
      risks: [
        { level: 'high', top: 't' },
        { level: 'low', top: 't' },
      ],
    };
    expect(locs(schema, data)).toEqual([
      ['missing', ['body', 'data', 'risks', 0, 'note']],
      ['missing', ['body', 'data', 'risks', 1, 'second']],
    ]);
    expect(locs(schema, { ...data, audited: true, mode: 'lax' })).toEqual([
      ['missing', ['body', 'data', 'risks', 0, 'note']],
      ['missing', ['body', 'data', 'risks', 0, 'audit']],
      ['missing', ['body', 'data', 'risks', 1, 'second']],
      ['missing', ['body', 'data', 'risks', 1, 'audit']],
    ]);
  });

  it("does not see an entry's own values as top-level names (form-js reads them through this)", () => {
    const schema = form(
      risks({
        type: 'textfield',
        key: 'note',
        validate: { required: true },
        conditional: { hide: '=level = "low"' },
      }),
    );
    expect(locs(schema, { risks: [{ level: 'low' }] })).toEqual([
      ['missing', ['body', 'data', 'risks', 0, 'note']],
    ]);
    expect(locs(schema, { level: 'low', risks: [{ level: 'high' }] })).toEqual([]);
  });

  it('a hidden list is not checked at all', () => {
    const schema = form({ ...risks(severity), conditional: { hide: '=true' } });
    expect(locs(schema, { risks: 'not even a list' })).toEqual([]);
  });
});
