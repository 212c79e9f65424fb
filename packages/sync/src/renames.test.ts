import { describe, expect, it } from 'vitest';
import type { ExportedField } from '../../exchange/src/export/model.js';
import { valueRenamer } from './renames.js';

const f = (key: string, name: string, itemFields?: ExportedField[]): ExportedField => ({
  key,
  name,
  source: 'label',
  ...(itemFields ? { itemFields } : {}),
});

describe('valueRenamer', () => {
  it('is undefined when no name changed', () => {
    expect(
      valueRenamer([f('a', 'A'), f('l', 'L', [f('x', 'X')])], [f('a', 'A'), f('l', 'L', [f('x', 'X')])]),
    ).toBe(undefined);
  });

  it('moves values to the new names, also swapped names and names inside dynamiclist items', () => {
    const rename = valueRenamer(
      [f('a', 'first'), f('b', 'second'), f('l', 'list', [f('x', 'X'), f('y', 'Y')]), f('gone', 'gone')],
      [f('a', 'second'), f('b', 'first'), f('l', 'items', [f('x', 'ex'), f('y', 'Y')])],
    )!;
    expect(
      rename({
        first: 1,
        second: 2,
        list: [{ X: 1, Y: 2 }, 'not an item'],
        gone: 3,
        unknown: 4,
      }),
    ).toEqual({ second: 1, first: 2, items: [{ ex: 1, Y: 2 }, 'not an item'], gone: 3, unknown: 4 });
  });

  it('a data-only key that the schema now names is a rename; a renamed field wins over a gone field of its new name', () => {
    const rename = valueRenamer(
      [f('prio', 'prio'), { key: 'old', name: 'Priority', source: 'label' }],
      [f('prio', 'Priority')],
    )!;
    expect(rename({ prio: 'h', Priority: 'stale' })).toEqual({ Priority: 'h' });
    expect(rename({ Priority: 'stale' })).toEqual({ Priority: 'stale' });
  });
});
