import { useEffect, useRef, useState } from 'preact/hooks';
import type { RecordDetail, ServiceRecord, ValidationErrorItem } from '@rxs/web-api';
import { api, ApiError, errorMessage, withQuery } from '../api';
import {
  Badge,
  ConfirmDialog,
  CopyButton,
  ErrorNotice,
  Field,
  IdField,
  Link,
  Loading,
  Notice,
  PageHeader,
} from '../components/ui';
import { ReasonField } from '../components/reason-field';
import { FormView, type FormHandle } from '../forms/form-view';
import { useAsync, useTitle, useTopic } from '../hooks';
import { navigate, paths, topicCrumbs, useLocation } from '../router';
import { useCan } from '../session';
import { DeletedRecordView, HistoryPanel, RecordFacts, ValuesList } from './record-history';
import { LinksPanel } from './record-links';

/** Problems of a save: those placed on form fields, the name's, and the rest for a banner. */
interface SaveProblems {
  name?: string;
  other: ValidationErrorItem[];
  placed: number;
  message?: string;
}

/** Shows a failed save: 422 items on their fields, anything else as a sentence. */
function problemsOf(error: unknown, form: FormHandle | undefined): SaveProblems {
  if (!(error instanceof ApiError) || error.status !== 422 || error.items.length === 0) {
    return { other: [], placed: 0, message: errorMessage(error) };
  }
  const nameItems = error.items.filter((item) => item.loc[0] === 'body' && item.loc[1] === 'name');
  const rest = error.items.filter((item) => !nameItems.includes(item));
  const unplaced = form ? form.showServerErrors(rest) : rest;
  return {
    name: nameItems.map((item) => item.msg).join(' ') || undefined,
    other: unplaced,
    placed: rest.length - unplaced.length,
  };
}

function ProblemsNotice({ problems }: { problems: SaveProblems }) {
  if (problems.message)
    return (
      <Notice kind="error" title="The record was not saved">
        {problems.message}
      </Notice>
    );
  const count = problems.placed + problems.other.length + (problems.name ? 1 : 0);
  return (
    <Notice kind="error" title="The record was not saved">
      <p data-testid="validation-summary">
        The server found {count === 1 ? '1 problem' : `${count} problems`}
        {problems.placed === 0
          ? '.'
          : problems.placed === count
            ? count === 1
              ? '; it is marked on its field below.'
              : '; they are marked on the fields below.'
            : `; ${problems.placed === 1 ? 'one is' : `${problems.placed} are`} marked on the fields below.`}
      </p>
      {problems.other.length > 0 && (
        <ul>
          {problems.other.map((item, index) => (
            <li key={index}>
              {item.msg} <code>{item.loc.join('.')}</code>
            </li>
          ))}
        </ul>
      )}
    </Notice>
  );
}

/**
 * Sends a record form: collects the data from form-js and hands it to `send`; a failure is shown
 * with its 422 items on the fields they concern. The server is the judge of the data.
 */
function useRecordSubmit(form: { current?: FormHandle }) {
  const [busy, setBusy] = useState(false);
  const [problems, setProblems] = useState<SaveProblems>();
  const submit = async (send: (data: Record<string, unknown> | undefined) => Promise<void>) => {
    if (busy) return;
    setBusy(true);
    setProblems(undefined);
    form.current?.clearErrors();
    try {
      await send(form.current?.collect());
    } catch (error) {
      setProblems(problemsOf(error, form.current));
    } finally {
      setBusy(false);
    }
  };
  return { busy, problems, clearProblems: () => setProblems(undefined), submit };
}

export function RecordCreatePage({ historyId }: { historyId: string }) {
  const can = useCan();
  const topic = useTopic(historyId);
  useTitle(topic.data ? `New record of ${topic.data.name}` : 'New record');
  const [name, setName] = useState('');
  const [autoNumber, setAutoNumber] = useState(false);
  const form = useRef<FormHandle>();
  const { busy, problems, submit: send } = useRecordSubmit(form);

  if (topic.error !== undefined) return <ErrorNotice error={topic.error} onRetry={topic.reload} />;
  if (!topic.data) return <Loading />;
  const t = topic.data;
  const crumbs = topicCrumbs(t.historyId, t.name, true);
  if (!can('records:write')) {
    return (
      <>
        <PageHeader title="New record" crumbs={crumbs} />
        <Notice kind="warning" title="Your role cannot create records">
          Viewers read records. Ask an owner or admin for the editor role.
        </Notice>
      </>
    );
  }
  if (!t.currentRevisionId) {
    return (
      <>
        <PageHeader title="New record" crumbs={crumbs} />
        <Notice kind="info" title="This topic is not approved yet">
          Approve its draft first: records are created with the form of an approved revision.
        </Notice>
      </>
    );
  }
  const revisionId = t.currentRevisionId;

  const submit = (event?: Event) => {
    event?.preventDefault();
    void send(async (data) => {
      const created = await api.post<ServiceRecord>('/records', {
        name: name.trim(),
        form: {},
        data: data ?? {},
        context: { knowledge_unit_topic_id: revisionId },
        auto_number: autoNumber || undefined,
      });
      navigate(`${paths.record(t.historyId, created._id)}?created=1`);
    });
  };

  return (
    <>
      <PageHeader title={`New record of ${t.name}`} crumbs={crumbs}>
        <p class="page-lead">
          With the form of revision <code>{revisionId}</code> (v{t.revision.version}).
        </p>
      </PageHeader>
      {problems && <ProblemsNotice problems={problems} />}
      <form class="record-form" onSubmit={submit} noValidate>
        <div class="panel">
          <Field
            label="Record name"
            id="record-name"
            error={problems?.name}
            hint={autoNumber ? 'A number is appended: “Name-1”, “Name-2”, …' : 'For example REQ-042.'}
          >
            <input
              id="record-name"
              value={name}
              maxLength={500}
              aria-invalid={problems?.name ? true : undefined}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </Field>
          <label class="checkbox">
            <input
              type="checkbox"
              checked={autoNumber}
              onChange={(e) => setAutoNumber(e.currentTarget.checked)}
            />
            Number the name automatically
          </label>
        </div>
        <div class="panel">
          <FormView
            key={revisionId}
            schema={t.revision.knowledge_topic_schema}
            onReady={(handle) => (form.current = handle)}
            onSubmitRequest={() => void submit()}
          />
        </div>
        <div class="button-row sticky-actions">
          <button type="submit" class="button button-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create record'}
          </button>
          <Link class="button" href={paths.records(t.historyId)}>
            Cancel
          </Link>
        </div>
      </form>
    </>
  );
}

export function RecordPage({ historyId, recordId }: { historyId: string; recordId: string }) {
  const can = useCan();
  const location = useLocation();
  const detail = useAsync(() => api.get<RecordDetail>(`/records/${recordId}`), [recordId]);
  useTitle(detail.data?.record.name ?? 'Record');
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState('');
  const [deleting, setDeleting] = useState(false);
  const [saved, setSaved] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [deleteError, setDeleteError] = useState<string>();
  const [formKey, setFormKey] = useState(0);
  const [reason, setReason] = useState('');
  const [deleteReason, setDeleteReason] = useState('');
  const form = useRef<FormHandle>();
  const { busy, problems, clearProblems, submit: send } = useRecordSubmit(form);
  // "Record created" is said once: the address drops its ?created at once (without a navigation),
  // so a reload or a copied link does not say it again.
  const [createdId, setCreatedId] = useState(() => (location.query.has('created') ? recordId : undefined));
  useEffect(() => {
    const url = new URL(window.location.href);
    if (!url.searchParams.has('created')) return;
    url.searchParams.delete('created');
    window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
  }, []);

  if (detail.error !== undefined) {
    // A deleted record keeps its address: its history, and a restore for editors.
    return (
      <DeletedRecordView
        historyId={historyId}
        recordId={recordId}
        error={detail.error}
        onRestored={detail.reload}
      />
    );
  }
  if (!detail.data) return <Loading />;
  const { record, topic, values } = detail.data;
  const topicHistory = topic?.historyId ?? historyId;
  const crumbs = topicCrumbs(topicHistory, topic?.name ?? 'Topic', true);
  const writable = can('records:write') && !record.read_only;

  const startEditing = () => {
    // The handle of the form shown before is gone: until the new form is ready, nothing is collected.
    form.current = undefined;
    setName(record.name);
    setReason('');
    clearProblems();
    setSaved(false);
    setEditing(true);
    setFormKey((k) => k + 1);
  };

  const save = (event?: Event) => {
    event?.preventDefault();
    void send(async (data) => {
      if (topic && data === undefined) throw new Error('The form is still loading: save again in a moment.');
      await api.patch<ServiceRecord>(`/records/${record._id}`, {
        name: name.trim(),
        data: data ?? record.data,
        version: record.version,
        change_reason: reason.trim() || undefined,
      });
      setEditing(false);
      setSaved(true);
      setFormKey((k) => k + 1);
      detail.reload();
    });
  };

  const remove = async () => {
    setDeleting(true);
    try {
      await api.delete(withQuery(`/records/${record._id}`, { change_reason: deleteReason.trim() }));
      // The records page confirms it, with the way back to the history (and the restore).
      navigate(withQuery(paths.records(topicHistory), { deleted: record._id, name: record.name }));
    } catch (error) {
      setDeleteError(errorMessage(error));
      setConfirmDelete(false);
    } finally {
      setDeleting(false);
    }
  };

  return (
    <>
      <PageHeader
        title={record.name}
        crumbs={crumbs}
        actions={
          !editing && (
            <>
              {writable && (
                <button type="button" class="button button-primary" onClick={startEditing}>
                  Edit
                </button>
              )}
              {writable && (
                <button
                  type="button"
                  class="button button-danger-outline"
                  onClick={() => {
                    setDeleteReason('');
                    setConfirmDelete(true);
                  }}
                >
                  Delete
                </button>
              )}
            </>
          )
        }
      >
        <div class="header-badges">
          <Badge>Version {record.version}</Badge>
          {record.read_only && <Badge kind="warning">Read-only</Badge>}
        </div>
      </PageHeader>
      {createdId === recordId && !saved && !editing && (
        <Notice kind="success" title="Record created" onDismiss={() => setCreatedId(undefined)} />
      )}
      {saved && <Notice kind="success" title="Changes saved" onDismiss={() => setSaved(false)} />}
      {deleteError && (
        <Notice kind="error" title="The record was not deleted">
          {deleteError}
        </Notice>
      )}
      {problems && <ProblemsNotice problems={problems} />}
      {topic && topic.currentRevisionId && topic.currentRevisionId !== topic.revisionId && (
        <Notice kind="warning" title="This record belongs to an earlier revision">
          The topic's current revision is <code>{topic.currentRevisionId}</code>.
        </Notice>
      )}

      <div class="record-layout">
        <div class="record-main">
          {editing ? (
            <form class="record-form" onSubmit={save} noValidate>
              <div class="panel">
                <Field label="Record name" id="record-name" error={problems?.name}>
                  <input
                    id="record-name"
                    value={name}
                    maxLength={500}
                    onInput={(e) => setName(e.currentTarget.value)}
                  />
                </Field>
                <ReasonField id="record-reason" value={reason} onValue={setReason} />
              </div>
              <div class="panel">
                {topic ? (
                  <FormView
                    key={`edit-${formKey}`}
                    schema={topic.schema}
                    data={record.data}
                    onReady={(handle) => (form.current = handle)}
                    onSubmitRequest={() => void save()}
                  />
                ) : (
                  <Notice kind="warning">
                    The record's knowledge topic revision is gone; its data cannot be edited.
                  </Notice>
                )}
              </div>
              <div class="button-row sticky-actions">
                <button type="submit" class="button button-primary" disabled={busy}>
                  {busy ? 'Saving…' : 'Save changes'}
                </button>
                <button
                  type="button"
                  class="button"
                  onClick={() => {
                    setEditing(false);
                    clearProblems();
                    setFormKey((k) => k + 1);
                  }}
                >
                  Cancel
                </button>
              </div>
            </form>
          ) : (
            <section class="panel" aria-labelledby="form-title">
              <h2 id="form-title" class="panel-title">
                Form
              </h2>
              {topic ? (
                <FormView key={`view-${formKey}`} schema={topic.schema} data={record.data} readOnly />
              ) : (
                <Notice kind="warning">The record's knowledge topic revision is gone.</Notice>
              )}
            </section>
          )}
          <LinksPanel recordId={record._id} topicHistoryId={topic?.historyId ?? null} />
          <HistoryPanel historyId={topicHistory} recordId={record._id} reloadKey={record.version} />
        </div>
        <aside class="record-side">
          <section class="panel" aria-labelledby="facts-title">
            <h2 id="facts-title" class="panel-title">
              Details
            </h2>
            <IdField label="Record id" id={record._id} testId="record-id" />
            {topic && (
              <IdField
                label="KT revision id"
                id={topic.revisionId}
                hint="The record's context.knowledge_unit_topic_id"
              />
            )}
            <RecordFacts
              record={record}
              createdBy={detail.data.createdBy}
              updatedBy={detail.data.updatedBy}
            />
          </section>
          <section class="panel" aria-labelledby="exported-title">
            <h2 id="exported-title" class="panel-title">
              As exported
            </h2>
            <ValuesList values={values} />
            <div class="button-row">
              <CopyButton text={JSON.stringify(record.data, null, 2)} label="Copy data JSON" />
            </div>
          </section>
        </aside>
      </div>

      <ConfirmDialog
        open={confirmDelete}
        title={`Delete ${record.name}?`}
        confirmLabel="Delete record"
        busy={deleting}
        onCancel={() => setConfirmDelete(false)}
        onConfirm={() => void remove()}
      >
        <p>
          The record and the traces that link it to other records are deleted. Its history stays readable at
          this address, and an editor can restore the record; its links stay deleted.
        </p>
        <ReasonField
          id="delete-reason"
          label="Reason for deleting (optional)"
          value={deleteReason}
          onValue={setDeleteReason}
        />
      </ConfirmDialog>
    </>
  );
}
