/** Validation of record data against its knowledge topic's form-js schema. */
export {
  recordDataValidator,
  validateRecordData,
  type ValidateRecordDataOptions,
} from './validate-record-data.js';
export type { ConditionWarning } from './conditions.js';
export { countKeys, DEFAULT_MAX_RECORD_KEYS } from './data-size.js';
export { clip } from './describe.js';
