import { useState } from 'preact/hooks';
import type {
  RecordChanges,
  RecordHistoryView,
  RecordVersionAction,
  RecordVersionDetail,
  RecordVersionView,
  ServiceRecord,
} from '@rxs/web-api';
import { api, ApiError, errorMessage } from '../api';
import {
  Badge,
  ConfirmDialog,
  DateTime,
  ErrorNotice,
  Link,
  Loading,
  Notice,
  PageHeader,
} from '../components/ui';
import { ReasonField } from '../components/reason-field';
import { FormView } from '../forms/form-view';
import { useAsync, useTitle } from '../hooks';
import { paths, topicCrumbs } from '../router';
import { useCan } from '../session';

const ACTION_LABELS: Record<RecordVersionAction, string> = {
  created: 'Created',
  updated: 'Changed',
  deleted: 'Deleted',
  moved: 'Moved to a new revision',
  restored: 'Restored',
};

const ACTION_BADGES: Record<RecordVersionAction, 'neutral' | 'success' | 'warning' | 'danger' | 'info'> = {
  created: 'success',
  updated: 'info',
  deleted: 'danger',
  moved: 'neutral',
  restored: 'warning',
};

/** A record's values by semantic name (the form key on hover), as exports show them. */
export function ValuesList({
  values,
  testId,
}: {
  values: { name: string; key: string; text: string }[];
  testId?: string;
}) {
  if (values.length === 0) return <p class="muted">No values.</p>;
  return (
    <dl class="facts facts-values" data-testid={testId}>
      {values.map((value) => (
        <div key={value.name} class="fact">
          <dt title={`form key ${value.key}`}>{value.name}</dt>
          <dd>{value.text || <span class="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The field-by-field differences of one version, by semantic name; long values wrap and scroll. */
export function ChangesTable({ changes, testId }: { changes: RecordChanges; testId?: string }) {
  if (!changes.name && changes.fields.length === 0) return <p class="muted small">No values changed.</p>;
  return (
    <div class="table-wrap">
      <table class="table table-compact diff-table" data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {changes.name && (
            <tr>
              <th scope="row">Record name</th>
              <td class="diff-before">
                <div class="diff-value">{changes.name.before}</div>
              </td>
              <td class="diff-after">
                <div class="diff-value">{changes.name.after}</div>
              </td>
            </tr>
          )}
          {changes.fields.map((field) => (
            <tr key={field.field} class={`diff-${field.change}`}>
              <th scope="row">{field.field}</th>
              <td class="diff-before">
                {field.before === undefined ? (
                  <span class="muted">(not set)</span>
                ) : (
                  <div class="diff-value">{field.before}</div>
                )}
              </td>
              <td class="diff-after">
                {field.after === undefined ? (
                  <span class="muted">(removed)</span>
                ) : (
                  <div class="diff-value">{field.after}</div>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function VersionHeading({ version }: { version: RecordVersionView }) {
  return (
    <div class="version-head">
      <Badge kind={ACTION_BADGES[version.action]}>{ACTION_LABELS[version.action]}</Badge>
      <span class="version-n">#{version.n}</span>
      <DateTime value={version.at} />
      <span>by {version.by}</span>
      <span class="muted small">
        {version.via === 'api-key'
          ? `with API key ${version.keyId ?? ''}`
          : version.via === 'session'
            ? 'in the web app'
            : version.via === 'local'
              ? 'on the server'
              : 'by an upgrade'}
      </span>
    </div>
  );
}

/**
 * A record's audit trail, newest first: who changed it, when, why, and what changed by field.
 * `reloadKey` changes after a save, so the new version shows at once.
 */
export function HistoryPanel({
  historyId,
  recordId,
  reloadKey,
}: {
  historyId: string;
  recordId: string;
  reloadKey?: unknown;
}) {
  const first = useAsync(
    () => api.get<RecordHistoryView>(`/records/${recordId}/history`, { limit: 20 }),
    [recordId, reloadKey],
  );
  const [older, setOlder] = useState<{
    versions: RecordVersionView[];
    next: number | null;
    error?: string;
  }>();
  const [loadingMore, setLoadingMore] = useState(false);

  if (first.error !== undefined) return <ErrorNotice error={first.error} onRetry={first.reload} />;
  if (!first.data) return <Loading label="Loading the history…" />;
  const versions = [...first.data.versions, ...(older?.versions ?? [])];
  const next = older ? older.next : first.data.next;

  const loadOlder = async () => {
    if (next === null) return;
    setLoadingMore(true);
    try {
      const page = await api.get<RecordHistoryView>(`/records/${recordId}/history`, {
        limit: 20,
        before: next,
      });
      setOlder({ versions: [...(older?.versions ?? []), ...page.versions], next: page.next });
    } catch (error) {
      setOlder({ versions: older?.versions ?? [], next, error: errorMessage(error) });
    } finally {
      setLoadingMore(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="history-title" data-testid="record-history">
      <h2 id="history-title" class="panel-title">
        History
      </h2>
      <p class="muted small">
        Every change is kept as it was made and cannot be altered. Differences are by field name, as exports
        show them.
      </p>
      <ol class="version-list">
        {versions.map((version) => (
          <li key={version.n} class="version" data-testid={`version-${version.n}`}>
            <VersionHeading version={version} />
            {version.reason && (
              <p class="version-reason">
                <span class="muted">Reason:</span> {version.reason}
              </p>
            )}
            {version.action !== 'deleted' && version.action !== 'moved' && (
              <ChangesTable changes={version.changes} />
            )}
            <Link class="button button-small" href={paths.recordVersion(historyId, recordId, version.n)}>
              View version #{version.n}
            </Link>
          </li>
        ))}
      </ol>
      {older?.error && (
        <Notice kind="error" title="Older versions could not be loaded">
          {older.error}
        </Notice>
      )}
      {next !== null && (
        <button type="button" class="button" disabled={loadingMore} onClick={() => void loadOlder()}>
          {loadingMore ? 'Loading…' : 'Older versions'}
        </button>
      )}
    </section>
  );
}

/**
 * A record's version, creation and last change with who made them, read from its history: the
 * first version and the newest. A record page's facts then agree with its history, where a change
 * that leaves the record's own dates alone (a move to a new revision, data brought in with older
 * dates) is a version too. If the history cannot be read, the record's own dates are shown.
 */
export function RecordFacts({
  record,
  createdBy,
  updatedBy,
}: {
  record: ServiceRecord;
  createdBy: string | null;
  updatedBy: string | null;
}) {
  const ends = useAsync(async () => {
    const newest = await api.get<RecordHistoryView>(`/records/${record._id}/history`, { limit: 1 });
    const last = newest.versions[0];
    if (!last || last.n === 1) return { first: last, last };
    const oldest = await api.get<RecordHistoryView>(`/records/${record._id}/history`, {
      limit: 1,
      before: 2,
    });
    return { first: oldest.versions[0], last };
  }, [record._id, record.version]);

  if (!ends.data && ends.loading) return <Loading label="Reading the history…" />;
  const { first, last } = ends.data ?? {};
  const created = first
    ? { at: first.at, by: first.by }
    : { at: record.audit_info.timestamp_created, by: createdBy };
  const changed = last
    ? last.n > 1
      ? { at: last.at, by: last.by, what: ACTION_LABELS[last.action] }
      : undefined
    : record.audit_info.timestamp_last_updated
      ? { at: record.audit_info.timestamp_last_updated, by: updatedBy, what: undefined }
      : undefined;
  return (
    <dl class="facts" data-testid="record-facts">
      <dt>Version</dt>
      <dd>
        {record.version}
        {last && <div class="cell-sub">#{last.n} in the history</div>}
      </dd>
      <dt>Created</dt>
      <dd>
        <DateTime value={created.at} />
        {created.by && <div class="cell-sub">by {created.by}</div>}
      </dd>
      <dt>Last change</dt>
      <dd>
        {changed ? (
          <>
            <DateTime value={changed.at} />
            <div class="cell-sub">
              {changed.what && `${changed.what} `}
              {changed.by && `by ${changed.by}`}
            </div>
          </>
        ) : (
          <span class="muted">None since it was created</span>
        )}
      </dd>
    </dl>
  );
}

/**
 * A deleted record, reached by its address: its history stays readable, and an editor can restore
 * it (with a reason). Any other failure to load the record is shown as it is.
 */
export function DeletedRecordView({
  historyId,
  recordId,
  error,
  onRestored,
}: {
  historyId: string;
  recordId: string;
  error: unknown;
  onRestored: () => void;
}) {
  const can = useCan();
  const gone = error instanceof ApiError && error.status === 404;
  const history = useAsync(
    () =>
      gone ? api.get<RecordHistoryView>(`/records/${recordId}/history`, { limit: 1 }) : Promise.resolve(null),
    [recordId, gone],
  );
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [restoreError, setRestoreError] = useState<string>();
  useTitle(history.data ? `${history.data.name} (deleted)` : 'Record');

  const crumbs = topicCrumbs(
    history.data?.topic?.historyId ?? historyId,
    history.data?.topic?.name ?? 'Topic',
    true,
  );
  if (!gone || (history.error !== undefined && !history.data)) {
    return (
      <>
        <PageHeader title="Record" crumbs={crumbs} />
        <ErrorNotice error={error} />
      </>
    );
  }
  if (!history.data) return <Loading />;
  const h = history.data;
  if (!h.deleted) {
    return (
      <Notice kind="info" title="This record was restored meanwhile">
        <button type="button" class="button button-small" onClick={onRestored}>
          Show the record
        </button>
      </Notice>
    );
  }

  const restore = async () => {
    setBusy(true);
    setRestoreError(undefined);
    try {
      await api.post<ServiceRecord>(`/records/${recordId}/restore`, {
        change_reason: reason.trim() || undefined,
      });
      setAsking(false);
      onRestored();
    } catch (failure) {
      setRestoreError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeader
        title={h.name}
        crumbs={crumbs}
        actions={
          can('records:write') && (
            <button type="button" class="button button-primary" onClick={() => setAsking(true)}>
              Restore
            </button>
          )
        }
      >
        <div class="header-badges">
          <Badge kind="danger">Deleted</Badge>
        </div>
      </PageHeader>
      <Notice kind="warning" title="This record was deleted">
        Its history stays readable below.{' '}
        {can('records:write')
          ? 'Restore brings it back with its last data and the same id; its links stay deleted.'
          : 'An editor can restore it.'}
      </Notice>
      <HistoryPanel historyId={historyId} recordId={recordId} />
      <ConfirmDialog
        open={asking}
        title={`Restore ${h.name}?`}
        confirmLabel="Restore record"
        tone="primary"
        busy={busy}
        onCancel={() => setAsking(false)}
        onConfirm={() => void restore()}
      >
        {restoreError && (
          <Notice kind="error" title="The record was not restored">
            {restoreError}
          </Notice>
        )}
        <p>The record comes back as its last version was, under its topic’s current revision.</p>
        <ReasonField
          id="restore-reason"
          label="Reason for restoring (optional)"
          value={reason}
          onValue={setReason}
        />
      </ConfirmDialog>
    </>
  );
}

/** One past version of a record: read-only, in the form it was filled in with, and what it changed. */
export function RecordVersionPage({
  historyId,
  recordId,
  n,
}: {
  historyId: string;
  recordId: string;
  n: number;
}) {
  const detail = useAsync(
    () => api.get<RecordVersionDetail>(`/records/${recordId}/versions/${n}`),
    [recordId, n],
  );
  useTitle(detail.data ? `${detail.data.record.name}, version #${n}` : 'Record version');
  const topicHistory = detail.data?.topic?.historyId ?? historyId;
  const crumbs = [
    ...topicCrumbs(topicHistory, detail.data?.topic?.name ?? 'Topic', true),
    { href: paths.record(topicHistory, recordId), label: detail.data?.record.name ?? 'Record' },
  ];
  if (detail.error !== undefined) {
    return (
      <>
        <PageHeader title={`Version #${n}`} crumbs={crumbs} />
        <ErrorNotice error={detail.error} onRetry={detail.reload} />
      </>
    );
  }
  if (!detail.data) return <Loading />;
  const { version, record, topic, values } = detail.data;
  return (
    <>
      <PageHeader
        title={`${record.name}, version #${version.n}`}
        crumbs={crumbs}
        actions={
          <Link class="button" href={paths.record(topicHistory, recordId)}>
            Back to the record
          </Link>
        }
      >
        <VersionHeading version={version} />
      </PageHeader>
      <Notice kind="info" title="A past version, read only">
        This is the record as this change left it (record version {version.version}).
        {version.reason && <> Reason given: “{version.reason}”.</>}
      </Notice>
      <div class="record-layout">
        <div class="record-main">
          <section class="panel" aria-labelledby="version-form-title">
            <h2 id="version-form-title" class="panel-title">
              Form
            </h2>
            {topic ? (
              <FormView key={`version-${version.n}`} schema={topic.schema} data={record.data} readOnly />
            ) : (
              <Notice kind="warning">The knowledge topic revision of this version is gone.</Notice>
            )}
          </section>
          <section class="panel" aria-labelledby="version-changes-title">
            <h2 id="version-changes-title" class="panel-title">
              What this change did
            </h2>
            <ChangesTable changes={version.changes} testId="version-changes" />
          </section>
        </div>
        <aside class="record-side">
          <section class="panel" aria-labelledby="version-values-title">
            <h2 id="version-values-title" class="panel-title">
              Values then
            </h2>
            <ValuesList values={values} testId="version-values" />
          </section>
        </aside>
      </div>
    </>
  );
}
