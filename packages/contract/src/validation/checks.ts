/**
 * Validation of record data against its knowledge topic's form-js schema, FEEL loaded only for a
 * form with a condition (`@rxs/contract/validation/checks`): await loadConditionsFor(schema)
 * before validating against a form. `@rxs/contract/validation` is the same with FEEL loaded.
 */
export {
  recordDataValidator,
  validateRecordData,
  type ValidateRecordDataOptions,
} from './validate-record-data.js';
export { loadConditionsFor, type ConditionWarning } from './conditions.js';
export { countKeys, DEFAULT_MAX_RECORD_KEYS } from './data-size.js';
export { clip } from './describe.js';
