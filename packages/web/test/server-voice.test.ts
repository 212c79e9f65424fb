import { describe, expect, it } from 'vitest';
import type { FormSchema } from '@rxs/contract';
import { validateRecordData } from '../../contract/src/validation/validate-record-data';
import { inServerWords } from '../src/forms/server-voice';

/**
 * One voice: each message form-js gives in the browser (its own words, as in form-js-viewer's
 * Validator), reworded, equals what the service's validation says for the same field and value.
 */
describe('the browser speaks with the service’s voice', () => {
  const cases: { component: Record<string, unknown>; value: unknown; formJs: string }[] = [
    {
      component: { type: 'textfield', validate: { required: true } },
      value: '',
      formJs: 'Field is required.',
    },
    {
      component: { type: 'checkbox', validate: { required: true } },
      value: false,
      formJs: 'Field is required.',
    },
    {
      component: { type: 'number', validate: { min: 1 } },
      value: 0,
      formJs: 'Field must have minimum value of 1.',
    },
    {
      component: { type: 'number', validate: { max: 5 } },
      value: 9,
      formJs: 'Field must have maximum value of 5.',
    },
    {
      component: { type: 'textfield', validate: { minLength: 4 } },
      value: ' ab ',
      formJs: 'Field must have minimum length of 4.',
    },
    {
      component: { type: 'textarea', validate: { maxLength: 3 } },
      value: 'abcdef',
      formJs: 'Field must have maximum length of 3.',
    },
    {
      component: { type: 'textfield', validate: { pattern: '^TC-[0-9]{3}$' } },
      value: 'TC-1',
      formJs: 'Field must match pattern ^TC-[0-9]{3}$.',
    },
    {
      component: { type: 'textfield', validate: { validationType: 'email' } },
      value: 'nobody',
      formJs: 'Field must be a valid email.',
    },
  ];
  for (const withLabel of [true, false]) {
    for (const { component, value, formJs } of cases) {
      it(`${formJs} (${component.type}${withLabel ? '' : ', no label'})`, () => {
        const field = { ...component, key: 'risk_score', ...(withLabel && { label: 'Risk score' }) };
        const schema = { components: [field] } as FormSchema;
        const data = value === '' ? {} : { risk_score: value };
        const server = validateRecordData(schema, data).map((item) => item.msg);
        expect(server).toHaveLength(1);
        expect(inServerWords(field as never, value, formJs)).toBe(server[0]);
      });
    }
  }

  it('leaves a message it does not know as it is', () => {
    expect(inServerWords({ key: 'k' }, 1, 'Value is not a number.')).toBe('Value is not a number.');
  });
});
