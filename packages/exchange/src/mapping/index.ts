export { buildFieldMap, extendFieldMap, type FieldMap } from './field-map.js';
export { mapRecord, RecordMapper, type MapRecordOptions, type MappedRecord } from './record.js';
export { resolveSemanticName, disambiguateName, type ResolvedName } from './names.js';
export {
  componentOptions,
  labelValue,
  OPTION_TYPES,
  MULTI_VALUE_TYPES,
  type FieldOption,
} from './options.js';
export {
  convertTypedValue,
  convertValue,
  FieldNameError,
  FieldResolver,
  FieldValueError,
  setFieldValue,
} from './record-input.js';
