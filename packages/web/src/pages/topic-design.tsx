import { useEffect, useRef, useState } from 'preact/hooks';
import type { FormSchema, KnowledgeTopicRevision, KnowledgeTopicType, TopicDetail } from '@rxs/web-api';
import { api, ApiError, errorMessage } from '../api';
import { ApprovalImpactNotice } from '../components/approval-impact';
import { ApproveDialog, type ApprovalSignature } from '../components/approve-dialog';
import { CopyButton, ErrorNotice, Field, Link, Loading, Notice, PageHeader } from '../components/ui';
import { FormDesigner, type DesignerHandle } from '../forms/form-designer';
import { FormView } from '../forms/form-view';
import { useAsync, useTitle, useTopic } from '../hooks';
import { navigate, paths, setLeaveWarning, topicCrumbs } from '../router';
import { useCan } from '../session';
import { approveDraft, openDraft } from './topic';

const EMPTY_SCHEMA: FormSchema = { type: 'default', components: [] };

/** Warns before leaving the page with unsaved edits: by an app link, a reload or closing the tab. */
function useUnsavedWarning(dirty: boolean): void {
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    setLeaveWarning('The form has unsaved changes. Leave without saving them?');
    return () => {
      window.removeEventListener('beforeunload', warn);
      setLeaveWarning(null);
    };
  }, [dirty]);
}

function DesignHelp() {
  return (
    <aside class="design-help">
      <h2>Designing the form</h2>
      <ul>
        <li>Drag fields from the palette onto the form; select one to edit it in the properties panel.</li>
        <li>
          The <strong>key</strong> is where a record stores the value. Give each field a stable semantic name
          for exports: under <em>Custom properties</em> add <code>service-key</code> with the name.
        </li>
        <li>Required, length, pattern and min/max rules are checked by the server on every record.</li>
        <li>Saving keeps the draft; approving makes it the topic's current revision.</li>
      </ul>
    </aside>
  );
}

/** Loads a form-js schema pasted as JSON into the editor. */
function SchemaImport({ onImport }: { onImport: (schema: FormSchema) => Promise<void> }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const load = async () => {
    setError(undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (failure) {
      setError(`This is not JSON: ${errorMessage(failure)}`);
      return;
    }
    const schema = (parsed as { knowledge_topic_schema?: unknown }).knowledge_topic_schema ?? parsed;
    if (!schema || typeof schema !== 'object' || !Array.isArray((schema as FormSchema).components)) {
      setError('A form-js schema is an object with a "components" list.');
      return;
    }
    try {
      await onImport(schema as FormSchema);
      setText('');
    } catch (failure) {
      setError(errorMessage(failure));
    }
  };
  return (
    <details class="snippet">
      <summary>Import a form-js schema (JSON)</summary>
      <div class="stack">
        <Field
          label="Schema JSON"
          id="schema-json"
          error={error}
          hint="A form-js schema, or a whole KT revision as GET /kt/{id} returns it."
        >
          <textarea
            id="schema-json"
            rows={6}
            spellcheck={false}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </Field>
        <div>
          <button type="button" class="button" disabled={!text.trim()} onClick={() => void load()}>
            Load into the editor
          </button>
        </div>
      </div>
    </details>
  );
}

export function NewTopicPage() {
  useTitle('New knowledge topic');
  const can = useCan();
  const [name, setName] = useState('');
  const [type, setType] = useState<KnowledgeTopicType>('multi_record');
  const [dirty, setDirty] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [nameError, setNameError] = useState<string>();
  const designer = useRef<DesignerHandle>();
  const preview = useDesignPreview(designer);
  useUnsavedWarning(dirty || name !== '');

  if (!can('kt:write')) {
    return (
      <Notice kind="warning" title="Your role cannot create topics">
        Ask an editor, admin or owner.
      </Notice>
    );
  }

  const save = async (event: Event) => {
    event.preventDefault();
    if (!name.trim()) {
      setNameError('Give the topic a name.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.post<KnowledgeTopicRevision>('/topics', {
        knowledge_topic_name: name.trim(),
        type,
        knowledge_topic_schema: designer.current?.schema() ?? EMPTY_SCHEMA,
      });
      setDirty(false);
      setName('');
      navigate(`${paths.design(created.knowledge_topic_history_id)}?created=1`, {
        replace: true,
        force: true,
      });
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeader title="New knowledge topic" crumbs={[{ href: paths.topics(), label: 'Topics' }]} />
      <form class="design-meta" onSubmit={save}>
        <Field label="Topic name" id="topic-name" error={nameError}>
          <input
            id="topic-name"
            value={name}
            maxLength={200}
            onInput={(e) => {
              setName(e.currentTarget.value);
              setNameError(undefined);
            }}
          />
        </Field>
        <Field label="Records per topic" id="topic-type">
          <select
            id="topic-type"
            value={type}
            onChange={(e) => setType(e.currentTarget.value as KnowledgeTopicType)}
          >
            <option value="multi_record">Many records (requirements, tests, risks…)</option>
            <option value="single_record">A single record</option>
          </select>
        </Field>
        <div class="design-meta-actions">
          <button type="submit" class="button button-primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save draft'}
          </button>
        </div>
      </form>
      {error !== undefined && <ErrorNotice error={error} />}
      <NarrowScreenNote />
      <div class="design-layout">
        <FormDesigner
          schema={EMPTY_SCHEMA}
          onReady={(handle) => (designer.current = handle)}
          onChange={() => {
            setDirty(true);
            preview.schedule();
          }}
        />
        <div class="design-side">
          <DesignHelp />
          <SchemaImport onImport={(schema) => designer.current?.load(schema) ?? Promise.resolve()} />
        </div>
      </div>
      <DesignPreview schema={preview.schema ?? EMPTY_SCHEMA} generation={preview.generation} />
    </>
  );
}

export function DesignPage({ historyId }: { historyId: string }) {
  const can = useCan();
  const topic = useTopic(historyId);
  const draftId = topic.data?.draftRevisionId ?? null;
  const draft = useAsync(
    () => (draftId ? api.get<KnowledgeTopicRevision>(`/revisions/${draftId}`) : Promise.resolve(null)),
    [draftId],
  );
  useTitle(topic.data ? `Form of ${topic.data.name}` : 'Form editor');
  const [name, setName] = useState<string>();
  const [dirty, setDirty] = useState(false);
  const [busy, setBusy] = useState<'save' | 'approve' | 'open'>();
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<unknown>();
  const [confirmApprove, setConfirmApprove] = useState(false);
  const designer = useRef<DesignerHandle>();
  const preview = useDesignPreview(designer);
  useUnsavedWarning(dirty);
  const justCreated = new URLSearchParams(window.location.search).has('created');

  if (topic.error !== undefined) return <ErrorNotice error={topic.error} onRetry={topic.reload} />;
  if (!topic.data || draft.loading) return <Loading />;
  const t = topic.data;
  const crumbs = topicCrumbs(t.historyId, t.name);

  if (!can('kt:write')) {
    return (
      <>
        <PageHeader title="Form editor" crumbs={crumbs} />
        <Notice kind="warning" title="Your role cannot edit forms">
          Ask an editor, admin or owner to change this topic's form.
        </Notice>
      </>
    );
  }

  if (!draft.data) {
    return (
      <>
        <PageHeader title={`Form of ${t.name}`} crumbs={crumbs} />
        {error !== undefined && <ErrorNotice error={error} />}
        <Notice kind="info" title="No draft is open">
          <p>
            The approved revision v{t.revision.version} cannot change. Open a draft from it, edit the draft,
            then approve it: that re-approval gives the topic a new revision id.
          </p>
          <button
            type="button"
            class="button button-primary"
            disabled={busy === 'open'}
            onClick={() => {
              setBusy('open');
              openDraft(t)
                .then(topic.reload, setError)
                .finally(() => setBusy(undefined));
            }}
          >
            Open a draft from v{t.revision.version}
          </button>
        </Notice>
      </>
    );
  }
  const d = draft.data;
  const currentName = name ?? d.knowledge_topic_name;

  const save = async (): Promise<boolean> => {
    setError(undefined);
    setSaved(false);
    try {
      await api.patch(`/revisions/${d._id}`, {
        knowledge_topic_name: currentName.trim() || d.knowledge_topic_name,
        knowledge_topic_schema: designer.current?.schema() ?? d.knowledge_topic_schema,
      });
      setDirty(false);
      setSaved(true);
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    }
  };

  // A failed approval stays in the dialog (a wrong password is typed again there); a failed save
  // closes it, and the page shows why.
  const approve = async (signature: ApprovalSignature) => {
    setBusy('approve');
    try {
      if ((dirty || name !== undefined) && !(await save())) {
        setConfirmApprove(false);
        return;
      }
      await approveDraft(t.historyId, d._id, signature);
      setConfirmApprove(false);
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <>
      <PageHeader
        title={`Form of ${t.name}`}
        crumbs={crumbs}
        actions={
          <>
            <span class="save-state" role="status">
              {dirty ? 'Unsaved changes' : saved ? 'Draft saved' : ''}
            </span>
            <button
              type="button"
              class="button"
              disabled={busy !== undefined}
              onClick={() => {
                setBusy('save');
                void save().finally(() => setBusy(undefined));
              }}
            >
              {busy === 'save' ? 'Saving…' : 'Save draft'}
            </button>
            {can('kt:approve') && (
              <button
                type="button"
                class="button button-primary"
                disabled={busy !== undefined}
                onClick={() => setConfirmApprove(true)}
              >
                Approve…
              </button>
            )}
          </>
        }
      >
        <p class="page-lead">
          Draft v{d.version}, revision <code>{d._id}</code>.{' '}
          {t.currentRevisionId ? (
            <>
              Current: v{t.revision.version}, <code>{t.currentRevisionId}</code>.
            </>
          ) : (
            'Not approved yet.'
          )}
        </p>
      </PageHeader>
      {justCreated && !dirty && !saved && (
        <Notice kind="success" title="Draft created">
          Design the form, save it, and approve it when it is ready.
        </Notice>
      )}
      {error !== undefined && (
        <ErrorNotice
          error={error instanceof ApiError && error.status === 409 ? `${errorMessage(error)}` : error}
        />
      )}
      <div class="design-meta">
        <Field label="Topic name" id="topic-name">
          <input
            id="topic-name"
            value={currentName}
            maxLength={200}
            onInput={(e) => {
              setName(e.currentTarget.value);
              setDirty(true);
            }}
          />
        </Field>
      </div>
      <NarrowScreenNote />
      <div class="design-layout">
        <FormDesigner
          key={d._id}
          schema={d.knowledge_topic_schema}
          onReady={(handle) => (designer.current = handle)}
          onChange={() => {
            setDirty(true);
            setSaved(false);
            preview.schedule();
          }}
        />
        <div class="design-side">
          <DesignHelp />
          <SchemaImport onImport={(schema) => designer.current?.load(schema) ?? Promise.resolve()} />
          <p>
            <Link href={paths.topic(t.historyId)}>Back to the topic</Link>
          </p>
        </div>
      </div>
      <DesignPreview schema={preview.schema ?? d.knowledge_topic_schema} generation={preview.generation} />
      <ApproveDialog
        open={confirmApprove}
        title={`Approve draft v${d.version}?`}
        confirmLabel={dirty ? 'Save, sign and approve' : 'Sign and approve'}
        onCancel={() => setConfirmApprove(false)}
        onApprove={approve}
      >
        {t.currentRevisionId ? (
          <>
            <p>
              This re-approves the topic: the draft becomes the current revision with a new revision id, and
              the topic's {t.recordCount.toLocaleString('en')} records move to it.
            </p>
            <ApprovalImpactNotice
              open={confirmApprove}
              revisionId={d._id}
              schema={() => designer.current?.schema()}
            />
          </>
        ) : (
          <p>The draft becomes the topic's first approved revision; records can be created with its form.</p>
        )}
      </ApproveDialog>
    </>
  );
}

/**
 * The design as the preview shows it: taken from the designer a moment after each change (form-js
 * reports every keystroke in the properties panel), `generation` counting the takes. Until the
 * first change, `schema` is undefined: the page previews the design it loaded.
 */
function useDesignPreview(designer: { current?: DesignerHandle }) {
  const [taken, setTaken] = useState<{ schema: FormSchema; generation: number }>();
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);
  return {
    schema: taken?.schema,
    generation: taken?.generation ?? 0,
    schedule() {
      clearTimeout(timer.current);
      timer.current = setTimeout(() => {
        const schema = designer.current?.schema();
        if (schema) setTaken((previous) => ({ schema, generation: (previous?.generation ?? 0) + 1 }));
      }, 400);
    },
  };
}

/**
 * What the form-js playground shows beside the editor: the form as a record page will show it, and
 * the schema JSON that is saved, both following the design as it changes.
 */
function DesignPreview({ schema, generation }: { schema: FormSchema; generation: number }) {
  const json = JSON.stringify(schema, null, 2);
  return (
    <section class="panel design-preview" aria-labelledby="preview-title" data-testid="design-preview">
      <h2 id="preview-title" class="panel-title">
        Preview
      </h2>
      <p class="muted">The form as records will show it, following the design as you change it.</p>
      {(schema.components ?? []).length === 0 ? (
        <p class="muted" data-testid="design-preview-empty">
          No fields yet: the fields you drag onto the form appear here.
        </p>
      ) : (
        <FormView key={generation} schema={schema} />
      )}
      <details data-testid="design-schema">
        <summary>Schema JSON</summary>
        <CopyButton text={json} label="Copy JSON" />
        <pre class="schema-json">
          <code>{json}</code>
        </pre>
      </details>
    </section>
  );
}

/** Shown below 900 px instead of the designer, whose properties panel would be off screen. */
function NarrowScreenNote() {
  return (
    <p class="narrow-screen-note notice notice-info" role="note">
      The form designer needs a wider screen (at least 900 pixels): its properties panel does not fit here.
      Design the form on a tablet in landscape or a computer.
    </p>
  );
}
