import { ExportDataError } from './errors.js';
import type { ExportedField } from './model.js';

const MiB = 1024 * 1024;

/** `bytes` for people: "5 MiB", "1,024 bytes". */
export function sizeText(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${(bytes / MiB).toLocaleString('en')} MiB`;
  if (bytes >= MiB) return `${(bytes / MiB).toFixed(1)} MiB`;
  return `${bytes.toLocaleString('en')} bytes`;
}

/**
 * Columns one topic may add to an export by default. Keys met only in record data become columns
 * too, so a few hostile or broken records could otherwise grow a CSV to hundreds of megabytes of
 * empty cells (and past the 16,384 columns a spreadsheet can open).
 */
export const DEFAULT_MAX_EXPORT_COLUMNS = 5000;

/** A topic's records add more columns than the export allows; nothing was written. */
export class TooManyColumnsError extends ExportDataError {
  override name = 'TooManyColumnsError';
  override readonly code = 'RXS_ERR_TOO_MANY_COLUMNS';

  constructor(
    readonly topicName: string,
    readonly revisionId: string,
    readonly columns: number,
    readonly limit: number,
  ) {
    super(
      `"${topicName}" (revision ${revisionId}) would export ${columns} columns, more than the limit of ${limit}: ` +
        `its records hold many keys that are not fields of its form. Remove the stray keys from those records, ` +
        `or raise the limit (maxColumns) if the columns are wanted.`,
    );
  }
}

/**
 * Checks the columns a topic has so far (its field map's fields, list item fields included, after the data-only fields of the
 * records mapped so far were added) against the limit; throws TooManyColumnsError beyond it.
 * Cheap: call it each time the map grows, so the export stops as soon as the limit is passed.
 */
export function checkExportColumns(
  topic: { name: string; revisionId: string },
  fields: readonly ExportedField[],
  limit: number = DEFAULT_MAX_EXPORT_COLUMNS,
): void {
  const columns = countColumns(fields);
  if (columns > limit) throw new TooManyColumnsError(topic.name, topic.revisionId, columns, limit);
}

/** Fields and, for dynamic lists, their item fields: what a flattening writer could turn into columns. */
export function countColumns(fields: readonly ExportedField[]): number {
  let count = 0;
  const stack = [fields];
  while (stack.length > 0) {
    for (const field of stack.pop()!) {
      count += 1;
      if (field.itemFields) stack.push(field.itemFields);
    }
  }
  return count;
}
