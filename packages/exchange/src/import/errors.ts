/**
 * The `code` of each error of the import-file family, one per class: stable across versions and
 * wordings, so that callers match on it (or on the class), never on the message or the name.
 */
export type ImportFileErrorCode = 'RXS_ERR_IMPORT_FILE' | 'RXS_ERR_IMPORT_LIMIT';

/** Which of the import's limits a file went past, and whether for its size or for a row's shape. */
export interface ImportLimitExceeded {
  limit: string;
  value: number;
  kind: 'size' | 'shape';
}

/** The file as a whole cannot be read: nothing of it is imported. The message says what to do. */
export class ImportFileError extends Error {
  override name = 'ImportFileError';
  readonly code: ImportFileErrorCode = 'RXS_ERR_IMPORT_FILE';

  constructor(
    message: string,
    /** The import limit the file went past, when that is why. */
    readonly exceeded?: ImportLimitExceeded,
  ) {
    super(message);
  }
}

/** What the import must be told, among the parts of a file: a sheet, a spec object type, an archive's ReqIF file. */
export interface ImportChoice {
  option: 'sheet' | 'spec_type' | 'entry';
  /** Every name to choose among, as the file has them. */
  names: string[];
}

/** A file holding several of what one import takes: the message asks which, `choice` lists them. */
export class ImportChoiceError extends ImportFileError {
  override name = 'ImportChoiceError';

  constructor(
    message: string,
    readonly choice: ImportChoice,
  ) {
    super(message);
  }
}

/** A file past one of the import's limits (ImportLimits): reading stopped there, nothing is imported. */
export class ImportLimitError extends ImportFileError {
  override name = 'ImportLimitError';
  override readonly code = 'RXS_ERR_IMPORT_LIMIT';
  declare readonly exceeded: ImportLimitExceeded;

  constructor(message: string, exceeded: ImportLimitExceeded) {
    super(message, exceeded);
  }
}
