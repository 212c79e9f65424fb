import { describe, expect, it } from 'vitest';
import {
  checkExportColumns,
  DuplicateIdentifierError,
  ExportDataError,
  FieldNameError,
  FieldResolver,
  FieldValueError,
  ImportFileError,
  ImportLimitError,
  MappingError,
  MappingFileError,
  NeedIdCollisionError,
  SheetTooWideError,
  TooManyColumnsError,
  TopicReapprovedError,
  BaselineNotFoundError,
  SpliceRefusedError,
  SyncError,
  SyncLockedError,
  SyncOrderError,
  SyncStateError,
  SyncStreamError,
} from './index.js';
import { JsonArrayError } from '../../client/src/json-array-stream.js';
import { RowIndexError } from '../../sync/src/row-index.js';
import { PreviousRecordMissingError } from '../../sync/src/session.js';
import { cellTooLarge, importLimits, tooManyColumns } from '../../exchange/src/import/limits.js';

type ErrorFamily = abstract new (...args: never[]) => Error;

/** One error of each class of the data families, as the sdk's index exports them, with its family and code. */
const ERRORS: [Error & { code: string }, ErrorFamily, string][] = [
  [new TooManyColumnsError('Requirements', 'r1', 5001, 5000), ExportDataError, 'RXS_ERR_TOO_MANY_COLUMNS'],
  [new SheetTooWideError('Requirements', 'r1', 16_385), ExportDataError, 'RXS_ERR_SHEET_TOO_WIDE'],
  [new DuplicateIdentifierError('REQ_001', 'a', 'b'), ExportDataError, 'RXS_ERR_DUPLICATE_IDENTIFIER'],
  [
    new NeedIdCollisionError(
      'REQ_001',
      { recordId: 'a', readableId: 'REQ-001' },
      { recordId: 'b', readableId: 'REQ_001' },
    ),
    ExportDataError,
    'RXS_ERR_NEED_ID_COLLISION',
  ],
  [new TopicReapprovedError('r1', 'r2', 'Requirements'), ExportDataError, 'RXS_ERR_TOPIC_REAPPROVED'],
  [
    new MappingFileError('mapping.json', [{ place: 'topics[0].name', message: 'is not a text' }]),
    MappingError,
    'RXS_ERR_MAPPING_FILE',
  ],
  [new FieldNameError('"Titel" is no field.'), MappingError, 'RXS_ERR_FIELD_NAME'],
  [new FieldValueError('Priority takes a number.'), MappingError, 'RXS_ERR_FIELD_VALUE'],
  [new ImportFileError('a.csv is empty.'), ImportFileError, 'RXS_ERR_IMPORT_FILE'],
  [
    new ImportLimitError('Too large.', { limit: 'maxArchiveBytes', value: 1, kind: 'size' }),
    ImportFileError,
    'RXS_ERR_IMPORT_LIMIT',
  ],
  [
    new SyncLockedError('state/sync.lock', { pid: 4242, hostname: 'elsewhere' }),
    SyncError,
    'RXS_ERR_SYNC_LOCKED',
  ],
  [new SyncStateError('state.json names gen-1, which is missing'), SyncError, 'RXS_ERR_SYNC_STATE'],
  [new SyncStreamError('not a stream'), SyncError, 'RXS_ERR_SYNC_STREAM'],
  [new SyncOrderError('Requirements', 'b', 'c'), SyncStreamError, 'RXS_ERR_SYNC_ORDER'],
  [
    new PreviousRecordMissingError('Requirements', 'a'),
    SyncStreamError,
    'RXS_ERR_SYNC_PREVIOUS_RECORD_MISSING',
  ],
  [new RowIndexError('the index is short'), SyncError, 'RXS_ERR_ROW_INDEX'],
  [new SpliceRefusedError('a column changed'), SyncError, 'RXS_ERR_SPLICE_REFUSED'],
  [new BaselineNotFoundError('release 1'), BaselineNotFoundError, 'RXS_ERR_BASELINE_NOT_FOUND'],
  [new JsonArrayError('cut short', true), JsonArrayError, 'RXS_ERR_JSON_ARRAY'],
];

describe('error codes of the data families', () => {
  it.each(ERRORS)('%o: its family, its code, its name', (error, family, code) => {
    expect(error).toBeInstanceOf(family);
    expect(error.code).toBe(code);
    expect(error.name).toBe(error.constructor.name);
  });

  it('every code is RXS_ERR_ and names one class', () => {
    const codes = ERRORS.map(([error]) => error.code);
    for (const code of codes) expect(code).toMatch(/^RXS_ERR_[A-Z_]+$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('the export stops on too many columns with a coded ExportDataError', () => {
    const fields = Array.from({ length: 3 }, (_, i) => ({ key: `k${i}`, name: `F${i}`, type: 'textfield' }));
    const refusal = (() => {
      try {
        checkExportColumns({ name: 'Requirements', revisionId: 'r1' }, fields as never, 2);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(ExportDataError);
    expect(refusal).toMatchObject({ code: 'RXS_ERR_TOO_MANY_COLUMNS', columns: 3, limit: 2 });
  });

  it('a name or value of a field that cannot be used is a coded MappingError', () => {
    const resolver = new FieldResolver([]);
    expect(() => resolver.resolve('Titel')).toThrow(
      expect.objectContaining({ code: 'RXS_ERR_FIELD_NAME', name: 'FieldNameError' }),
    );
  });

  it('a file past an import limit is an ImportLimitError, an ImportFileError with its code', () => {
    const limits = importLimits({ maxCellBytes: 10, maxColumns: 2 });
    for (const error of [
      cellTooLarge(limits, 'a.csv, line 2'),
      tooManyColumns(limits, 'a.csv has 3 columns'),
    ]) {
      expect(error).toBeInstanceOf(ImportFileError);
      expect(error).toBeInstanceOf(ImportLimitError);
      expect(error.code).toBe('RXS_ERR_IMPORT_LIMIT');
      expect(error.exceeded.kind).toBe('shape');
    }
  });
});
