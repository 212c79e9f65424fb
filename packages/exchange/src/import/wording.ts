/**
 * How the import's advice names what a person can do about a problem: `rxs import` by its options,
 * another front end (the web app's import page) by its own controls. The facts of each message
 * stay the sdk's; only these phrases change.
 */
export interface ImportWording {
  /** A sentence on what to do about a column that names no field. */
  unknownColumn(column: string): string;
  /** How to map a column the import leaves out by default (a ReqIF standard attribute) to a field. */
  mapColumn(column: string): string;
  /** Why a column the person chose to leave out is not imported. */
  leftOut: string;
  /** Why an unknown column is not imported when unknown columns are left out. */
  unknownLeftOut: string;
  /** How to copy rows of another topic (or of none) in as new records: "with …". */
  newRecords: string;
  /** How to overwrite a record changed since the file was written: "with …". */
  ignoreVersions: string;
  /** How to delete the records whose source ids a newer file no longer has: "with …". */
  removeMissing: string;
  /** A sentence on choosing a workbook's sheet. */
  chooseSheet: string;
  /** A sentence on choosing a ReqIF file's spec object type. */
  chooseSpecType: string;
  /** A sentence on choosing the .reqif file of a ReqIF archive that holds several. */
  chooseEntry: string;
}

/** The words of `rxs import`: its options. */
export const CLI_WORDING: ImportWording = {
  unknownColumn: (column) =>
    `Rename it with --rename "${column}=FIELD", or leave unknown columns out with --ignore-unknown-columns.`,
  mapColumn: (column) => `map it with --rename "${column}=FIELD"`,
  leftOut: 'left out by --rename',
  unknownLeftOut: 'names no field (--ignore-unknown-columns)',
  newRecords: 'with --new-records',
  ignoreVersions: 'with --ignore-versions',
  removeMissing: 'with --remove-missing',
  chooseSheet: 'Say which to import with --sheet NAME.',
  chooseSpecType: 'Say which to import with --spec-type NAME.',
  chooseEntry: 'Say which to import with --entry NAME.',
};

/** Rows or records a note names one by one. */
export const MAX_NAMED = 20;

/** "a, b and 3 more": the first `most` of `items` named, and how many of `count` in all are not. */
export function listed(items: readonly string[], most = MAX_NAMED, count = items.length): string {
  const shown = items.slice(0, most);
  const more = count - shown.length;
  return `${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}
