import { describe, expect, it } from 'vitest';
import type { ExportedField } from '../../exchange/src/export/model.js';
import { diffSchema } from './schema-diff.js';

const f = (key: string, name: string, extra: Partial<ExportedField> = {}): ExportedField => ({
  key,
  name,
  source: 'label',
  type: 'textfield',
  ...extra,
});

describe('diffSchema', () => {
  it('a schema with another hash but the same fields changed in layout or rules only', () => {
    const fields = [f('a', 'A')];
    const changes = diffSchema({ fields, schemaHash: '1' }, { fields, schemaHash: '2' });
    expect(changes).toEqual({
      changed: true,
      previousHash: '1',
      hash: '2',
      fieldsAdded: [],
      fieldsRemoved: [],
      fieldsRenamed: [],
      fieldsModified: [],
    });
    expect(diffSchema({ fields, schemaHash: '1' }, { fields, schemaHash: '1' }).changed).toBe(false);
  });

  it('compares by form key: type, label and options; fields of list items with "[]." paths', () => {
    const before = [
      f('a', 'A', { label: 'A' }),
      f('s', 'S', { type: 'select', options: [{ value: 1, label: 'one' }] }),
      f('l', 'List', { type: 'dynamiclist', itemFields: [f('x', 'X'), f('y', 'Y')] }),
      f('old', 'Old', { type: 'dynamiclist', itemFields: [f('z', 'Z')] }),
    ];
    const after = [
      f('a', 'A', { label: 'A!' }),
      f('s', 'S', { type: 'radio', options: [{ value: 1, label: 'uno' }] }),
      f('l', 'List', { type: 'dynamiclist', itemFields: [f('x', 'X', { type: 'number' }), f('w', 'W')] }),
      { key: 'data', name: 'data', source: 'data' as const },
    ];
    const changes = diffSchema({ fields: before, schemaHash: 'h' }, { fields: after, schemaHash: 'h' });
    expect(changes.changed).toBe(true);
    expect(changes.fieldsAdded).toEqual([
      { key: 'l[].w', name: 'List[].W', type: 'textfield' },
      { key: 'data', name: 'data', type: null },
    ]);
    expect(changes.fieldsRemoved).toEqual([
      { key: 'l[].y', name: 'List[].Y', type: 'textfield' },
      { key: 'old', name: 'Old', type: 'dynamiclist' },
      { key: 'old[].z', name: 'Old[].Z', type: 'textfield' },
    ]);
    expect(changes.fieldsModified).toEqual([
      { key: 'a', name: 'A', type: null, label: { before: 'A', after: 'A!' }, options: null },
      {
        key: 's',
        name: 'S',
        type: { before: 'select', after: 'radio' },
        label: null,
        options: { before: [{ value: 1, label: 'one' }], after: [{ value: 1, label: 'uno' }] },
      },
      {
        key: 'l[].x',
        name: 'List[].X',
        type: { before: 'textfield', after: 'number' },
        label: null,
        options: null,
      },
    ]);
  });

  it('a missing side: all fields added or removed', () => {
    const fields = [f('a', 'A')];
    expect(diffSchema(undefined, { fields, schemaHash: 'h' }).fieldsAdded).toHaveLength(1);
    expect(diffSchema({ fields, schemaHash: 'h' }, undefined).fieldsRemoved).toHaveLength(1);
  });
});
