import { describe, expect, it } from 'vitest';
import { placeServerErrors } from '../src/forms/field-errors';

const item = (loc: (string | number)[], msg: string) => ({ loc, msg, type: 'x' });

describe('placing server validation errors on form-js fields', () => {
  const instances = [
    { id: 'Field_title', valuePath: ['title'] },
    { id: 'Field_checks', valuePath: ['checks'] },
    { id: 'Field_group_inner', valuePath: ['group', 'inner'] },
    { id: 'Field_list_item', valuePath: ['list', 1, 'item'], indexes: { Field_list: 1 } },
  ];

  it('puts each data problem on the field with the longest matching value path', () => {
    const placed = placeServerErrors(
      [
        item(['body', 'data', 'title'], 'Field "Title" (title) is required'),
        item(['body', 'data', 'checks', 2], '"x" is not one of the allowed values'),
        item(['body', 'data', 'group', 'inner'], 'too long'),
        item(['body', 'data', 'list', 1, 'item'], 'must match the pattern'),
        item(['body', 'data', 'title'], 'second problem'),
      ],
      instances,
    );
    expect(placed.errors).toEqual({
      Field_title: ['Field "Title" (title) is required', 'second problem'],
      Field_checks: ['"x" is not one of the allowed values'],
      Field_group_inner: ['too long'],
      Field_list_item: { '1': ['must match the pattern'] },
    });
    expect(placed.unplaced).toEqual([]);
  });

  it('leaves problems no rendered field owns for a summary', () => {
    const hidden = item(['body', 'data', 'hidden_key'], 'unknown');
    const name = item(['body', 'name'], 'String must not be empty');
    const whole = item(['body', 'data'], 'must be an object');
    const placed = placeServerErrors([hidden, name, whole], instances);
    expect(placed.errors).toEqual({});
    expect(placed.unplaced).toEqual([hidden, name, whole]);
  });
});
