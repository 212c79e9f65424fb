import { describe, expect, it } from 'vitest';
import type { FormSchema } from '../form.js';
import { loadConditionsFor, recordDataValidator } from './checks.js';

const plain = {
  components: [{ type: 'textfield', key: 'title', validate: { required: true } }],
} as FormSchema;
const conditional = {
  components: [
    { type: 'checkbox', key: 'done' },
    { type: 'textfield', key: 'note', validate: { required: true }, conditional: { hide: '=done' } },
  ],
} as FormSchema;

/** This file imports the checks entry alone: FEEL loads only when loadConditionsFor finds a condition. */
describe('validation without FEEL loaded up front', () => {
  it('validates a form without conditions, FEEL never loaded', async () => {
    await loadConditionsFor(plain);
    expect(recordDataValidator(plain)({}).map((item) => item.loc)).toEqual([['body', 'data', 'title']]);
    expect(() => recordDataValidator(conditional)({ done: true })).toThrow(/FEEL is not loaded/);
  });

  it('loads FEEL for a form with a condition, nested at any depth', async () => {
    const nested = { components: [{ type: 'group', components: conditional.components }] } as FormSchema;
    await loadConditionsFor(nested);
    expect(recordDataValidator(nested)({ done: true })).toEqual([]);
    expect(recordDataValidator(nested)({ done: false }).map((item) => item.loc)).toEqual([
      ['body', 'data', 'note'],
    ]);
  });
});
