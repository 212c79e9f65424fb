/**
 * The `code` of each error of the mapping family, one per class: stable across versions and
 * wordings, so that callers match on it (or on the class), never on the message or the name.
 */
export type MappingErrorCode = 'RXS_ERR_MAPPING_FILE' | 'RXS_ERR_FIELD_NAME' | 'RXS_ERR_FIELD_VALUE';

/**
 * A name or value given for the topics' fields cannot be used: a mapping file's mistakes, a field
 * name that is no field, a value the field cannot hold. The message says what to correct.
 */
export abstract class MappingError extends Error {
  abstract readonly code: MappingErrorCode;
}
