import { useState } from 'preact/hooks';
import type {
  ImportChoice,
  ImportChoiceAnswer,
  ImportChoiceOption,
  ImportReport,
  ImportView,
  OutlineImportReport,
  RelationImportReport,
} from '@rxs/web-api';
import { api, ApiError } from '../api';
import { ChoiceField } from '../components/choice-field';
import { ReasonField } from '../components/reason-field';
import { Badge, ErrorNotice, Link, Loading, Notice, PageHeader, plural } from '../components/ui';
import { useTitle, useTopic } from '../hooks';
import { paths, topicCrumbs } from '../router';
import { useCan, useSession } from '../session';

type Action = ImportReport['preview'][number]['action'];
type Column = ImportReport['columns'][number];

const ACTIONS: Record<Action, { label: string; kind: 'success' | 'info' | 'neutral' | 'danger' }> = {
  create: { label: 'Create', kind: 'success' },
  update: { label: 'Update', kind: 'info' },
  unchanged: { label: 'Unchanged', kind: 'neutral' },
  rejected: { label: 'Rejected', kind: 'danger' },
};

/** The select's value for a column left as the file names it (its field, or none). */
const AS_IS = '\u0000as-is';
const LEAVE_OUT = '';
/** The server's MAX_IMPORT_REASON: the reason travels in the query string. */
const MAX_IMPORT_REASON = 500;

interface Options {
  continueOnError: boolean;
  newRecords: boolean;
  /** The column whose value is each row's source id; '' for the file's `source_id` column, if any. */
  keyColumn: string;
  /** Delete the topic's records whose source id the file no longer has. */
  removeMissing: boolean;
  sheet: string;
  /** ReqIF: the spec object type to import, by name; '' for the only one (else the topic's). */
  specType: string;
  /** ReqIF archive: the .reqif file in it to import; '' for its only one. */
  entry: string;
  /** Why: kept in the history of each record written. */
  reason: string;
  /** File column → field key, or '' to leave it out: the user's changes to the column mapping. */
  renames: Record<string, string>;
}

/** The query of `/api/import` for a file and the options. */
function queryOf(revision: string, file: File, options: Options) {
  const renames = Object.entries(options.renames).filter(([, field]) => field !== AS_IS);
  return {
    revision,
    name: file.name,
    continue_on_error: options.continueOnError,
    new_records: options.newRecords,
    key_column: options.keyColumn || undefined,
    remove_missing: options.removeMissing,
    sheet: options.sheet.trim() || undefined,
    spec_type: options.specType.trim() || undefined,
    entry: options.entry.trim() || undefined,
    reason: options.reason.trim() || undefined,
    renames: renames.length > 0 ? JSON.stringify(Object.fromEntries(renames)) : undefined,
  };
}

/** The kind of file chosen, by its name as the server tells it (`rxs import`'s extensions). */
function kindOf(file: File | undefined): 'csv' | 'xlsx' | 'reqif' | 'reqifz' | undefined {
  const extension = /\.([^.]+)$/.exec(file?.name ?? '')?.[1]?.toLowerCase();
  if (extension === 'xlsx') return 'xlsx';
  if (extension === 'reqifz') return 'reqifz';
  if (extension === 'reqif' || extension === 'xml') return 'reqif';
  return file && 'csv';
}

/** The names a check answered to choose among, when the file holds several of what one import takes. */
function choiceOf(error: unknown): ImportChoice | undefined {
  if (!(error instanceof ApiError) || error.status !== 422) return undefined;
  return (error.body as Partial<ImportChoiceAnswer> | undefined)?.choose;
}

/**
 * Import a CSV, XLSX, ReqIF or ReqIF archive file into a topic: the file is checked first (a dry
 * run: the column mapping, the first rows as checked, the counts; nothing is written), then
 * imported with the options chosen, by the same code as `rxs import`; a ReqIF file's relations
 * between the imported records become traces.
 */
export function ImportPage({ historyId }: { historyId: string }) {
  const topic = useTopic(historyId);
  const can = useCan();
  const { meta } = useSession();
  useTitle(topic.data ? `Import into ${topic.data.name}` : 'Import');
  const [file, setFile] = useState<File>();
  const [options, setOptions] = useState<Options>({
    continueOnError: false,
    newRecords: false,
    keyColumn: '',
    removeMissing: false,
    sheet: '',
    specType: '',
    entry: '',
    reason: '',
    renames: {},
  });
  /** What the file holds several of, as the checks answered them: a sheet, a spec object type, a .reqif file. */
  const [choices, setChoices] = useState<Partial<Record<ImportChoiceOption, ImportChoice>>>({});
  const [busy, setBusy] = useState<'check' | 'import'>();
  const [error, setError] = useState<unknown>();
  const [checked, setChecked] = useState<{ view: ImportView; query: string }>();
  const [result, setResult] = useState<ImportView>();

  if (topic.error !== undefined) return <ErrorNotice error={topic.error} onRetry={topic.reload} />;
  if (!topic.data) return <Loading />;
  const t = topic.data;
  const revision = t.currentRevisionId;
  const crumbs = topicCrumbs(t.historyId, t.name, true);
  const header = (
    <PageHeader title={`Import into ${t.name}`} crumbs={crumbs}>
      <p class="page-lead">
        Records from a CSV, XLSX or ReqIF file, each row (or spec object) checked against the form of the
        topic's current revision before anything is written, by the same code as <code>rxs import</code>.
        Columns are named as exports name them: the fields' semantic names or form keys (ReqIF: the
        attributes' names); a row with an <code>_id</code>, a source id or a readable id updates that record,
        the others are created.
      </p>
    </PageHeader>
  );
  if (!revision)
    return (
      <>
        {header}
        <Notice kind="info" title="This topic is not approved yet">
          Records are imported with the form of an approved revision.{' '}
          <Link href={paths.topic(t.historyId)}>Open the topic</Link> to approve its draft.
        </Notice>
      </>
    );
  if (!can('records:write'))
    return (
      <>
        {header}
        <Notice kind="info" title="Your role cannot import records">
          Importing writes records: ask an administrator for the editor role.
        </Notice>
      </>
    );

  const query = file ? queryOf(revision, file, options) : undefined;
  const stale = checked !== undefined && JSON.stringify(query) !== checked.query;
  const change = (next: Partial<Options>) => {
    setOptions({ ...options, ...next });
    setResult(undefined);
  };

  const run = async (step: 'check' | 'import') => {
    if (!file || !query) return;
    if (file.size > meta.importMaxBytes) {
      // Refused here: sending it would only end in the server's 413 (or a cut connection).
      setError(
        new ApiError(
          413,
          `“${file.name}” is ${megabytes(file.size)}, larger than ${megabytes(meta.importMaxBytes)}, the most the web app imports. Split it, or import it with rxs import.`,
        ),
      );
      return;
    }
    setBusy(step);
    setError(undefined);
    setResult(undefined);
    try {
      const view = await api.upload<ImportView>(step === 'check' ? '/import/check' : '/import', query, file);
      if (step === 'check') setChecked({ view, query: JSON.stringify(query) });
      else {
        setResult(view);
        setChecked(undefined);
      }
    } catch (failure) {
      setError(failure);
      const choice = choiceOf(failure);
      if (choice) setChoices({ ...choices, [choice.option]: choice });
    } finally {
      setBusy(undefined);
    }
  };

  const report = checked?.view.report;
  const blocked =
    report === undefined
      ? 'Check the file first.'
      : stale
        ? 'The file or the options changed: check it again.'
        : report.problems.length > 0
          ? 'The file cannot be imported as it is: see the problems above.'
          : report.rejected > 0 && !options.continueOnError
            ? 'Rows were rejected: fix them in the file and check it again, or write the valid rows anyway.'
            : report.planned.created + report.planned.updated + report.removed === 0
              ? 'Every row is in the topic already: there is nothing to write.'
              : undefined;
  // The key column is chosen among the columns of the file as last checked.
  const keyChoices = (checked?.view.report.columns ?? []).map((column) => column.column);
  const kind = kindOf(file);

  return (
    <>
      {header}
      <form
        class="import-form"
        onSubmit={(event) => {
          event.preventDefault();
          void run('check');
        }}
      >
        <fieldset class="panel">
          <legend class="panel-title">File</legend>
          <div class="field">
            <label for="import-file">A CSV, XLSX or ReqIF file</label>
            <input
              id="import-file"
              type="file"
              accept=".csv,.tsv,.txt,.xlsx,.reqif,.reqifz,.xml,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
              onChange={(e) => {
                setFile(e.currentTarget.files?.[0]);
                setChecked(undefined);
                setResult(undefined);
                setError(undefined);
                setChoices({});
                change({ renames: {}, keyColumn: '', sheet: '', specType: '', entry: '' });
              }}
            />
            <div class="field-hint">
              An export of this topic, edited, or a sheet of your own with a header row (UTF-8 or UTF-16 text,
              comma, semicolon or tab separated); or a ReqIF file (.reqif) or ReqIF archive (.reqifz) of
              another tool.
            </div>
          </div>
          {kind === 'xlsx' && (
            <ChoiceField
              id="import-sheet"
              label="Sheet"
              placeholder="The sheet named after the topic, else the only one"
              choice={choices.sheet}
              value={options.sheet}
              onValue={(sheet) => change({ sheet })}
            />
          )}
          {kind === 'reqifz' && (
            <ChoiceField
              id="import-entry"
              label="ReqIF file of the archive"
              placeholder="Its only .reqif file"
              choice={choices.entry}
              value={options.entry}
              onValue={(entry) => change({ entry })}
            />
          )}
          {(kind === 'reqif' || kind === 'reqifz') && (
            <ChoiceField
              id="import-spec-type"
              label="Spec object type"
              placeholder="The only one, else the one named after the topic"
              choice={choices.spec_type}
              value={options.specType}
              onValue={(specType) => change({ specType })}
            />
          )}
        </fieldset>
        <fieldset class="panel">
          <legend class="panel-title">Options</legend>
          <label class="checkbox">
            <input
              type="checkbox"
              checked={options.continueOnError}
              onChange={(e) => change({ continueOnError: e.currentTarget.checked })}
            />
            Write the valid rows even if some are rejected (otherwise nothing is written while a row is
            rejected)
          </label>
          <label class="checkbox">
            <input
              type="checkbox"
              checked={options.newRecords}
              onChange={(e) => change({ newRecords: e.currentTarget.checked })}
            />
            Copy in as new records: ignore the rows' <code>_id</code> and the topic they came from
          </label>
          <div class="field">
            <label for="import-key">Key column</label>
            <select
              id="import-key"
              value={options.keyColumn}
              onChange={(e) => change({ keyColumn: e.currentTarget.value })}
            >
              <option value="">
                {kind === 'reqif' || kind === 'reqifz'
                  ? "The spec object's IDENTIFIER"
                  : 'The source_id column, if the file has one'}
              </option>
              {[...new Set([...keyChoices, ...(options.keyColumn ? [options.keyColumn] : [])])].map(
                (column) => (
                  <option key={column} value={column}>
                    {column}
                  </option>
                ),
              )}
            </select>
            <div class="field-hint">
              The column that holds each row's identity in the tool it comes from (an issue key, an object
              id): kept with the record, it finds the record again when a newer file of that tool is imported.{' '}
              {keyChoices.length === 0 && 'Check the file to choose among its columns.'}
            </div>
          </div>
          <label class="checkbox">
            <input
              type="checkbox"
              checked={options.removeMissing}
              onChange={(e) => change({ removeMissing: e.currentTarget.checked })}
            />
            Remove records no longer in the file: delete the records whose source id the file no longer has
            (once every row is written)
          </label>
          <ReasonField
            id="import-reason"
            label="Reason (optional)"
            hint="Kept in the history of each record the import writes, with your name and the time."
            maxLength={MAX_IMPORT_REASON}
            value={options.reason}
            onValue={(reason) => change({ reason })}
          />
        </fieldset>
        {error !== undefined && <ErrorNotice error={error} />}
        <div class="button-row">
          <button
            type="submit"
            class={`button${report && !stale ? '' : ' button-primary'}`}
            disabled={!file || busy !== undefined}
          >
            {busy === 'check' ? 'Checking…' : report ? 'Check again' : 'Check'}
          </button>
        </div>
      </form>

      {report && checked && (
        <section class="import-check" aria-label="Check of the file">
          <CheckSummary view={checked.view} stale={stale} />
          {checked.view.relations && <Relations relations={checked.view.relations} dryRun />}
          <ColumnMappingPanel
            columns={report.columns}
            fields={checked.view.fields}
            renames={options.renames}
            onRename={(column, field) => change({ renames: { ...options.renames, [column]: field } })}
          />
          <PreviewPanel report={report} />
          <RowProblems report={report} />
          <div class="button-row">
            <button
              type="button"
              class="button button-primary"
              disabled={blocked !== undefined || busy !== undefined}
              aria-describedby="import-blocked"
              onClick={() => void run('import')}
            >
              {busy === 'import'
                ? 'Importing…'
                : `Import ${plural(report.planned.created + report.planned.updated, 'record')}${report.removed ? `, delete ${report.removed}` : ''}`}
            </button>
            {blocked && (
              <span class="muted" id="import-blocked">
                {blocked}
              </span>
            )}
          </div>
        </section>
      )}

      {result && (
        <section class="import-result" aria-label="Import report">
          <ImportOutcome view={result} historyId={t.historyId} />
          {result.relations && <Relations relations={result.relations} dryRun={false} />}
          {result.outline && <Outline outline={result.outline} />}
          <RowProblems report={result.report} />
        </section>
      )}
    </>
  );
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, '')} MB`;

function counts(report: ImportReport): string {
  const would = report.dryRun ? ' would be' : '';
  const missing = report.missing
    ? `; ${report.missing} no longer in the file${report.removed ? `, ${report.removed}${would} deleted` : ', kept'}`
    : '';
  return (
    `${report.created}${would} created, ${report.updated}${would} updated, ${report.unchanged} unchanged, ` +
    `${report.rejected} rejected${report.failed ? `, ${report.failed} refused by the service` : ''}${missing}`
  );
}

/** What became of a ReqIF file's SPEC-RELATIONs: traces between the topic's records. */
function Relations({ relations, dryRun }: { relations: RelationImportReport; dryRun: boolean }) {
  const would = dryRun ? ' would be' : '';
  return (
    <div class="panel">
      <h2 class="panel-title">Relations</h2>
      <p data-testid="import-relations">
        {plural(relations.relations, 'SPEC-RELATION')} of the file: {plural(relations.created, 'trace')}
        {would} created, {relations.existing} existing, {relations.skipped} skipped.
        {dryRun &&
          relations.skipped > 0 &&
          ' A check creates no records: a relation to a record the import would create is counted as skipped here.'}
      </p>
      {relations.notes.length > 0 && (
        <ul class="import-notes muted">
          {relations.notes.map((note) => (
            <li key={note}>{note}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** What became of a ReqIF file's SPEC-HIERARCHY: the topic's document outline. */
function Outline({ outline }: { outline: OutlineImportReport }) {
  return (
    <div class="panel">
      <h2 class="panel-title">Document outline</h2>
      <p data-testid="import-outline">
        {plural(outline.entries, 'SPEC-HIERARCHY entry', 'SPEC-HIERARCHY entries')} placed in the topic's
        document outline, {outline.skipped} skipped.
      </p>
      {outline.notes.length > 0 && (
        <ul class="import-notes muted">
          {outline.notes.map((note) => (
            <li key={note}>{note}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Problems({ report }: { report: ImportReport }) {
  return (
    <>
      {report.problems.length > 0 && (
        <ul class="import-problems">
          {report.problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      )}
      {report.notes.length > 0 && (
        <ul class="import-notes muted">
          {report.notes.map((note) => (
            <li key={note}>{note}</li>
          ))}
        </ul>
      )}
    </>
  );
}

function CheckSummary({ view, stale }: { view: ImportView; stale: boolean }) {
  const { report, file } = view;
  const title =
    report.problems.length > 0
      ? `“${file.name}” cannot be imported as it is`
      : report.rejected > 0
        ? `${plural(report.rejected, 'row')} of “${file.name}” rejected`
        : `“${file.name}” is ready to import`;
  return (
    <Notice kind={report.problems.length > 0 || report.rejected > 0 ? 'warning' : 'success'} title={title}>
      <p data-testid="import-counts">
        {plural(report.rows, 'row')} checked, nothing written: {counts(report)}.
        {report.problems.length > 0 && ' Fix the file (or the column mapping below) and check it again.'}
        {report.problems.length === 0 &&
          report.rejected > 0 &&
          ' Fix the rejected rows in the file and check it again, or write the valid rows anyway.'}
      </p>
      {stale && <p>The file or the options changed since this check: check it again before importing.</p>}
      <Problems report={report} />
    </Notice>
  );
}

function ColumnMappingPanel({
  columns,
  fields,
  renames,
  onRename,
}: {
  columns: Column[];
  fields: ImportView['fields'];
  renames: Record<string, string>;
  onRename: (column: string, field: string) => void;
}) {
  if (columns.length === 0) return null;
  return (
    <div class="panel">
      <h2 class="panel-title">Column mapping</h2>
      <p class="muted">
        Each column of the file and the field it fills. Choose a field for a column that names none, or leave
        it out; then check the file again.
      </p>
      <div class="table-wrap">
        <table class="table table-compact" data-testid="import-columns">
          <thead>
            <tr>
              <th scope="col">Column of the file</th>
              <th scope="col">Field</th>
            </tr>
          </thead>
          <tbody>
            {columns.map((column) => (
              <tr key={column.column}>
                <th scope="row">{column.column}</th>
                <td>
                  {column.as === 'data-key' ? (
                    <span class="muted">kept as a data key the form does not show</span>
                  ) : (
                    <select
                      aria-label={`Field for the column ${column.column}`}
                      class={column.as === 'unknown' ? 'select-invalid' : undefined}
                      value={renames[column.column] ?? AS_IS}
                      onChange={(e) => onRename(column.column, e.currentTarget.value)}
                    >
                      <option value={AS_IS}>
                        {column.field
                          ? `${column.field.name} (${column.field.key})`
                          : column.as === 'unknown'
                            ? 'Names no field: choose one'
                            : 'Left out'}
                      </option>
                      {fields.map((field) => (
                        <option key={field.key} value={field.key}>
                          {field.name} ({field.key})
                        </option>
                      ))}
                      <option value={LEAVE_OUT}>Leave the column out</option>
                    </select>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Reasons({ problems }: { problems: string[] }) {
  if (problems.length === 0) return null;
  return (
    <ul class="import-reasons">
      {problems.map((problem) => (
        <li key={problem}>{problem}</li>
      ))}
    </ul>
  );
}

function PreviewPanel({ report }: { report: ImportReport }) {
  if (report.preview.length === 0) return null;
  return (
    <div class="panel">
      <h2 class="panel-title">
        {report.preview.length < report.rows ? `The first ${report.preview.length} rows` : 'The rows'}, as
        checked
      </h2>
      <div class="table-wrap">
        <table class="table table-compact" data-testid="import-preview">
          <thead>
            <tr>
              <th scope="col">Row</th>
              <th scope="col">Record</th>
              <th scope="col">Readable id</th>
              <th scope="col">Action</th>
              <th scope="col">Reasons</th>
            </tr>
          </thead>
          <tbody>
            {report.preview.map((row) => (
              <tr key={row.where}>
                <td>{row.where}</td>
                <td>{row.name ?? ''}</td>
                <td>{row.readableId ?? ''}</td>
                <td>
                  <Badge kind={ACTIONS[row.action].kind}>{ACTIONS[row.action].label}</Badge>
                </td>
                <td>
                  <Reasons problems={row.problems} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** Every rejected or refused row with its reasons (the preview shows only the first rows). */
function RowProblems({ report }: { report: ImportReport }) {
  if (report.rowProblems.length === 0) return null;
  return (
    <div class="panel">
      <h2 class="panel-title">{plural(report.rowProblems.length + report.unlisted, 'row')} with problems</h2>
      <ul class="import-row-problems" data-testid="import-row-problems">
        {report.rowProblems.map((row) => (
          <li key={`${row.where}-${row.phase}`}>
            <strong>{row.where}</strong>
            {[row.readableId, row.recordId].filter(Boolean).length > 0 &&
              ` (${[row.readableId, row.recordId].filter(Boolean).join(', ')})`}
            {row.phase === 'write' && ', refused by the service'}
            <Reasons problems={row.problems} />
          </li>
        ))}
      </ul>
      {report.unlisted > 0 && <p class="muted">…and {plural(report.unlisted, 'row')} more.</p>}
    </div>
  );
}

/** What the import did and what to do next, in the words of `rxs import`'s report. */
function ImportOutcome({ view, historyId }: { view: ImportView; historyId: string }) {
  const { report, file } = view;
  const records = (
    <Link class="button button-small" href={paths.records(historyId)}>
      Open the records
    </Link>
  );
  if (report.problems.length > 0 && !report.wrote)
    return (
      <Notice kind="error" title={`Nothing was written from “${file.name}”`}>
        <Problems report={report} />
        <p>Fix the file and import it again.</p>
      </Notice>
    );
  if (report.rejected > 0 && report.allOrNothing)
    return (
      <Notice kind="error" title={`Nothing was written: ${plural(report.rejected, 'row')} rejected`}>
        <p>
          All or nothing: otherwise {report.planned.created} would be created and {report.planned.updated}{' '}
          updated. Fix the rows below and import the file again, or tick “Write the valid rows even if some
          are rejected”.
        </p>
        <Problems report={report} />
      </Notice>
    );
  return (
    <Notice
      kind={report.complete ? 'success' : 'warning'}
      title={report.complete ? `Imported “${file.name}”` : `Imported “${file.name}” in part`}
    >
      <p data-testid="import-result-counts">{counts(report)}.</p>
      {!report.complete && (
        <p>
          The other rows were written. Fix the rows below and import the file again: rows already in the topic
          are left unchanged.
        </p>
      )}
      <Problems report={report} />
      {records}
    </Notice>
  );
}
