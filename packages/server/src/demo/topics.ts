import type { FormSchema } from '@rxs/contract';

/**
 * The demo's second topic: verification tests of the system requirements. Its components show the
 * mapping rules: service keys that differ from labels, a component without label, a nested group.
 */
export const verificationTestsSchema: FormSchema = {
  components: [
    { type: 'text', id: 'Field_intro', text: 'Verification of system requirements (ISO 13485:2016 7.3.6)' },
    {
      type: 'textfield',
      id: 'Field_t1',
      key: 'textfield_k2j4h1',
      label: 'Test ID',
      properties: { 'service-key': 'test_id' },
      validate: { required: true, pattern: '^TC-[0-9]{3}$' },
    },
    {
      type: 'textfield',
      id: 'Field_t2',
      key: 'textfield_9vd1sa',
      label: 'Title',
      validate: { required: true },
    },
    { type: 'textarea', id: 'Field_t3', key: 'textarea_0p2kq8', label: 'Procedure' },
    { type: 'textarea', id: 'Field_t4', key: 'expected', label: 'Expected result' },
    {
      type: 'radio',
      id: 'Field_t5',
      key: 'radio_7yq2mw',
      label: 'Result',
      properties: { 'service-key': 'verdict' },
      values: [
        { label: 'Not run', value: 'not_run' },
        { label: 'Passed', value: 'passed' },
        { label: 'Failed', value: 'failed' },
      ],
      validate: { required: true },
    },
    {
      type: 'group',
      id: 'Field_t6',
      label: 'Execution',
      components: [
        { type: 'datetime', id: 'Field_t7', key: 'executed_on', subtype: 'date', dateLabel: 'Executed on' },
        {
          type: 'number',
          id: 'Field_t8',
          key: 'number_3lm0ze',
          label: 'Duration (min)',
          validate: { min: 0, max: 1440 },
        },
      ],
    },
  ],
  id: 'form_tests',
  type: 'default',
  schemaVersion: 19,
};

export const verificationTests = [
  {
    name: 'TC-001',
    data: {
      textfield_k2j4h1: 'TC-001',
      textfield_9vd1sa: 'Sterilization temperature hold',
      textarea_0p2kq8: 'Run a full cycle with 12 calibrated probes.',
      expected: '121 °C ± 2 °C held for 15 min at every probe',
      radio_7yq2mw: 'passed',
      executed_on: '2026-09-02',
      number_3lm0ze: 55,
    },
  },
  {
    name: 'TC-002',
    data: {
      textfield_k2j4h1: 'TC-002',
      textfield_9vd1sa: 'Cycle time',
      textarea_0p2kq8: 'Time ten consecutive standard cycles.',
      expected: 'Every cycle ≤ 60 min',
      radio_7yq2mw: 'passed',
      executed_on: '2026-09-03',
      number_3lm0ze: 610,
    },
  },
  {
    name: 'TC-003',
    data: {
      textfield_k2j4h1: 'TC-003',
      textfield_9vd1sa: 'Status display language',
      textarea_0p2kq8: 'Check every screen for English text.',
      expected: 'All status texts and alerts in English',
      radio_7yq2mw: 'failed',
      executed_on: '2026-09-04',
      number_3lm0ze: 30,
    },
  },
  {
    name: 'TC-004',
    data: {
      textfield_k2j4h1: 'TC-004',
      textfield_9vd1sa: 'Door interlock',
      expected: 'Door cannot open while pressurised',
      radio_7yq2mw: 'not_run',
    },
  },
];

/** The second tenant's topic: nothing of it may ever be visible to the demo tenant. */
export const riskRegisterSchema: FormSchema = {
  components: [
    { type: 'textfield', id: 'Field_r1', key: 'hazard', label: 'Hazard', validate: { required: true } },
    {
      type: 'select',
      id: 'Field_r2',
      key: 'select_sev',
      label: 'Severity',
      properties: { 'service-key': 'severity' },
      values: [
        { label: 'Negligible', value: '1' },
        { label: 'Serious', value: '3' },
        { label: 'Catastrophic', value: '5' },
      ],
    },
  ],
  type: 'default',
  schemaVersion: 19,
};
