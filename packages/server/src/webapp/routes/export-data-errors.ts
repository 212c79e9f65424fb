import { ExportDataError, MappingFileError } from '@rxs/exchange/export';
import { HttpError } from '../../http/errors.js';

/**
 * The 422 for an error of the export procedure caused by the topics' data or the mapping file
 * (too many columns, two records with one readable id, a re-approved topic, a mapping file's
 * mistakes), else undefined. Their messages say what to change, so the user sees them as they are.
 * Every route that runs the procedure (the export, the traceability page) answers such data
 * alike, never with a 500.
 */
export function exportDataError(error: unknown): HttpError | undefined {
  return error instanceof ExportDataError || error instanceof MappingFileError
    ? new HttpError(422, error.message)
    : undefined;
}
