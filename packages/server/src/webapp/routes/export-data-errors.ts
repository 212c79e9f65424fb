import { DuplicateIdentifierError, MappingFileError, TopicReapprovedError } from '@rxs/sdk';
import { HttpError } from '../../http/errors.js';

/**
 * Errors of the export procedure about the data itself (too many columns, two records with one
 * readable id, a bad mapping file, a re-approved topic): their messages say what to change, so the
 * user sees them as they are. The column limits' errors are known by name (the sdk does not export
 * their classes).
 */
const DATA_ERROR_CLASSES = [DuplicateIdentifierError, MappingFileError, TopicReapprovedError];
const DATA_ERROR_NAMES = new Set(['TooManyColumnsError', 'SheetTooWideError']);

/**
 * The 422 for an error of the export procedure caused by the topics' data, else undefined. Every
 * route that runs the procedure (the export, the traceability page) answers such data alike,
 * never with a 500.
 */
export function exportDataError(error: unknown): HttpError | undefined {
  const isDataError =
    DATA_ERROR_CLASSES.some((type) => error instanceof type) ||
    (error instanceof Error && DATA_ERROR_NAMES.has(error.name));
  return isDataError ? new HttpError(422, (error as Error).message) : undefined;
}
